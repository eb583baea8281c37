"""Integrity signals: the study's switch (off for every study made before it, whose consent
text did not mention them) and one record per participant and page."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [('studyapp', '0015_panel')]

    operations: list = [
        migrations.AddField(
            model_name="study",
            name="integrity_signals",
            field=models.BooleanField(
                default=False,
                help_text="Record paste, leaving the page, typing time and item latency on the "
                "rating and question pages (the consent page says so).",
            ),
        ),
        migrations.CreateModel(
            name="IntegrityRecord",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("page", models.CharField(max_length=40)),
                ("submissions", models.PositiveIntegerField(default=1)),
                (
                    "page_ms",
                    models.PositiveIntegerField(default=0, help_text="Time the page was open (ms)."),
                ),
                (
                    "blurs",
                    models.PositiveIntegerField(default=0, help_text="Times the window lost focus."),
                ),
                (
                    "hidden",
                    models.PositiveIntegerField(default=0, help_text="Times the tab was hidden."),
                ),
                (
                    "away_ms",
                    models.PositiveIntegerField(
                        default=0, help_text="Time away (hidden or blurred)."
                    ),
                ),
                (
                    "pastes",
                    models.PositiveIntegerField(default=0, help_text="Paste events, all fields."),
                ),
                ("pasted_chars", models.PositiveIntegerField(default=0)),
                (
                    "typing_ms",
                    models.PositiveIntegerField(
                        default=0, help_text="Time spent typing, all fields."
                    ),
                ),
                (
                    "fields",
                    models.JSONField(
                        blank=True,
                        default=dict,
                        help_text="Field -> {pastes, pasted_chars, inputs, typing_ms, first_ms}.",
                    ),
                ),
                ("received_at", models.DateTimeField(auto_now=True)),
                (
                    "participant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="integrity_records",
                        to="studyapp.participant",
                    ),
                ),
            ],
            options={"ordering": ["participant", "pk"]},
        ),
        migrations.AddConstraint(
            model_name="integrityrecord",
            constraint=models.UniqueConstraint(
                fields=("participant", "page"), name="integrity_unique_page"
            ),
        ),
    ]
