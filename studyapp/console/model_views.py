"""The study's "Decision model" page in the console: the stored model's card, a form to train
one on the study's pool, and (superusers) a form to upload a model file.

Thin, as the other admin pages: the forms collect the choices, `studies.model_training` and
`studies.updates` train, check and store; a refusal comes back as a path-named message under
the field it names (``label_rule.column: ...``) and nothing is stored.
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect
from django.utils.html import format_html, format_html_join
from django.utils.safestring import mark_safe

from recourse_engine.model_training import LABEL_RULES, MODEL_KINDS
from studyapp.console.admin_views import _change_url, _page, _study
from studyapp.definition.errors import ConfigError, StudyError
from studyapp.models import Study
from studyapp.studies import model_training, updates
from studyapp.studies.pool import LABEL_COLUMNS

MAX_MODEL_BYTES = 64 * 1024 * 1024
#: where each part of a label rule is entered on the form
_RULE_FIELDS = {"kind": "rule", "threshold": "threshold", "share": "share", "column": "column"}


class TrainModelForm(forms.Form):
    model_kind = forms.ChoiceField(
        label="Model", choices=list(MODEL_KINDS.items()), initial="logistic"
    )
    rule = forms.ChoiceField(
        label="Label rule (what 'approved' means)",
        choices=list(LABEL_RULES.items()),
        initial="top_quantile",
        widget=forms.RadioSelect,
    )
    threshold = forms.FloatField(
        required=False, help_text="Income threshold rule: the lowest approved income."
    )
    share = forms.FloatField(
        required=False,
        initial=0.5,
        help_text="Top quantile rule: the share of the pool approved, e.g. 0.5 (top half).",
    )
    column = forms.CharField(
        required=False,
        initial=LABEL_COLUMNS[0],
        help_text=f"Column rule: a 0/1 column of the uploaded pool ({', '.join(LABEL_COLUMNS)}).",
    )

    def label_rule(self) -> dict[str, Any]:
        """The rule as `LabelRule.parse` reads it: its kind and its own setting only."""
        kind = self.cleaned_data["rule"]
        key = {"income_threshold": "threshold", "top_quantile": "share", "column": "column"}[kind]
        return {"kind": kind, key: self.cleaned_data.get(key)}

    def add_problems(self, exc: ConfigError) -> None:
        """Each problem under the field its path names (label_rule.column -> column)."""
        for (path, _), message in zip(exc.problems, exc.messages, strict=True):
            head, _, part = path.partition(".")
            name = "model_kind" if head == "model_kind" else _RULE_FIELDS.get(part)
            self.add_error(name if name in self.fields else None, message)


class UploadModelForm(forms.Form):
    model_file = forms.FileField(
        label="Trained model file",
        help_text="Saved with recourse_engine.save_model on this study's schema.",
    )


def model_card_html(study: Study) -> str:
    """The stored model as the study page shows it (or how to get one)."""
    card = study.decision_model_info or {}
    if study.decision_model != "uploaded" or not study.decision_model_blob:
        return mark_safe(  # noqa: S308 - constant text
            "Income rule (the reference study's bank; it cannot judge generated profiles)."
        )
    if not card:
        return mark_safe(  # noqa: S308 - constant text
            "A model file is stored (no card: stored before cards were kept)."
        )
    rate = card.get("approval_rate")
    rows = [
        ("Kind", f"{card.get('kind')} ({card.get('source')})"),
        ("Features", ", ".join(card.get("features") or [])),
        ("Label rule", card.get("label_rule_text", "")),
        ("Trained" if card.get("source") == "trained" else "Uploaded", card.get("at", "")),
        ("sha256", card.get("sha256", "")),
        (
            "Approval rate on the pool",
            "-"
            if rate is None
            else f"{rate:.1%} ({card.get('approved')} of {card.get('pool_rows')} profiles)",
        ),
    ]
    if card.get("pool_hash") and card["pool_hash"] != study.pool_hash:
        rows.append(("Note", "measured on an earlier pool"))
    table = format_html_join(
        "", '<tr><th scope="row">{}</th><td>{}</td></tr>', ((k, v) for k, v in rows)
    )
    coefficients = card.get("coefficients")
    coef_html = ""
    if coefficients:
        coef_rows = format_html_join(
            "",
            "<tr><td>{}</td><td>{}</td></tr>",
            (
                (name, f"{value:+.3f}")
                for name, value in sorted(coefficients.items(), key=lambda kv: -abs(kv[1]))
            ),
        )
        coef_html = format_html(
            '<table id="model-coefficients"><caption>Coefficients (normalised items; '
            "intercept {})</caption><tr><th>Feature</th><th>Coefficient</th></tr>{}</table>",
            f"{card.get('intercept') or 0.0:+.3f}",
            coef_rows,
        )
    return format_html('<table id="model-card">{}</table>{}', table, coef_html)


def decision_model_view(model_admin: Any, request: HttpRequest, pk: int) -> HttpResponse:
    study = _study(model_admin, request, pk)
    frozen = "decision_model" in updates.frozen_parts(study)
    train = TrainModelForm()
    upload = UploadModelForm() if request.user.is_superuser else None
    if request.method == "POST" and frozen:
        messages.error(request, f"Study {study.slug} is {study.state}: its model is frozen.")
        return redirect(_change_url(study))
    if request.method == "POST" and "train" in request.POST:
        train = TrainModelForm(request.POST)
        if train.is_valid():
            try:
                model_training.study_train_decision_model(
                    study=study,
                    kind=train.cleaned_data["model_kind"],
                    label_rule=train.label_rule(),
                )
            except ConfigError as exc:
                train.add_problems(exc)
            except StudyError as exc:
                train.add_error(None, str(exc))
            else:
                return _stored(request, study, "trained on its pool")
    if request.method == "POST" and "upload" in request.POST and upload is not None:
        upload = UploadModelForm(request.POST, request.FILES)
        if upload.is_valid():
            f = upload.cleaned_data["model_file"]
            try:
                if f.size > MAX_MODEL_BYTES:
                    raise StudyError(f"decision model: the file is too big ({f.size:,} bytes)")
                updates.study_set_decision_model(study=study, name="uploaded", blob=f.read())
            except StudyError as exc:
                upload.add_error("model_file", str(exc))
            else:
                return _stored(request, study, "uploaded")
    return _page(
        model_admin,
        request,
        "decision_model.html",
        study,
        title=f"Decision model of {study.slug}",
        frozen=frozen,
        card=model_card_html(study),
        train=train,
        upload=upload,
    )


def _stored(request: HttpRequest, study: Study, how: str) -> HttpResponse:
    study.refresh_from_db()
    rate = (study.decision_model_info or {}).get("approval_rate")
    shown = "" if rate is None else f"; it approves {rate:.1%} of the pool"
    messages.success(request, f"Decision model of {study.slug} {how}{shown}.")
    return redirect(_change_url(study))
