"""Starting Debian's headless Chromium for the browser tests (never a downloaded browser).

The flags keep it from reaching out: this machine's network is closed, and Chromium's
background connections would otherwise be refused many at a time.
"""

from __future__ import annotations

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
