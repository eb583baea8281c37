"""The per-process study cache never serves a study older than the database's: every kind
of write a researcher's tools make moves the version, and the next page shows the change."""

from __future__ import annotations

import pytest
from django.test import Client

from studyapp.models import Study
from studyapp.participation import selectors, study_cache
from tests.studyapp.conftest import start


def _welcome(study: Study) -> str:
    return Client().get(f"/s/{study.slug}/").content.decode()


def _set_welcome(study: Study, text: str) -> dict:
    texts = {**study.texts}
    texts["en"] = {**texts.get("en", {}), "welcome": text}
    return texts


@pytest.mark.parametrize("how", ["save", "save_update_fields", "queryset_update"])
def test_an_edited_study_shows_on_the_next_page(study: Study, how: str) -> None:
    assert "Hello from version one" not in _welcome(study)
    texts = _set_welcome(study, "Hello from version one")
    Study.objects.filter(pk=study.pk).update(texts=texts)
    assert "Hello from version one" in _welcome(study)  # cached now
    fresh = Study.objects.get(pk=study.pk)
    texts = _set_welcome(fresh, "Hello from version two")
    if how == "save":
        fresh.texts = texts
        fresh.save()
    elif how == "save_update_fields":  # the version column is added to the fields
        fresh.texts = texts
        fresh.save(update_fields=["texts"])
    else:  # QuerySet.update sets the version too
        Study.objects.filter(pk=study.pk).update(texts=texts)
    page = _welcome(study)
    assert "Hello from version two" in page and "Hello from version one" not in page


def test_participant_pages_read_the_current_version(study: Study) -> None:
    walker = start(Client(), study)
    code = walker.url.rstrip("/").rsplit("/", 1)[-1]
    first = selectors.participant_get(code=code)
    again = selectors.participant_get(code=code)
    assert first is not None and again is not None
    assert again.study is first.study  # one object per version and process
    Study.objects.filter(pk=study.pk).update(title="Renamed")
    third = selectors.participant_get(code=code)
    assert third is not None and third.study is not first.study
    assert third.study.title == "Renamed"


def test_a_closed_study_link_is_closed_at_once(study: Study) -> None:
    assert selectors.study_get_live(slug=study.slug) is not None
    Study.objects.filter(pk=study.pk).update(state=Study.State.CLOSED)
    assert selectors.study_get_live(slug=study.slug) is None


def test_the_cache_keeps_at_most_its_bound(study: Study, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(study_cache, "MAX_STUDIES", 1)
    study_cache.forget()
    other = Study.objects.create(slug="other", title="Other", schema=study.schema)
    study_cache.study_at(study.pk, Study.objects.get(pk=study.pk).updated_at)
    study_cache.study_at(other.pk, other.updated_at)
    assert list(study_cache._kept) == [other.pk]
