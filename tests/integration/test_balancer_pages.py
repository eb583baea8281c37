"""With no web node able to answer, the balancer answers with the participant's page of
deploy/errors/ (their answers are saved, reload in a few seconds), not HAProxy's own."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest

from tests.integration.cluster import free_port, haproxy, wait

pytestmark = [pytest.mark.integration]


def test_no_node_up_gives_the_participants_page() -> None:
    with haproxy([f"127.0.0.1:{free_port()}"]) as lb:  # nothing listens there
        wait(lambda: lb["states"]().get("node1") == "DOWN", "the node marked down", 20)
        with pytest.raises(urllib.error.HTTPError) as answer:
            urllib.request.urlopen(f"{lb['url']}/s/carloan/", timeout=10)  # noqa: S310 - loopback
    assert answer.value.code == 503
    page = answer.value.read().decode("utf-8")
    assert "Your answers so far are saved" in page and 'id="reload"' in page
    assert "haproxy" not in page.lower()
