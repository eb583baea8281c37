"""Issue 31: blind mode and chosen fields per study (CodingSettings), questionnaire answers
as units (participant set on every coding and final code, evaluation optional), memos per
answer, and the history of the codebook, of codings and of final codes. Written from
`makemigrations studyapp_coding --dry-run -v 3`, with a data step that fills the new
participant link of existing rows from their evaluation."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


def participants_of_codings(apps, schema_editor):  # noqa: ANN001, ANN201
    for name in ("Coding", "FinalCode"):
        model = apps.get_model("studyapp_coding", name)
        for row in model.objects.filter(participant__isnull=True).select_related("evaluation"):
            row.participant_id = row.evaluation.participant_id
            row.save(update_fields=["participant"])


class Migration(migrations.Migration):
    dependencies = [
        ("studyapp_coding", "0001_initial"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name="CodeChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("code", models.CharField(max_length=40)),
                (
                    "action",
                    models.CharField(
                        choices=[("added", "Added"), ("edited", "Edited"), ("deleted", "Deleted")],
                        max_length=10,
                    ),
                ),
                ("definition", models.TextField(blank=True, default="")),
                ("example", models.TextField(blank=True, default="")),
                ("at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["study", "at", "pk"],
            },
        ),
        migrations.CreateModel(
            name="CodingChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("unit", models.CharField(max_length=100)),
                (
                    "action",
                    models.CharField(
                        choices=[
                            ("coded", "Coded"),
                            ("edited", "Edited"),
                            ("undone", "Undone"),
                            ("code_deleted", "Code Deleted"),
                        ],
                        max_length=14,
                    ),
                ),
                (
                    "codes",
                    models.TextField(blank=True, default="", help_text="';'-joined, sorted."),
                ),
                ("at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["study", "unit", "at", "pk"],
            },
        ),
        migrations.CreateModel(
            name="CodingSettings",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                (
                    "blind",
                    models.BooleanField(
                        default=True,
                        help_text="Coders see neither method, condition nor strategy until all have finished.",
                    ),
                ),
                (
                    "show_plan",
                    models.BooleanField(
                        default=True,
                        help_text="Coders see the plan (changed items) beside the answer.",
                    ),
                ),
                (
                    "fields",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="Free-text fields to code; empty: every one.",
                    ),
                ),
                ("changed_at", models.DateTimeField(auto_now=True)),
            ],
        ),
        migrations.CreateModel(
            name="FinalCodeChange",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("unit", models.CharField(max_length=100)),
                (
                    "codes",
                    models.TextField(blank=True, default="", help_text="';'-joined, sorted."),
                ),
                ("decided_at", models.DateTimeField()),
                ("note", models.TextField(blank=True, default="")),
            ],
            options={
                "ordering": ["study", "unit", "decided_at", "pk"],
            },
        ),
        migrations.CreateModel(
            name="Memo",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("field", models.CharField(max_length=70)),
                ("unit", models.CharField(max_length=100)),
                ("text", models.TextField()),
                ("written_at", models.DateTimeField(auto_now_add=True)),
            ],
            options={
                "ordering": ["study", "unit", "written_at", "pk"],
            },
        ),
        migrations.AddField(
            model_name="coding",
            name="participant",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="codings",
                to="studyapp.participant",
            ),
        ),
        migrations.AddField(
            model_name="finalcode",
            name="participant",
            field=models.ForeignKey(
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="final_codes",
                to="studyapp.participant",
            ),
        ),
        migrations.RunPython(participants_of_codings, migrations.RunPython.noop),
        migrations.AlterField(
            model_name="coding",
            name="participant",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="codings",
                to="studyapp.participant",
            ),
        ),
        migrations.AlterField(
            model_name="finalcode",
            name="participant",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="final_codes",
                to="studyapp.participant",
            ),
        ),
        migrations.AlterField(
            model_name="coding",
            name="evaluation",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="codings",
                to="studyapp.evaluation",
            ),
        ),
        migrations.AlterField(
            model_name="finalcode",
            name="evaluation",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="final_codes",
                to="studyapp.evaluation",
            ),
        ),
        migrations.AddConstraint(
            model_name="coding",
            constraint=models.UniqueConstraint(
                condition=models.Q(("evaluation__isnull", True)),
                fields=("participant", "field", "coder"),
                name="coding_once_per_coder_participant",
            ),
        ),
        migrations.AddConstraint(
            model_name="finalcode",
            constraint=models.UniqueConstraint(
                condition=models.Q(("evaluation__isnull", True)),
                fields=("participant", "field"),
                name="coding_final_once_participant",
            ),
        ),
        migrations.AddField(
            model_name="codechange",
            name="by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="codechange",
            name="study",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="studyapp.study"
            ),
        ),
        migrations.AddField(
            model_name="codingchange",
            name="coder",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="codingchange",
            name="study",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="studyapp.study"
            ),
        ),
        migrations.AddField(
            model_name="codingsettings",
            name="changed_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="codingsettings",
            name="study",
            field=models.OneToOneField(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="coding_settings",
                to="studyapp.study",
            ),
        ),
        migrations.AddField(
            model_name="finalcodechange",
            name="decided_by",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="finalcodechange",
            name="study",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE, related_name="+", to="studyapp.study"
            ),
        ),
        migrations.AddField(
            model_name="memo",
            name="author",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AddField(
            model_name="memo",
            name="evaluation",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="studyapp.evaluation",
            ),
        ),
        migrations.AddField(
            model_name="memo",
            name="participant",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="+",
                to="studyapp.participant",
            ),
        ),
        migrations.AddField(
            model_name="memo",
            name="study",
            field=models.ForeignKey(
                on_delete=django.db.models.deletion.CASCADE,
                related_name="coding_memos",
                to="studyapp.study",
            ),
        ),
        migrations.AddIndex(
            model_name="codingchange",
            index=models.Index(fields=["study", "unit"], name="coding_change_unit"),
        ),
        migrations.AddIndex(
            model_name="finalcodechange",
            index=models.Index(fields=["study", "unit"], name="coding_final_change_unit"),
        ),
        migrations.AddIndex(
            model_name="memo",
            index=models.Index(fields=["study", "unit"], name="coding_memo_unit"),
        ),
    ]
