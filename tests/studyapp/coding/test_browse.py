"""The answers page: each filter keeps exactly the answers it names (checked against the
evaluations themselves), and the recourse is shown beside each answer."""

from __future__ import annotations

import re
from typing import Any

from studyapp.models import Participant, Recourse, Study
from tests.studyapp.coding.conftest import client_of, evaluations


def _units(page: str) -> set[str]:
    return set(re.findall(r'class="answer-row" data-unit="([^"]+)"', page))


def test_filters_and_the_recourse_beside_each_answer(
    coded_study: Study, people: dict[str, Any]
) -> None:
    evs = evaluations(coded_study)
    for i, ev in enumerate(evs):  # some variety: strategies, conditions, impossible items
        Recourse.objects.filter(pk=ev.recourse_id).update(
            strategy="sparsest" if i % 3 == 0 else "random", method="pool_search"
        )
        ev.impossible = ev.recourse.changed[:1] if i % 4 == 0 else []
        ev.action_why = "because" if i % 2 else ""
        ev.save(update_fields=["impossible", "action_why"])
    Participant.objects.filter(pk=evs[0].participant_id).update(condition="balanced")
    evs = evaluations(coded_study)
    c = client_of(people["pi"])  # not a coder: sees and filters by the recourse
    url = f"/console/studies/{coded_study.slug}/coding/answers/"

    def unit(ev: Any, f: str = "acceptance_why") -> str:
        return f"{ev.recourse_id}:{f}"

    def why(pred: Any) -> set[str]:
        return {unit(e) for e in evs if pred(e)}

    assert _units(c.get(url).content.decode()) == why(lambda e: True) | {
        unit(e, "action_why") for e in evs if e.action_why
    }
    cases = [
        ({"strategy": "sparsest"}, lambda e: e.recourse.strategy == "sparsest"),
        ({"sparsity_min": 3, "sparsity_max": 4}, lambda e: 3 <= e.recourse.sparsity <= 4),
        ({"proximity_max": 1.5}, lambda e: e.recourse.proximity <= 1.5),
        ({"rating_min": 5, "rating_max": 7}, lambda e: e.acceptance >= 5),
        ({"impossible": "yes"}, lambda e: bool(e.impossible)),
        ({"impossible": "no"}, lambda e: not e.impossible),
        ({"condition": "balanced"}, lambda e: e.participant.condition == "balanced"),
    ]
    for query, pred in cases:
        r = c.get(url, {**query, "field": "acceptance_why"})
        assert r.status_code == 200, (query, r.content.decode()[-300:])
        assert _units(r.content.decode()) == why(pred), query
    r = c.get(url, {"field": "action_why", "rating_min": 1, "rating_max": 3})
    assert _units(r.content.decode()) == {
        unit(e, "action_why") for e in evs if e.action_why and e.action <= 3
    }
    page = c.get(url, {"field": "acceptance_why"}).content.decode()
    ev = evs[0]
    row = page[page.index(f'data-unit="{unit(ev)}"') :]
    row = row[: row.index("</tr>")]
    assert f"sparsity {ev.recourse.sparsity}" in row and ev.recourse.strategy in row
    schema = coded_study.schema
    first = ev.recourse.changed[0]
    label = next(it["label"] for it in schema["profile_items"] if it["key"] == first)
    assert f"{label}:" in row and "(impossible)" in row  # evs[0] has an impossible item
    assert c.get(url, {"strategy": "nonsense"}).status_code == 400
    # a coder of a study coded blind (the default) is not offered the recourse filters
    r = client_of(people["a"]).get(url, {"method": "pool_search"})
    assert r.status_code == 400 and "the filter &#x27;method&#x27; is hidden" in r.content.decode()


def test_a_saved_coding_returns_to_the_same_filtered_page(
    coded_study: Study, people: dict[str, Any]
) -> None:
    c = client_of(people["a"])
    url = f"/console/studies/{coded_study.slug}/coding/answers/"
    ev = evaluations(coded_study)[0]
    r = c.post(url, {"evaluation": ev.pk, "field": "acceptance_why", "codes": ["cost"],
                     "query": "field=acceptance_why&page=2"})  # fmt: skip
    assert r.status_code == 302 and r["Location"] == url + "?field=acceptance_why&page=2"
    r = c.post(url, {"evaluation": evaluations(coded_study)[1].pk, "field": "acceptance_why",
                     "query": "//evil.example/x?a=1"})  # fmt: skip
    assert r["Location"].startswith(url + "?")  # never another address
