"""The study report opened in headless Chromium from the disk: no console errors, no network
request (every figure is embedded), and screenshots of its first screen and of the flow
diagram (saved to SCREENSHOTS, default the test's folder)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis.__main__ import main
from tests.analysis.report.every_outcome import every_outcome_export
from tests.browser.chromium import start_chromium


@pytest.fixture
def report(tmp_path: Path) -> Path:
    export = every_outcome_export(tmp_path / "export")
    out = tmp_path / "report"
    assert main(["report", "--export", str(export), "--out", str(out), "--no-ordinal",
                 "--bootstrap", "5", "--min-per-level", "10"]) == 0  # fmt: skip
    return out / "report.html"


def test_report_opens_with_no_errors_and_no_requests(report: Path, tmp_path: Path) -> None:
    driver = start_chromium("1280,900")
    try:
        driver.execute_cdp_cmd("Network.enable", {})
        driver.get(report.as_uri())
        assert driver.find_element("id", "n-completed").text == "36"
        logs = driver.get_log("browser")
        assert [entry for entry in logs if entry["level"] in ("SEVERE", "WARNING")] == []
        # every resource the page loaded: only the page itself and data: URIs
        entries = driver.execute_script(
            "return performance.getEntriesByType('resource').map(e => e.name)"
        )
        assert [e for e in entries if not e.startswith("data:")] == []
        images = driver.execute_script(
            "return [...document.images].map(i => [i.src.slice(0, 22), i.naturalWidth])"
        )
        assert images and all(src.startswith("data:image/png") and w > 0 for src, w in images)
        shots = Path(os.environ.get("SCREENSHOTS", tmp_path))
        shots.mkdir(parents=True, exist_ok=True)
        driver.save_screenshot(str(shots / "report_first_screen.png"))
        driver.set_window_size(1280, 2400)  # the whole diagram in one element screenshot
        driver.find_element("id", "flow-figure").screenshot(str(shots / "report_flow.png"))
    finally:
        driver.quit()
