"""The one way the browser tests move between pages: act (click, submit, go back, reload),
then wait until the document the action replaced is gone and the page it leads to shows
the element expected there.

Reading the page straight after a click reads the page before it as often as not under
load (the click only starts the request); waiting for an element that both pages have is
no better. `Page.click_to` and `Page.act_to` first wait for the old document to go stale,
then for the expected element of the new one.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

#: seconds a page may take (the waiting page's recourses included) on a loaded machine
TIMEOUT = 60


def at(name: str) -> str:
    """The selector of a participant page by its name (the form's hidden `page` field)."""
    return f'input[name="page"][value="{name}"]'


def _replaced(element: Any) -> bool:
    """Whether `element` belongs to a document that has been replaced. Chromium says so
    either as a stale element or, while the next document is being built, as a plain error
    that the node "does not belong to the document"."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException

    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in str(exc):
            return True
        raise
    return False


class Page:
    """A driver with waits: every navigating action names the element it expects next."""

    def __init__(self, driver: Any, timeout: float = TIMEOUT) -> None:
        from selenium.webdriver.support.ui import WebDriverWait

        self.d = driver
        self.wait = WebDriverWait(driver, timeout)

    def css(self, selector: str) -> Any:
        """The element of the current page, once present."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        return self.wait.until(ec.presence_of_element_located((By.CSS_SELECTOR, selector)))

    def act_to(self, action: Callable[[], object], expect: str) -> Any:
        """Run `action`, which loads another page (or the same one again), and return the
        element `expect` of the page it loaded."""
        from selenium.webdriver.common.by import By

        before = self.d.find_element(By.TAG_NAME, "html")
        action()
        self.wait.until(lambda _: _replaced(before))
        return self.css(expect)

    def click_to(self, target: str | Any, expect: str) -> Any:
        """Click the element (or the selector's element) and wait for the next page."""
        element = self.css(target) if isinstance(target, str) else target
        return self.act_to(element.click, expect)

    def go(self, url: str, expect: str) -> Any:
        """Open `url` and return its element `expect`."""
        self.d.get(url)
        return self.css(expect)

    # the participant pages

    def on(self, name: str) -> Any:
        """Wait for the participant page `name` (one the page moves to by itself, as the
        waiting page does)."""
        return self.css(at(name))

    def choose(self, name: str, value: str) -> None:
        self.css(f'input[name="{name}"][value="{value}"]').click()

    def submit(self, expect: str) -> Any:
        """Submit the page's form and wait for `expect` on the answer page."""
        return self.click_to("button.next", expect)

    def start(self, url: str, expect: str = at("consent")) -> Any:
        """Open a study link and press the welcome page's start button."""
        self.go(url, "#start")
        return self.click_to("#start", expect)

    def agree_and_screen(self, expect: str = at("scenario")) -> Any:
        self.on("consent")
        self.css('input[name="agree"]').click()
        self.submit(at("screening"))
        self.css('input[name="age"]').send_keys("34")
        for name, value in [("gender", "1"), ("occupation", "1"), ("income", "3"),
                            ("car_purchase", "2"), ("loans", "8")]:  # fmt: skip
            self.choose(name, value)
        return self.submit(expect)

    def to_decision(self, profile: dict[str, str] | None = None, expect: str = "") -> Any:
        """From consent to the profile's submission (every item "1" unless `profile` says
        otherwise); `expect` is what follows it (the decision page's Continue by default)."""
        from recourse_engine import carloan_schema

        self.agree_and_screen()
        self.submit(at("profile"))
        for item in carloan_schema().items:
            self.choose(item.key, (profile or {}).get(item.key, "1"))
        return self.submit(expect or "#decision-continue")

    def continue_decision(self, expect: str) -> Any:
        """Wait until the decision page's Continue opens (the plans are ready, the minimum
        time passed), press it and return `expect` of the page it leads to."""
        from selenium.webdriver.common.by import By
        from selenium.webdriver.support import expected_conditions as ec

        button = self.wait.until(ec.element_to_be_clickable((By.ID, "decision-continue")))
        return self.click_to(button, expect)

    def to_waiting(self, expect: str) -> Any:
        """From consent through the decision page's Continue; `expect` is what follows it
        (the first plan, or "under review" with delayed release)."""
        self.to_decision()
        return self.continue_decision(expect)
