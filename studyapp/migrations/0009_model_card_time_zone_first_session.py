# Written by hand (Django 5.2): the stored model's card, the study's time zone, and a code for
# a delayed-release study's first session.

import secrets

from django.db import migrations, models

import studyapp.models


def add_first_session_code(apps, schema_editor):
    """Existing studies get a code (no redirect) for the first session of a delayed release."""
    Study = apps.get_model('studyapp', 'Study')
    for study in Study.objects.all():
        codes = dict(study.outcome_codes or {})
        if 'first_session' not in codes:
            codes['first_session'] = {'code': secrets.token_hex(4).upper(), 'redirect_url': ''}
            study.outcome_codes = codes
            study.save(update_fields=['outcome_codes'])


class Migration(migrations.Migration):

    dependencies = [
        ('studyapp', '0008_delayed_release'),
    ]

    operations = [
        migrations.AddField(
            model_name='study',
            name='decision_model_info',
            field=models.JSONField(blank=True, default=dict, help_text="The stored model's card: kind, features, label rule, when it was trained or uploaded, sha256, approval rate on the pool, coefficients (linear models)."),
        ),
        migrations.AddField(
            model_name='study',
            name='time_zone',
            field=models.CharField(default='UTC', help_text='IANA time zone of the times participants read.', max_length=64),
        ),
        migrations.AlterField(
            model_name='study',
            name='outcome_codes',
            field=models.JSONField(default=studyapp.models.default_outcome_codes, help_text='Outcome -> {code, redirect_url}: completed, screened_out, quota_full, failed_attention, withdrew, declined_consent, expired, first_session.'),
        ),
        migrations.RunPython(add_first_session_code, migrations.RunPython.noop),
    ]
