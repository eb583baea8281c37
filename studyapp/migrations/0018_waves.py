"""The multi-wave study (issue 34): the study's wave settings, the participant's current wave,
the three wave states, and every wave's record (`studyapp.wave_models`)."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("studyapp", "0017_study_versions"),
    ]

    operations = [
        migrations.AddField(
            model_name="participant",
            name="wave",
            field=models.PositiveSmallIntegerField(
                default=1, help_text="Multi-wave: the wave the participant is in (1..N)."
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="waves",
            field=models.JSONField(
                blank=True,
                default=None,
                help_text="Multi-wave: waves, schedule, model policy per condition (docs/waves.md).",
                null=True,
            ),
        ),
        migrations.AlterField(
            model_name="participant",
            name="state",
            field=models.CharField(
                choices=[
                    ("screening", "Screening"),
                    ("consent", "Consent"),
                    ("questions_pre", "Questionnaire before the scenario"),
                    ("scenario", "Scenario"),
                    ("profile", "Profile"),
                    ("decision", "The model's decision (rejection page)"),
                    ("waiting", "Waiting for recourses"),
                    ("evaluating", "Evaluating"),
                    ("questions_post", "Questionnaire after the evaluations"),
                    ("completed", "Completed"),
                    ("screened_out", "Screened out"),
                    ("no_recourse", "No admissible recourse"),
                    ("quota_full", "Quota full"),
                    ("failed_attention", "Failed attention check"),
                    ("withdrawn", "Withdrew"),
                    ("declined", "Declined consent"),
                    ("expired", "Did not return before the deadline (delayed release)"),
                    ("approved", "The decision model approved the profile"),
                    ("wave_follow", "Multi-wave: which plan they will follow"),
                    ("wave_away", "Multi-wave: acting on their plan until the next wave"),
                    ("wave_changes", "Multi-wave: back, reporting what they changed"),
                ],
                default="screening",
                max_length=20,
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="kind",
            field=models.CharField(
                choices=[
                    ("recourse", "Recourse evaluation (profile, rejection, plans to rate)"),
                    (
                        "pool_collection",
                        "Pool collection (profile and income only; becomes another study's pool)",
                    ),
                    (
                        "multi_wave",
                        "Multi-wave recourse (act on a plan, return by link, re-apply: docs/waves.md)",
                    ),
                ],
                default="recourse",
                max_length=20,
            ),
        ),
        migrations.CreateModel(
            name="Wave",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("number", models.PositiveSmallIntegerField(help_text="1..N")),
                ("condition", models.CharField(blank=True, default="", max_length=60)),
                ("model_policy", models.CharField(default="frozen", max_length=20)),
                ("announced", models.BooleanField(default=False)),
                ("model_hash", models.CharField(blank=True, default="", max_length=64)),
                (
                    "values",
                    models.JSONField(
                        help_text="The profile scored in this wave: item -> option code."
                    ),
                ),
                (
                    "decision",
                    models.CharField(help_text="approved | rejected | hypothetical", max_length=20),
                ),
                (
                    "probability",
                    models.FloatField(blank=True, help_text="Empty for a rule.", null=True),
                ),
                ("decided_at", models.DateTimeField()),
                (
                    "first_position",
                    models.PositiveSmallIntegerField(
                        default=1, help_text="This wave's plans have positions from here on."
                    ),
                ),
                ("followed_at", models.DateTimeField(blank=True, null=True)),
                (
                    "next_due_at",
                    models.DateTimeField(
                        blank=True,
                        help_text="When the next wave opens for this participant.",
                        null=True,
                    ),
                ),
                (
                    "released_at",
                    models.DateTimeField(blank=True, help_text="Next wave opened.", null=True),
                ),
                (
                    "followed",
                    models.ForeignKey(
                        blank=True,
                        null=True,
                        on_delete=django.db.models.deletion.SET_NULL,
                        related_name="+",
                        to="studyapp.recourse",
                    ),
                ),
                (
                    "participant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="waves",
                        to="studyapp.participant",
                    ),
                ),
            ],
            options={
                "ordering": ["participant", "number"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("participant", "number"), name="wave_unique_number"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="WaveChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "wave",
                    models.PositiveSmallIntegerField(help_text="The re-application wave (2..N)."),
                ),
                ("item", models.CharField(max_length=60)),
                ("before", models.FloatField()),
                ("after", models.FloatField()),
                (
                    "planned",
                    models.FloatField(
                        blank=True, help_text="What the followed plan asked.", null=True
                    ),
                ),
                (
                    "effort",
                    models.PositiveSmallIntegerField(blank=True, help_text="1..7", null=True),
                ),
                (
                    "flag",
                    models.CharField(
                        blank=True,
                        default="",
                        help_text="outside | fixed | direction (marked).",
                        max_length=12,
                    ),
                ),
                ("reported_at", models.DateTimeField(auto_now_add=True)),
                (
                    "participant",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wave_changes",
                        to="studyapp.participant",
                    ),
                ),
            ],
            options={
                "ordering": ["participant", "wave", "pk"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("participant", "wave", "item"), name="wave_change_unique_item"
                    )
                ],
            },
        ),
        migrations.CreateModel(
            name="WaveModel",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("condition", models.CharField(blank=True, default="", max_length=60)),
                ("wave", models.PositiveSmallIntegerField()),
                ("policy", models.CharField(max_length=20)),
                ("model_hash", models.CharField(max_length=64)),
                ("blob", models.BinaryField(blank=True, help_text="Empty: frozen.", null=True)),
                (
                    "trained_rows",
                    models.PositiveIntegerField(
                        default=0, help_text="Retrained: participants' profiles added to the pool."
                    ),
                ),
                ("created_at", models.DateTimeField(auto_now_add=True)),
                (
                    "study",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="wave_models",
                        to="studyapp.study",
                    ),
                ),
            ],
            options={
                "ordering": ["study", "condition", "wave"],
                "constraints": [
                    models.UniqueConstraint(
                        fields=("study", "condition", "wave"), name="wave_model_unique_wave"
                    )
                ],
            },
        ),
    ]
