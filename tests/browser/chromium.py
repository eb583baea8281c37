"""Starting Debian's headless Chromium for the browser tests (never a downloaded browser).

The flags keep it from reaching out: this machine's network is closed, and Chromium's
background connections would otherwise be refused many at a time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from tests.services import require_executable

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def start_chromium(window: str, prefs: dict[str, Any] | None = None) -> Any:
    """A selenium driver of headless Chromium with a `window` like "412,915" (a phone);
    skips (or fails in CI) when chromium or its driver is not installed."""
    chromium = require_executable("chromium", "apt-get install chromium (scripts/setup dev)")
    chromedriver = require_executable(
        "chromedriver", "apt-get install chromium-driver (scripts/setup dev)"
    )
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--window-size={window}")
    if prefs:
        options.add_experimental_option("prefs", prefs)
    driver = webdriver.Chrome(service=Service(chromedriver), options=options)
    driver.implicitly_wait(0)
    return driver


def start_downloading_chromium(window: str, folder: Path) -> Any:
    """Chromium as `start_chromium`, saving downloads into `folder` without asking."""
    prefs = {"download.default_directory": str(folder), "download.prompt_for_download": False}
    driver = start_chromium(window, prefs)
    driver.execute_cdp_cmd(
        "Page.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(folder)}
    )
    return driver


def downloaded(folder: Path, pattern: str, timeout: float = 60) -> Path:
    """The file matching `pattern` once Chromium has finished downloading it into `folder`."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        done = [p for p in folder.glob(pattern) if not p.name.endswith(".crdownload")]
        if done and not list(folder.glob("*.crdownload")):
            return done[0]
        time.sleep(0.2)
    raise AssertionError(f"no {pattern} downloaded into {folder}: {list(folder.iterdir())}")
