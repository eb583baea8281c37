"""Bad input on the coding pages: a clear message naming the problem, status 400, and
nothing changed (codes, codings and final codes counted before and after)."""

from __future__ import annotations

import io
from typing import Any

from studyapp.coding.models import Code, CoderAssignment, Coding, FinalCode
from studyapp.models import Study
from tests.studyapp.coding.conftest import CODER_PERMS, client_of, evaluations, researcher


def _counts() -> tuple[int, int, int, int]:
    return (Code.objects.count(), Coding.objects.count(), FinalCode.objects.count(),
            CoderAssignment.objects.count())  # fmt: skip


def _url(study: Study, page: str = "") -> str:
    return f"/console/studies/{study.slug}/coding/{page}"


def _refused(r: Any, *words: str) -> str:
    assert r.status_code == 400, r.status_code
    text = r.content.decode()
    assert 'id="refused"' in text
    for w in words:
        assert w in text, (w, text[text.find('id="refused"') :][:300])
    return text


def test_duplicate_code_is_refused(coded_study: Study, people: dict[str, Any]) -> None:
    pi = client_of(people["pi"])
    before = _counts()
    r = pi.post(_url(coded_study), {"action": "add_code", "code": "cost", "definition": "again"})
    _refused(r, "cost", "already in this study&#x27;s codebook")
    assert _counts() == before
    assert Code.objects.get(study=coded_study, name="cost").definition.startswith("money")


def test_codebook_csv_with_duplicate_codes_changes_nothing(
    coded_study: Study, people: dict[str, Any]
) -> None:
    pi = client_of(people["pi"])
    before = _counts()
    sheet = b"code,definition,example\nfamily,others decide,\nfamily,twice,\n"
    r = pi.post(_url(coded_study), {"action": "upload",
                                    "codebook": io.BytesIO(sheet)})  # fmt: skip
    _refused(r, "row 2: duplicate code &#x27;family&#x27;")
    assert _counts() == before  # not even the first 'family'
    bad_name = b"code,definition\nFamily Matters,x\n"
    r = pi.post(_url(coded_study), {"action": "upload", "codebook": io.BytesIO(bad_name)})
    _refused(r, "must be 1-40 lower-case letters")
    r = pi.post(_url(coded_study), {"action": "upload", "codebook": io.BytesIO(b"\xff\xfe")})
    _refused(r, "not UTF-8")
    assert _counts() == before
    good = b"code,definition,example\nfamily,others decide,my wife\n"
    r = pi.post(_url(coded_study), {"action": "upload", "codebook": io.BytesIO(good)})
    assert r.status_code == 302 and Code.objects.filter(name="family").count() == 1


def test_coding_an_answer_twice_is_refused(coded_study: Study, people: dict[str, Any]) -> None:
    a = client_of(people["a"])
    ev = evaluations(coded_study)[0]
    post = {"evaluation": ev.pk, "field": "acceptance_why", "codes": ["cost"]}
    assert a.post(_url(coded_study, "answers/"), post).status_code == 302
    before = _counts()
    r = a.post(_url(coded_study, "answers/"), {**post, "codes": ["effort"]})
    _refused(r, "already coded answer", f"{ev.recourse_id}:acceptance_why")
    assert _counts() == before
    coding = Coding.objects.get(coder=people["a"])
    assert [c.name for c in coding.codes.all()] == ["cost"]  # the first codes stand


def test_unknown_code_is_refused(coded_study: Study, people: dict[str, Any]) -> None:
    a = client_of(people["a"])
    ev = evaluations(coded_study)[0]
    before = _counts()
    r = a.post(_url(coded_study, "answers/"),
               {"evaluation": ev.pk, "field": "acceptance_why", "codes": ["greed"]})  # fmt: skip
    _refused(r, "codes:", "greed")
    # the service refuses it too, whatever the form lets through
    from studyapp.coding import answer_services

    try:
        answer_services.coding_save(study=coded_study, coder=people["a"], unit=f"{ev.recourse_id}:acceptance_why", code_names=["greed"])  # fmt: skip
        raise AssertionError("an unknown code was accepted")
    except answer_services.CodingRefused as exc:
        assert "'greed' is not in this study's codebook" in str(exc)
    assert _counts() == before


def test_coder_not_assigned_is_refused(coded_study: Study, people: dict[str, Any]) -> None:
    outsider = researcher("outsider", CODER_PERMS, coded_study)
    c = client_of(outsider)
    ev = evaluations(coded_study)[0]
    before = _counts()
    r = c.post(_url(coded_study, "answers/"),
               {"evaluation": ev.pk, "field": "acceptance_why", "codes": ["cost"]})  # fmt: skip
    _refused(r, "outsider is not an assigned coder")
    assert _counts() == before


def test_other_bad_codings(coded_study: Study, people: dict[str, Any]) -> None:
    a = client_of(people["a"])
    ev = evaluations(coded_study)[0]
    before = _counts()
    url = _url(coded_study, "answers/")
    _refused(a.post(url, {"evaluation": ev.pk, "field": "action_why"}), "is empty")
    _refused(a.post(url, {"evaluation": 10**9, "field": "acceptance_why"}), "no evaluation")
    _refused(
        a.post(url, {"evaluation": ev.pk, "field": "income"}),
        "unknown coding field &#x27;income&#x27;",
    )
    _refused(a.get(url, {"rating_min": 6, "rating_max": 2}), "rating_min (6) is above")
    assert a.post(_url(coded_study), {"action": "finish"}).status_code == 302
    _refused(a.post(url, {"evaluation": ev.pk, "field": "acceptance_why"}), "has finished")
    _refused(a.post(_url(coded_study), {"action": "finish"}), "has finished")
    assert _counts() == before


def test_assigning_twice_or_an_unshared_coder_is_refused(
    coded_study: Study, people: dict[str, Any]
) -> None:
    pi = client_of(people["pi"])
    before = _counts()
    r = pi.post(_url(coded_study), {"action": "assign", "coder": people["a"].pk})
    _refused(r, "coder_a is already a coder of this study")
    stranger = researcher("stranger", CODER_PERMS)  # not shared the study
    r = pi.post(_url(coded_study), {"action": "assign", "coder": stranger.pk})
    _refused(r, "stranger cannot open study carloan")
    noperm = researcher("noperm", ("view_coding",), coded_study)
    r = pi.post(_url(coded_study), {"action": "assign", "coder": noperm.pk})
    _refused(r, "lacks the permission to code")
    assert _counts() == before


def test_pages_need_their_model_permissions(coded_study: Study, people: dict[str, Any]) -> None:
    nobody = client_of(researcher("nobody", (), coded_study))
    for page in ("", "answers/", "agreement/", "resolve/", "quotes/", "suggest/"):
        assert nobody.get(_url(coded_study, page)).status_code == 403, page
    coder = client_of(people["a"])
    before = _counts()
    r = coder.post(_url(coded_study), {"action": "add_code", "code": "new", "definition": "d"})
    assert r.status_code == 403  # a coder may not extend the codebook (add code)
    assert coder.get(_url(coded_study, "resolve/")).status_code == 403  # nor resolve
    assert _counts() == before
