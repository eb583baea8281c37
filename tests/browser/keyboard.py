"""Moving through a page with the keyboard alone, as a participant without a mouse does:
TAB to the next control (each one reached must show where the focus is), SPACE to tick or
choose, ENTER to press a button, and typing into a field."""

from __future__ import annotations

from typing import Any

#: TAB presses allowed to reach the next control on a page
MAX_TABS = 80

FOCUS_JS = """
const el = document.activeElement;
if (!el || el === document.body) return ['', ''];
const style = getComputedStyle(el);
const seen = el.matches(':focus-visible') && style.outlineStyle !== 'none'
  && parseFloat(style.outlineWidth) >= 2;
return [el.matches(arguments[0]) ? 'match' : '', seen ? '' : el.outerHTML.slice(0, 120)];
"""


def press(driver: Any, keys: str) -> None:
    """Keys to whatever has the focus."""
    from selenium.webdriver.common.action_chains import ActionChains

    ActionChains(driver).send_keys(keys).perform()


def tab_to(driver: Any, selector: str) -> None:
    """TAB until the focus is on `selector`; every control passed on the way must show its
    focus (an outline of at least 2 px)."""
    from selenium.webdriver.common.keys import Keys

    for _ in range(MAX_TABS):
        press(driver, Keys.TAB)
        match, unseen = driver.execute_script(FOCUS_JS, selector)
        assert not unseen, f"the focus is not visible on {unseen}"
        if match:
            return
    raise AssertionError(f"{selector} not reached with {MAX_TABS} TAB presses")


def choose(driver: Any, selector: str) -> None:
    """TAB to a radio button or box and tick it with SPACE."""
    from selenium.webdriver.common.keys import Keys

    tab_to(driver, selector)
    press(driver, Keys.SPACE)


def type_into(driver: Any, selector: str, text: str) -> None:
    tab_to(driver, selector)
    press(driver, text)


def enter(driver: Any, selector: str = "button.next") -> None:
    """TAB to the button and press it with ENTER."""
    from selenium.webdriver.common.keys import Keys

    tab_to(driver, selector)
    press(driver, Keys.ENTER)
