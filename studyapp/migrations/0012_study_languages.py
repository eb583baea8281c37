# Several languages in one study: `Study.languages` (the default, `language`, first) and the
# language each participant takes the study in. Existing studies run in their one language
# and their participants took it in that language, so both are filled from `language`.

from django.db import migrations, models


def fill_languages(apps, schema_editor):
    Study = apps.get_model("studyapp", "Study")
    Participant = apps.get_model("studyapp", "Participant")
    for study in Study.objects.all().only("pk", "language"):
        Study.objects.filter(pk=study.pk).update(languages=[study.language])
        Participant.objects.filter(study_id=study.pk, language="").update(language=study.language)


class Migration(migrations.Migration):

    dependencies = [
        ("studyapp", "0001_squashed_0011_approved_branch_decision_page"),
    ]

    operations = [
        migrations.AlterField(
            model_name="study",
            name="language",
            field=models.CharField(
                choices=[("en", "English"), ("ja", "日本語 (Japanese)")],
                default="en",
                help_text="The default language.",
                max_length=8,
            ),
        ),
        migrations.AddField(
            model_name="study",
            name="languages",
            field=models.JSONField(
                blank=True,
                default=list,
                help_text="Every language of the study, the default first.",
            ),
        ),
        migrations.AddField(
            model_name="participant",
            name="language",
            field=models.CharField(
                blank=True,
                default="",
                help_text="The participant's (blank: the study's).",
                max_length=8,
            ),
        ),
        migrations.RunPython(fill_languages, migrations.RunPython.noop),
    ]
