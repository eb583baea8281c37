"""The console's translations page of a study: every participant-facing text in the default
language beside each other language (missing ones marked), a PO file per language to
download for a translator, and the translated file to upload back (a draft only; a refused
file changes nothing and the page says why).

Staff only, for studies `access.can_access` allows; reading needs view on studies,
uploading the change permission.
"""

from __future__ import annotations

from django import forms
from django.contrib import messages
from django.contrib.admin import site
from django.contrib.admin.views.decorators import staff_member_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.template.response import TemplateResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET, require_http_methods

from studyapp.console.views import study_or_404
from studyapp.definition.errors import StudyError
from studyapp.models import Study
from studyapp.participation.language import study_languages
from studyapp.studies import access, translation_catalogue, translation_files

VIEW_PERMS = ("studyapp.view_study",)
CHANGE_PERM = "studyapp.change_study"


class TranslationUploadForm(forms.Form):
    language = forms.ChoiceField(choices=[])
    file = forms.FileField(label="Translated PO file")

    def __init__(self, *args: object, languages: list[str], **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.fields["language"].choices = [(code, code) for code in languages]


def po_response(study: Study, lang: str) -> HttpResponse:
    """The study's PO file of `lang` as a download (404 for a language it does not have)."""
    try:
        text = translation_files.po_export(study, lang)
    except StudyError as exc:
        raise Http404(str(exc)) from None
    response = HttpResponse(text, content_type="text/x-gettext-translation; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{study.slug}-{lang}.po"'
    return response


@never_cache
@require_GET
@staff_member_required
def translation_download(request: HttpRequest, slug: str, lang: str) -> HttpResponse:
    return po_response(study_or_404(request, slug, VIEW_PERMS), lang)


def _upload(request: HttpRequest, study: Study, languages: list[str]) -> None:
    if not access.may(request.user, CHANGE_PERM):
        raise PermissionDenied(f"missing permissions: {CHANGE_PERM}")
    form = TranslationUploadForm(request.POST, request.FILES, languages=languages)
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{field}: {' '.join(errors)}")
        return
    lang = form.cleaned_data["language"]
    try:
        done = translation_files.po_import(study, lang, form.cleaned_data["file"].read())
    except StudyError as exc:
        messages.error(request, str(exc))
        return
    messages.success(
        request,
        f"Imported {lang}.po: {len(done.changed)} text(s) changed "
        f"({', '.join(done.changed) or 'none'}).",
    )


@never_cache
@require_http_methods(["GET", "POST"])
@staff_member_required
def translations_page(request: HttpRequest, slug: str) -> HttpResponse:
    study = study_or_404(request, slug, VIEW_PERMS)
    languages = study_languages(study)
    if request.method == "POST":
        _upload(request, study, languages)
        return redirect("console-translations", slug=study.slug)
    rows = translation_catalogue.side_by_side(study)
    can_upload = study.state == Study.State.DRAFT and access.may(request.user, CHANGE_PERM)
    return TemplateResponse(
        request,
        "console/translations.html",
        {
            **site.each_context(request),
            "title": f"Translations: {study.slug}",
            "study": study,
            "languages": languages,
            "others": languages[1:],
            "rows": rows,
            "missing": translation_catalogue.missing_translations(study),
            "can_upload": can_upload,
            "form": TranslationUploadForm(languages=languages),
        },
    )
