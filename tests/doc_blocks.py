"""The command blocks of the Markdown docs that are marked runnable, read for
tests/test_doc_commands.py (the docs are the test).

The convention, documented in the README's "Tests": a fenced `bash`, `console` or `python`
block runs when the line right above its fence is

    <!-- runnable -->                  or
    <!-- runnable: needs Rscript -->   (runs where the named executables are installed)

In a `bash` block every line is a command (`\\` joins lines; a ` # ` comment ends one). In a
`console` block the commands are the `$ ` lines and the lines under one are the output it
shows: each must be a printed line of the real output, where `…` stands for any text and a
line that is only `…` shows that output was left out. A command whose shown output has an
`error:` line (or Django's `CommandError:`) must fail; `echo $?` sees the status of the
command before it. A `python` block is run as a script. Unmarked blocks are left alone:
those that install, serve until Ctrl-C, take minutes, or show timings."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

MARK = re.compile(r"^<!--\s*runnable(?::\s*needs\s+(?P<needs>[^>]*?))?\s*-->\s*$")
FENCE = re.compile(r"^```(?P<lang>\w*)\s*$")
LANGS = ("bash", "console", "python")
ELIDED = "…"


@dataclass
class Command:
    line: str
    shown: list[str] = field(default_factory=list)  # output lines shown under it

    def must_fail(self) -> bool:
        return any(s.startswith(("error:", "CommandError:")) or ": error:" in s for s in self.shown)


@dataclass
class Block:
    lang: str
    line: int  # where its fence is (1-based), for messages
    body: str
    needs: list[str] = field(default_factory=list)

    def commands(self) -> list[Command]:
        """The commands of a bash or console block, in order."""
        out: list[Command] = []
        for raw in re.sub(r"[ \t]*\\\n\s*", " ", self.body).splitlines():
            if self.lang == "bash":
                line = raw.strip()
                if line and not line.startswith("#"):
                    out.append(Command(re.sub(r"\s+#\s.*$", "", line).strip()))
            elif raw.startswith("$ "):
                out.append(Command(" ".join(raw[2:].split())))
            elif out and raw.strip():
                out[-1].shown.append(raw.rstrip())
        return out


def runnable_blocks(text: str) -> list[Block]:
    """The marked blocks of a Markdown text, in order; a mark above anything else than a
    bash, console or python fence is an error (a mark that would silently run nothing)."""
    lines = text.splitlines()
    blocks: list[Block] = []
    i = 0
    while i < len(lines):
        mark = MARK.match(lines[i])
        fence = FENCE.match(lines[i + 1]) if mark and i + 1 < len(lines) else None
        if mark and (fence is None or fence["lang"] not in LANGS):
            raise ValueError(f"line {i + 1}: a runnable mark must stand right above a fence "
                             f"of {', '.join(LANGS)}")  # fmt: skip
        if mark and fence:
            end = next((j for j in range(i + 2, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise ValueError(f"line {i + 2}: the block is never closed")
            needs = (mark["needs"] or "").replace(",", " ").split()
            blocks.append(Block(fence["lang"], i + 2, "\n".join(lines[i + 2 : end]) + "\n", needs))
            i = end
        i += 1
    return blocks


#: a p-value printed below 1e-14 (`2.78e-16`): at the floor of double precision, where the
#: order of a threaded BLAS sum decides whether it prints as that or as mgcv's `<2e-16`
_FLOOR_P = re.compile(r"(?<![\w.])(?:<2e-16|\d(?:\.\d+)?e-(?:1[4-9]|[2-9]\d|\d{3}))(?![\w.])")


def _canonical(line: str) -> str:
    """The line with p-values at the precision floor written as `<2e-16` and runs of spaces
    as one (a column one character wider or narrower)."""
    return " ".join(_FLOOR_P.sub("<2e-16", line).split())


def shown_matches(shown: str, printed: list[str]) -> bool:
    """Whether a shown output line is among the printed ones (`…` stands for any text)."""
    if shown.strip() == ELIDED:
        return True
    printed = [_canonical(line) for line in printed]
    shown = _canonical(shown)
    if ELIDED not in shown:
        return shown in printed
    pattern = re.compile(".*".join(re.escape(part) for part in shown.split(ELIDED)))
    return any(pattern.fullmatch(line) for line in printed)
