"""What a participant page must look like on a phone, measured in the browser: the page and
the plan comparison fit the width (no sideways scrolling), changed plan items are marked with
text, legends sit inside their fieldsets, option rows and fields are large enough to touch,
codes stay on one line, and the consent box sits beside its label.
"""

from __future__ import annotations

from typing import Any

#: a touch row's height (WCAG 2.5.8 asks 24 CSS px; 44 is the platforms' guideline)
ROW_PX = 44

PROBLEMS_JS = """
const out = [], rowPx = arguments[0];
const vw = document.documentElement.clientWidth;
const box = el => el.getBoundingClientRect();
const text = el => (el.textContent || '').trim().replace(/\\s+/g, ' ').slice(0, 40);
if (document.documentElement.scrollWidth > vw + 1)
  out.push(`the page scrolls sideways (${document.documentElement.scrollWidth} px in ${vw})`);
for (const w of document.querySelectorAll('.table-wrap'))
  if (w.scrollWidth > w.clientWidth + 1) out.push(`the plan table scrolls sideways`);
for (const row of document.querySelectorAll('table.plan tr.changed')) {
  const mark = row.querySelector('.change-mark');
  if (!mark || !mark.innerText.trim() || box(mark).width === 0)
    out.push(`changed item without a visible text mark: ${text(row)}`);
}
for (const f of document.querySelectorAll('fieldset')) {
  const legend = f.querySelector(':scope > legend');
  if (!legend) continue;
  const fb = box(f), lb = box(legend), top = parseFloat(getComputedStyle(f).borderTopWidth);
  if (lb.top < fb.top + top - 0.5 || lb.right > fb.right + 0.5 || lb.left < fb.left - 0.5)
    out.push(`legend crosses its fieldset's border: ${text(legend)}`);
}
for (const input of document.querySelectorAll('input[type=radio], input[type=checkbox]')) {
  const row = input.closest('label') || input;
  if (box(row).height < rowPx) out.push(`option row ${input.name}=${input.value}: ${box(row).height} px high`);
  if (box(input).width < 24 || box(input).height < 24) out.push(`option ${input.name}=${input.value}: under 24 px`);
}
for (const field of document.querySelectorAll('input[type=email], input[type=text], input[type=number], textarea')) {
  const fb = box(field), size = parseFloat(getComputedStyle(field).fontSize);
  const room = box(field.closest('.field') || field.parentElement).width;
  if (fb.height < rowPx || size < 16 || fb.width < 0.9 * room)
    out.push(`field ${field.name}: ${Math.round(fb.width)}x${Math.round(fb.height)} px, ${size} px text`);
}
for (const code of document.querySelectorAll('.code strong')) {
  if (code.getClientRects().length > 1 || getComputedStyle(code).whiteSpace !== 'nowrap'
      || box(code).right > vw)
    out.push(`the code ${text(code)} may wrap or overflow`);
}
const agree = document.querySelector('input[name=agree]');
if (agree) {
  const label = agree.closest('label') || document.querySelector(`label[for="${agree.id}"]`);
  const ab = box(agree), lb = label ? box(label) : null;
  const mid = ab.top + ab.height / 2;
  if (!lb || mid < lb.top || mid > lb.bottom || lb.left > ab.right + 16)
    out.push('the consent box is not beside its label');
}
return out;
"""


def phone_problems(driver: Any) -> list[str]:
    """What does not fit a phone on the driver's page (empty: nothing)."""
    return list(driver.execute_script(PROBLEMS_JS, ROW_PX))
