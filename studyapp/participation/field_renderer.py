"""The participant forms' renderer: a field in one template (``studyapp/_field.html``).

Django's Jinja2 form renderer writes a field through a template per part: field.html, the
label, the error list, the widget, and for a radio list or check boxes three more per option
(a 7-point rating: some thirty templates). The participant pages carry dozens of such fields,
so `PageRenderer` writes the field with one template instead, from the same label and widget
contexts Django builds (`field_view`), in the same Jinja2 environment (markupsafe escaping,
output stripped), with what a participant on a phone or with a screen reader needs beyond
Django's markup: each option a row with its input inside its label, a lone tick box beside
its label, a rating scale's group described by its two ends (`scale_anchors`). A widget the
template does not know (`widget_context` None) is rendered by Django as before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import django.forms
from django.conf import settings
from django.forms import BoundField
from django.forms.renderers import Jinja2
from django.template.backends.jinja2 import Jinja2 as Jinja2Backend
from django.utils.functional import cached_property
from django.utils.html import format_html
from django.utils.translation import gettext
from markupsafe import Markup, escape

#: widget templates whose markup `studyapp/_field.html` writes itself
INPUT_TEMPLATES = frozenset(
    f"django/forms/widgets/{name}.html"
    for name in ("input", "text", "number", "email", "hidden", "checkbox", "password", "url")
)
CHOICE_TEMPLATES = {
    "django/forms/widgets/radio.html": "django/forms/widgets/radio_option.html",
    "django/forms/widgets/checkbox_select.html": "django/forms/widgets/checkbox_option.html",
}
TEXTAREA_TEMPLATE = "django/forms/widgets/textarea.html"


def attrs(values: dict[str, Any]) -> Markup:
    """Django's widgets/attrs.html: ``True`` a bare name, ``False`` left out."""
    return Markup(
        "".join(
            f" {escape(name)}" if value is True else f' {escape(name)}="{escape(value)}"'
            for name, value in values.items()
            if value is not False
        )
    )


def _label(bf: BoundField, tag: str) -> dict[str, Any]:
    """What Django's ``BoundField.label_tag`` hands its label template (Django 5.2)."""
    contents: Any = bf.label
    suffix = bf.field.label_suffix if bf.field.label_suffix is not None else bf.form.label_suffix
    if suffix and contents and contents[-1] not in gettext(":?.!"):
        contents = format_html("{}{}", contents, suffix)
    widget = bf.field.widget
    id_ = widget.attrs.get("id") or bf.auto_id
    tag_attrs: dict[str, str] = {}
    if id_:
        id_for_label = widget.id_for_label(id_)
        if id_for_label:
            tag_attrs["for"] = id_for_label
        css = getattr(bf.form, "required_css_class", None)
        if bf.field.required and css is not None:
            tag_attrs["class"] = f"{tag_attrs['class']} {css}" if "class" in tag_attrs else css
    return {"label": contents, "attrs": tag_attrs, "use_tag": bool(id_), "tag": tag}


def _known(widget: Any) -> bool:
    name = widget.template_name
    if name in CHOICE_TEMPLATES:
        return bool(CHOICE_TEMPLATES[name] == widget.option_template_name)
    return name in INPUT_TEMPLATES or name == TEXTAREA_TEMPLATE


def widget_context(bf: BoundField) -> dict[str, Any] | None:
    """The ``widget`` context Django's ``BoundField.as_widget`` renders, without rendering;
    None where `studyapp/_field.html` does not know the widget."""
    widget = bf.field.widget
    if bf.field.show_hidden_initial or not _known(widget):
        return None
    if bf.field.localize:
        widget.is_localized = True
    widget_attrs = bf.build_widget_attrs({}, widget)
    if bf.auto_id and "id" not in widget.attrs:
        widget_attrs.setdefault("id", bf.auto_id)
    return widget.get_context(name=bf.html_name, value=bf.value(), attrs=widget_attrs)["widget"]


def scale_anchors(bf: BoundField) -> str:
    """A rating scale's two ends in words ("A scale from “1. Strongly no” to “7. Strongly
    yes”"), which describe its radio group to a screen reader; "" for other fields."""
    choices = list(getattr(bf.field, "choices", []))
    if not getattr(bf.field.widget, "is_scale", False) or len(choices) < 2:
        return ""
    low, high = str(choices[0][1]), str(choices[-1][1])
    return gettext("A scale from “%(low)s” to “%(high)s”") % {"low": low, "high": high}


def field_view(bf: BoundField) -> dict[str, Any]:
    """Everything `studyapp/_field.html` needs besides the bound field itself."""
    use_fieldset = bf.use_fieldset
    widget = widget_context(bf)
    anchors = scale_anchors(bf)
    tick_box = widget is not None and widget.get("type") == "checkbox" and "optgroups" not in widget
    described = [f"{bf.auto_id}_anchors" if anchors else "", bf.aria_describedby or ""]
    return {
        "widget": widget,
        "textarea": widget is not None and widget["template_name"] == TEXTAREA_TEMPLATE,
        "tick_box": tick_box,
        "use_fieldset": use_fieldset,
        "label": _label(bf, "legend" if use_fieldset else "label") if bf.label else None,
        "anchors": anchors,
        "describedby": " ".join(d for d in described if d),
    }


class PageRenderer(Jinja2):
    """Django's Jinja2 form renderer, with a field written by one template."""

    field_template_name = "studyapp/_field.html"

    @cached_property
    def engine(self) -> Jinja2Backend:
        engine = self.backend(
            {
                "APP_DIRS": True,
                "DIRS": [
                    Path(django.forms.__file__).parent / "jinja2",
                    settings.SITE_TEMPLATES_DIR,  # a site's own studyapp/_field.html
                    Path(__file__).resolve().parents[1] / "jinja2",
                ],
                "NAME": "djangoforms",
                "OPTIONS": {},
            }
        )
        engine.env.globals.update(field_view=field_view, attrs=attrs)
        return engine
