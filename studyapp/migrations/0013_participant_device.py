# The device each participant arrived on: its class (phone, tablet, desktop) and the browser
# window's size, which the welcome page's script posts with its start button. Participants
# who arrived before have none recorded (blank / empty).

from django.db import migrations, models

DEVICES = [("phone", "Phone"), ("tablet", "Tablet"), ("desktop", "Desktop or laptop")]


def _side(which: str) -> models.PositiveSmallIntegerField:
    return models.PositiveSmallIntegerField(
        blank=True, null=True, help_text=f"Browser window's {which} at arrival (CSS px)."
    )


class Migration(migrations.Migration):
    dependencies = [("studyapp", "0012_study_languages")]
    operations = [
        migrations.AddField(
            "participant",
            "device_class",
            models.CharField(
                max_length=10, choices=DEVICES, blank=True, default="", help_text="At arrival."
            ),
        ),
        migrations.AddField("participant", "viewport_width", _side("width")),
        migrations.AddField("participant", "viewport_height", _side("height")),
    ]
