"""Every command the README shows runs (a broken example fails CI).

The commands are read from the README's fenced `bash` and `console` blocks (a `\\` joins
lines; in `console` blocks the commands are the `$ ` lines and the lines after them are the
output shown, which must appear as printed lines of the real output). They run in order, as
one shell session would, in a scratch folder that links the checkout's `.venv/` and
`examples/` (so relative paths are those of the README) with the study's database in its own
`var/` — on the demo data. Only the two commands at the top are left out: they install
everything, and `scripts/test` would run this test again; in place of `scripts/run` the
database is migrated first, as it leaves it."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.services import services_required

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
#: commands not run here, with the reason
NOT_RUN = {
    "scripts/run": "installs everything and serves until Ctrl-C (tests/integration/test_run_script.py)",
    "scripts/test": "installs everything and runs this suite, this test included",
}

pytestmark = pytest.mark.slow


@dataclass
class Command:
    line: str
    shown: list[str] = field(default_factory=list)  # output lines shown under it


def readme_commands(text: str) -> list[Command]:
    """The commands of the README's bash and console blocks, in order."""
    out: list[Command] = []
    for lang, body in re.findall(r"^```(bash|console)\n(.*?)^```", text, re.M | re.S):
        lines = body.replace("\\\n", " ").splitlines()
        for raw in lines:
            if lang == "bash":
                line = raw.strip()
                if line and not line.startswith("#"):
                    out.append(Command(re.sub(r"\s+#\s.*$", "", line).strip()))
            elif raw.startswith("$ "):
                out.append(Command(" ".join(raw[2:].split())))
            elif out and raw.strip():
                out[-1].shown.append(raw.rstrip())
    return out


def test_the_readme_parser_finds_commands_and_their_output():
    sample = (
        "```bash\na --x 1   # note\n# only a comment\n```\n```console\n$ b \\\n  --y\nok\n```\n"
    )
    got = readme_commands(sample)
    assert [c.line for c in got] == ["a --x 1", "b --y"] and got[1].shown == ["ok"]


def test_every_readme_command_runs_on_the_demo_data(tmp_path):
    commands = readme_commands(README.read_text(encoding="utf-8"))
    skipped = [c.line for c in commands if c.line.split()[0] in NOT_RUN]
    assert sorted(skipped) == sorted(NOT_RUN), skipped
    to_run = [c for c in commands if c.line.split()[0] not in NOT_RUN]
    assert len(to_run) >= 15, [c.line for c in to_run]
    if any("Rscript" in c.line for c in to_run) and shutil.which("Rscript") is None:
        reason = "Rscript not found; a README command runs analysis.R (apt-get install r-cran-mgcv)"
        if services_required():
            pytest.fail(f"required (RECOURSE_REQUIRE_SERVICES=1): {reason}")
        pytest.skip(reason)
    for name in (".venv", "examples"):
        (tmp_path / name).symlink_to(ROOT / name)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.update(STUDYAPP_VAR_DIR=str(tmp_path / "var"), MPLBACKEND="Agg")
    # in place of scripts/run, which leaves a migrated database behind it
    to_run.insert(0, Command(".venv/bin/recourse-study migrate -v0"))
    for command in to_run:
        done = subprocess.run(
            ["bash", "-c", command.line],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        printed = (done.stdout + done.stderr).splitlines()
        failing = any(s.startswith("error:") for s in command.shown)
        assert (done.returncode != 0) == failing, (
            f"{command.line}\nexit {done.returncode}\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
        )
        for line in command.shown:
            assert line in printed, f"{command.line}: README shows {line!r}; printed:\n{printed}"
