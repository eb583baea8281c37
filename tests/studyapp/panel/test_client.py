"""The Prolific client against the fake service over real HTTP: pagination, Prolific's error
bodies, and the retries (429 after its Retry-After, 5xx, time-outs, a refused connection),
with the unsafe pay never repeated once it may have arrived."""

from __future__ import annotations

import socket

import pytest

from studyapp.panel.client import ProlificClient, Uncertain
from studyapp.panel.errors import PanelError
from tests.studyapp.panel.conftest import TOKEN, FakeProlific


def client(fake: FakeProlific, waits: list[float], **kw: object) -> ProlificClient:
    return ProlificClient(TOKEN, fake.url, sleep=waits.append, **kw)  # type: ignore[arg-type]


def test_every_page_of_submissions_is_read(fake: FakeProlific) -> None:
    study = fake.study()
    made = {fake.start(study, f"pid{i:03d}") for i in range(45)}
    waits: list[float] = []
    got = list(client(fake, waits).iter_submissions(study, page_size=20))
    assert {s["id"] for s in got} == made and len(got) == 45
    assert fake.counts()["received"]["submissions"] == 3  # 20 + 20 + 5


def test_429_waits_its_retry_after_then_500_backs_off(fake: FakeProlific) -> None:
    study = fake.study()
    sub = fake.start(study, "p1")
    fake.complete(sub, "")  # no code: awaiting review
    fake.faults("bulk_approve", {"status": 429, "retry_after": 3}, {"status": 500})
    waits: list[float] = []
    done = client(fake, waits, backoff=0.25).bulk_approve([sub])
    assert done.attempts == 3
    assert waits == [3.0, 0.5]  # Retry-After as given; then the second attempt's backoff
    counts = fake.counts()
    assert counts["received"]["bulk_approve"] == 3 and counts["approvals"] == {sub: 1}


def test_a_time_out_is_retried_for_a_safe_call(fake: FakeProlific) -> None:
    study = fake.study()
    fake.faults("study", {"delay": 1.5})
    waits: list[float] = []
    assert client(fake, waits, timeout=0.3).study(study)["id"] == study
    assert fake.counts()["received"]["study"] == 2 and len(waits) == 1


def test_pay_is_not_repeated_after_a_500_or_a_time_out(fake: FakeProlific) -> None:
    study = fake.study()
    fake.complete(fake.start(study, "p1"), "")
    c = client(fake, [], timeout=0.3)
    bulk = c.setup_bonuses(study, [("p1", "1.00")]).data["id"]
    fake.faults("bonus_pay", {"status": 500})
    with pytest.raises(Uncertain, match="may have acted"):
        c.pay_bonuses(bulk)
    fake.faults("bonus_pay", {"delay": 1.0})
    with pytest.raises(Uncertain, match="may have acted"):
        c.pay_bonuses(bulk)
    assert fake.counts()["received"]["bonus_pay"] == 2  # one request each, no retry


def test_pay_is_repeated_after_a_429(fake: FakeProlific) -> None:
    study = fake.study()
    fake.complete(fake.start(study, "p1"), "")
    c = client(fake, [])
    bulk = c.setup_bonuses(study, [("p1", "1.00")]).data["id"]
    fake.faults("bonus_pay", {"status": 429, "retry_after": 1})
    assert c.pay_bonuses(bulk).attempts == 2
    assert fake.counts()["payments"] == {bulk: 1}


def test_prolific_refusals_are_said_with_its_message(fake: FakeProlific) -> None:
    with pytest.raises(PanelError, match="HTTP 401: Invalid token"):
        ProlificClient("wrongToken_0123456789abcdef", fake.url).me()
    with pytest.raises(PanelError, match=r"HTTP 404: Study 0+ff not found"):
        client(fake, []).study("0" * 22 + "ff")
    sub = fake.start(fake.study(), "p1")
    fake.complete(sub, "")
    body = {"action": "REJECT", "rejection_category": "LOW_EFFORT", "message": "too short"}
    with pytest.raises(PanelError, match="at least 100 characters"):
        client(fake, []).transition(sub, body)


def test_an_unreachable_prolific_is_retried_then_said(fake: FakeProlific) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # closed again at once: nothing listens there
    waits: list[float] = []
    c = ProlificClient(TOKEN, f"http://127.0.0.1:{port}", retries=2, sleep=waits.append)
    with pytest.raises(PanelError, match="could not be reached after 3 attempt"):
        c.me()
    assert len(waits) == 2


def test_the_token_goes_to_no_other_host() -> None:
    c = ProlificClient(TOKEN, "http://127.0.0.1:9")
    with pytest.raises(PanelError, match="another host"):
        c.call("GET", "https://elsewhere.example/api/v1/studies/x/submissions/?page=2")
