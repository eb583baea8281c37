"""A study's version history and its registrations (`studyapp.version_models`)."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [('studyapp', '0016_integrity')]

    operations: list = [
        migrations.CreateModel(
            name="StudyVersion",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("number", models.PositiveIntegerField(help_text="1, 2, ... per study.")),
                ("sha256", models.CharField(help_text="SHA-256 of the canonical document.", max_length=64)),
                ("document", models.JSONField(help_text="The study file document of this version.")),
                ("at", models.DateTimeField(auto_now_add=True)),
                ("note", models.CharField(blank=True, default="", max_length=300)),
                ("by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="versions", to="studyapp.study")),
            ],
            options={"ordering": ["study", "number"]},
        ),
        migrations.AddConstraint(
            model_name="studyversion",
            constraint=models.UniqueConstraint(fields=("study", "number"), name="study_version_unique"),
        ),
        migrations.CreateModel(
            name="StudyRegistration",
            fields=[
                ("id", models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name="ID")),
                ("sha256", models.CharField(help_text="SHA-256 of the bundle's bytes.", max_length=64)),
                ("bundle", models.TextField(help_text="The bundle as canonical JSON, exactly as hashed.")),
                ("reason", models.CharField(choices=[("live", "The study went live"), ("register", "Registered by a researcher")], max_length=10)),
                ("at", models.DateTimeField(auto_now_add=True)),
                ("by", models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, to=settings.AUTH_USER_MODEL)),
                ("study", models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name="registrations", to="studyapp.study")),
                ("version", models.ForeignKey(on_delete=django.db.models.deletion.RESTRICT, related_name="+", to="studyapp.studyversion")),
            ],
            options={"ordering": ["study", "at", "pk"]},
        ),
    ]
