"""Tables as LaTeX `tabular` fragments a manuscript `\\input`s: plain LaTeX (no package
beyond the kernel), every cell escaped, and characters outside ASCII spelled for pdflatex."""

from __future__ import annotations

import math
import unicodedata

import pandas as pd

_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}",
}  # fmt: skip
_UNICODE = {
    "“": "``", "”": "''", "‘": "`", "’": "'", "−": "-", "–": "--", "—": "---",
    "×": r"$\times$", "≥": r"$\geq$", "≤": r"$\leq$", "π": r"$\pi$", "κ": r"$\kappa$",
    "α": r"$\alpha$", "…": r"\dots{}", "★": "*", "·": r"$\cdot$",
}  # fmt: skip


def escape(text: str) -> str:
    out = []
    for ch in str(text):
        if ch in _SPECIAL:
            out.append(_SPECIAL[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        elif ord(ch) < 128:
            out.append(ch)
        else:  # accents dropped; anything else pdflatex cannot set becomes '?'
            plain = unicodedata.normalize("NFKD", ch).encode("ascii", "ignore").decode()
            out.append(escape(plain) if plain else "?")
    return "".join(out)


def cell(value: object, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.{digits}f}" if abs(value) >= 10**-digits or value == 0 else f"{value:.1e}"
    return escape(str(value))


def tabular(frame: pd.DataFrame, *, digits: int = 2, caption: str = "") -> str:
    """`frame` as a tabular (numbers right-aligned), a comment line with `caption` first."""
    align = "".join("r" if pd.api.types.is_numeric_dtype(frame[c]) else "l" for c in frame)
    lines = [f"% {escape(caption)}"] if caption else []
    lines += [rf"\begin{{tabular}}{{{align}}}", r"\hline"]
    lines.append(" & ".join(escape(str(c)) for c in frame.columns) + r" \\")
    lines.append(r"\hline")
    for row in frame.itertuples(index=False):
        lines.append(" & ".join(cell(v, digits) for v in row) + r" \\")
    lines += [r"\hline", r"\end{tabular}"]
    return "\n".join(lines) + "\n"
