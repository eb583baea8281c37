"""The page script sends nothing by itself: no network API appears in it, and the page
includes it as a file (no inline script, so a strict CSP needs no exception)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
SCRIPT = ROOT / "studyapp/static/studyapp/integrity.js"
FORM = ROOT / "studyapp/jinja2/studyapp/_form.html"


def test_the_script_has_no_way_to_send_anything_itself():
    code = SCRIPT.read_text()
    for api in ("fetch(", "XMLHttpRequest", "sendBeacon", "WebSocket", "EventSource", ".submit("):
        assert api not in code, api
    assert 'name="integrity"' in code  # it writes only into the form's hidden field


def test_the_form_includes_it_as_a_deferred_file():
    form = FORM.read_text()
    tags = re.findall(r"<script[^>]*>", form)
    assert any("studyapp/integrity.js" in t and "defer" in t and "src=" in t for t in tags)
    assert all("src=" in t for t in tags)  # no inline script
