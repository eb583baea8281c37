"""axe-core in Debian's Chromium: WCAG 2.x A/AA checks of the page a driver shows, at a
desktop and a phone viewport, and the artefacts (screenshots) the browser tests keep.

axe-core comes from npm, pinned by `tests/browser/axe/package-lock.json` and installed by
``scripts/setup dev`` (``npm ci``) into ``tests/browser/axe/node_modules`` (ignored by git);
a checkout where it is missing installs it on first use, and a machine without npm skips
the tests that need it (CI turns the skip into a failure).
"""

from __future__ import annotations

import base64
import os
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.services import require_executable

AXE_DIR = Path(__file__).resolve().parent / "axe"
AXE_JS = AXE_DIR / "node_modules" / "axe-core" / "axe.min.js"
#: the WCAG success criteria axe checks: 2.0, 2.1 and 2.2, levels A and AA
WCAG_TAGS = ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "wcag22aa"]
#: impacts that fail the test
BLOCKING = ("serious", "critical")
#: (name, width, height, mobile): the viewports every page is checked at
VIEWPORTS = (("desktop", 1280, 900, False), ("phone", 375, 812, True))


def axe_source() -> str:
    """axe.min.js, installed with ``npm ci`` when the checkout does not have it yet."""
    if not AXE_JS.exists():
        npm = require_executable("npm", "install Node.js and npm, then scripts/setup dev")
        done = subprocess.run(
            [npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund"],
            cwd=AXE_DIR, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        if done.returncode != 0 or not AXE_JS.exists():
            raise RuntimeError(f"npm ci in {AXE_DIR} failed: {done.stderr.strip()[-500:]}")
    return AXE_JS.read_text(encoding="utf-8")


def artefact_dir(name: str) -> Path:
    """Where a test keeps files for people to look at: $RECOURSE_ARTEFACTS/<name>, else
    tests/browser/artifacts/<name> (ignored by git)."""
    root = os.environ.get("RECOURSE_ARTEFACTS") or str(
        Path(__file__).resolve().parent / "artifacts"
    )
    out = Path(root) / name
    out.mkdir(parents=True, exist_ok=True)
    return out


def set_viewport(driver: Any, width: int, height: int, mobile: bool) -> None:
    """Emulate a screen and viewport of `width`×`height` CSS px; `mobile`: a phone's (its
    layout viewport, a touch screen)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile,
         "screenWidth": width, "screenHeight": height},
    )  # fmt: skip
    driver.execute_cdp_cmd(
        "Emulation.setTouchEmulationEnabled", {"enabled": mobile, "maxTouchPoints": 5}
    )


def screenshot(driver: Any, path: Path) -> Path:
    """The whole page (beyond the viewport) as a PNG."""
    size = driver.execute_script(
        "return [document.documentElement.scrollWidth, document.documentElement.scrollHeight]"
    )
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot",
        {
            "format": "png",
            "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": size[0], "height": size[1], "scale": 1},
        },
    )
    path.write_bytes(base64.b64decode(shot["data"]))
    return path


@dataclass
class Finding:
    """One page at one viewport: its violations (rule id, impact, nodes)."""

    page: str
    viewport: str
    violations: list[dict[str, Any]]
    #: what the layout check found at this viewport (phone only)
    layout: list[str] = field(default_factory=list)
    #: the run's wall time
    seconds: float = 0.0

    @property
    def blocking(self) -> list[dict[str, Any]]:
        return [v for v in self.violations if v["impact"] in BLOCKING]

    def line(self) -> str:
        nodes = sum(len(v["nodes"]) for v in self.blocking)
        rules = ", ".join(f"{v['id']}({len(v['nodes'])})" for v in self.blocking)
        other = len(self.violations) - len(self.blocking)
        return (
            f"{self.page:<36} {self.viewport:<8} serious/critical: {len(self.blocking)} "
            f"rules, {nodes} nodes {rules}; minor/moderate: {other}"
            + (f"; layout: {len(self.layout)}" if self.viewport == "phone" else "")
            + f" [{self.seconds:.1f} s]"
        )


class Auditor:
    """Runs axe on the driver's page at every viewport (and `phone_checks` at the phone's)
    and keeps what it found."""

    def __init__(self, driver: Any, phone_checks: Callable[[Any], list[str]] | None = None) -> None:
        self.driver = driver
        self.source = axe_source()
        self.phone_checks = phone_checks
        self.findings: list[Finding] = []
        # in every page the browser opens from now on, before its own scripts: sent once
        driver.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": self.source})

    def check(self, page: str) -> None:
        for name, width, height, mobile in VIEWPORTS:
            set_viewport(self.driver, width, height, mobile)
            t0 = time.monotonic()
            finding = Finding(page, name, self.run())
            finding.seconds = time.monotonic() - t0
            if mobile and self.phone_checks is not None:
                finding.layout = self.phone_checks(self.driver)
            self.findings.append(finding)
        set_viewport(self.driver, *VIEWPORTS[0][1:])

    def run(self) -> list[dict[str, Any]]:
        if not self.driver.execute_script("return typeof window.axe === 'object'"):
            self.driver.execute_script(self.source)
        self.driver.set_script_timeout(60)
        result = self.driver.execute_async_script(
            "const done = arguments[arguments.length - 1];"
            "axe.run(document, {runOnly: {type: 'tag', values: arguments[0]},"
            " resultTypes: ['violations']})"
            ".then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact,"
            " help: v.help, nodes: v.nodes.map(n => n.target.join(' '))}))))"
            ".catch(e => done([{id: 'axe-error', impact: 'critical', help: String(e),"
            " nodes: []}]));",
            WCAG_TAGS,
        )
        return list(result)

    def report(self) -> str:
        return "\n".join(f.line() for f in self.findings)

    def failures(self) -> list[str]:
        """Each serious or critical violation: page, viewport, rule, help, the nodes."""
        return [
            f"{f.page} [{f.viewport}] {v['id']} ({v['impact']}): {v['help']}: "
            + "; ".join(v["nodes"][:5])
            for f in self.findings
            for v in f.blocking
        ] + [f"{f.page} [{f.viewport}] layout: {p}" for f in self.findings for p in f.layout]
