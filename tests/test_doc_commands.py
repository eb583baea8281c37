"""The docs are the test: every block of README.md and docs/*.md marked runnable
(`<!-- runnable -->` right above its fence; the convention is in tests/doc_blocks.py and the
README's "Tests") runs as a reader would run it, and prints what the doc shows.

Each doc's blocks run in order, as one reader's session, in a fresh temporary folder that
holds only what a clone of the project has there: the checkout's `.venv/`, a copy of
`examples/data/` and the committed GAMM fixtures. There is no `var/` and no database: the
commands must set them up themselves (`recourse-study` migrates on first use)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.doc_blocks import Block, Command, runnable_blocks, shown_matches
from tests.services import services_required

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: what the fresh folder gets from the checkout: linked (read only) or copied
LINKED = (".venv", "tests/analysis/gamm/fixtures")
COPIED = ("examples/data",)
#: the environment of a reader who set nothing
UNSET = ("PYTHONPATH", "STUDYAPP_VAR_DIR", "DATABASE_URL", "CELERY_BROKER_URL",
         "DJANGO_SETTINGS_MODULE", "PORT")  # fmt: skip

pytestmark = pytest.mark.slow


def _docs_with_blocks() -> list[Path]:
    return [p for p in DOCS if runnable_blocks(p.read_text(encoding="utf-8"))]


def test_the_parser_reads_marked_blocks_only():
    text = (
        "```bash\nnot marked\n```\n"
        "<!-- runnable -->\n```bash\na --x 1 \\\n  --y   # note\n# only a comment\n```\n"
        "<!-- runnable: needs Rscript -->\n```console\n$ b\nok\n…\n$ c\nerror: bad\n```\n"
        "<!-- runnable -->\n```python\nprint(1)\n```\n"
    )
    bash, console, python = runnable_blocks(text)
    assert [c.line for c in bash.commands()] == ["a --x 1 --y"] and bash.needs == []
    got = console.commands()
    assert console.needs == ["Rscript"] and [c.line for c in got] == ["b", "c"]
    assert got[0].shown == ["ok", "…"] and not got[0].must_fail() and got[1].must_fail()
    assert python.lang == "python" and python.body == "print(1)\n"


def test_a_mark_above_no_block_is_an_error():
    with pytest.raises(ValueError, match="line 1: a runnable mark must stand right above"):
        runnable_blocks("<!-- runnable -->\ntext\n")


def test_shown_output_matches_printed_lines():
    printed = ["Admin: http://x/admin/  user admin  password Zq9", "done"]
    assert shown_matches("done", printed)
    assert shown_matches("Admin: http://x/admin/  user admin  password …", printed)
    assert shown_matches("…", [])
    assert not shown_matches("done.", printed) and not shown_matches("Admin: …  user bob", printed)


def test_p_values_at_the_precision_floor_match_mgcvs_floor_and_nothing_else():
    shown = "s(participant)  253.007  361.000  15.684    <2e-16 ***"
    assert shown_matches(shown, ["s(participant)  253.007  361.000  15.684  2.78e-16 ***"])
    assert not shown_matches(shown, ["s(participant)  253.007  361.000  15.684  2.78e-06 ***"])
    assert not shown_matches(shown, ["s(participant)  253.007  361.000  15.685  2.78e-16 ***"])


def test_readme_and_docs_have_runnable_blocks():
    names = {p.name for p in _docs_with_blocks()}
    assert {"README.md", "studyapp.md", "gamm.md"} <= names, names


def _fresh_folder(tmp: Path) -> Path:
    work = tmp / "work"
    work.mkdir()
    for rel in LINKED:
        (work / rel).parent.mkdir(parents=True, exist_ok=True)
        (work / rel).symlink_to(ROOT / rel)
    for rel in COPIED:
        shutil.copytree(ROOT / rel, work / rel)
    return work


def _run(command: Command, work: Path, env: dict[str, str], last: int) -> tuple[int, list[str]]:
    # `(exit N)` first, so that `echo $?` sees the previous command's status
    done = subprocess.run(
        ["bash", "-c", f"(exit {last}); {command.line}"],
        cwd=work, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    return done.returncode, (done.stdout + done.stderr).splitlines()


def _run_block(block: Block, work: Path, env: dict[str, str], where: str) -> None:
    if block.lang == "python":
        script = work / "doc_snippet.py"
        script.write_text(block.body, encoding="utf-8")
        code, printed = _run(Command(f".venv/bin/python {script.name}"), work, env, 0)
        assert code == 0, f"{where}: python block failed\n" + "\n".join(printed[-40:])
        return
    last = 0
    for command in block.commands():
        code, printed = _run(command, work, env, last)
        assert (code != 0) == command.must_fail(), (
            f"{where}: {command.line}\nexit {code}\n" + "\n".join(printed[-60:])
        )
        for line in command.shown:
            assert shown_matches(line, printed), (
                f"{where}: {command.line}\nthe doc shows {line!r}; printed:\n" + "\n".join(printed)
            )
        last = code


@pytest.mark.parametrize("doc", _docs_with_blocks(), ids=lambda p: p.name)
def test_every_runnable_block_of_a_doc_runs_in_a_fresh_folder(doc: Path, tmp_path: Path):
    work = _fresh_folder(tmp_path)
    env = {k: v for k, v in os.environ.items() if k not in UNSET}
    env["MPLBACKEND"] = "Agg"
    skipped = []
    for block in runnable_blocks(doc.read_text(encoding="utf-8")):
        absent = [name for name in block.needs if shutil.which(name) is None]
        if absent:
            skipped.append(f"{doc.name}:{block.line} needs {', '.join(absent)}")
            continue
        _run_block(block, work, env, f"{doc.relative_to(ROOT)}:{block.line}")
    if skipped:
        reason = "; ".join(skipped) + " (scripts/setup dev installs them)"
        if services_required():
            pytest.fail(f"required (RECOURSE_REQUIRE_SERVICES=1): {reason}")
        pytest.skip(reason)
