# The Prolific connection (docs/prolific.md): a study's Prolific study (or two, for delayed
# release) with its API token encrypted, and the ledger of actions sent to Prolific (each
# recorded before it is sent, under a key that is never sent twice).

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('studyapp', '0014_retention'),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.CreateModel(
            name='PanelConnection',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('panel_study_id', models.CharField(help_text="The Prolific study id (the first session's, if two).", max_length=64)),
                ('second_study_id', models.CharField(blank=True, default='', help_text='Delayed release: the Prolific study of the second session (blank: one study, the second session paid as a bonus).', max_length=64)),
                ('token_encrypted', models.BinaryField(help_text='Fernet token of the API key.')),
                ('api_url', models.CharField(default='https://api.prolific.com', max_length=200)),
                ('connected_at', models.DateTimeField(auto_now_add=True)),
                ('connected_by', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.OneToOneField(on_delete=django.db.models.deletion.CASCADE, related_name='panel_connection', to='studyapp.study')),
            ],
        ),
        migrations.CreateModel(
            name='PanelAction',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key', models.CharField(help_text='The idempotency key.', max_length=200, unique=True)),
                ('kind', models.CharField(choices=[('approve', 'Approve'), ('reject', 'Reject'), ('screen_out', 'Screen out'), ('request_return', 'Ask to return'), ('bonus_setup', 'Set up bonuses'), ('bonus_pay', 'Pay bonuses')], max_length=20)),
                ('panel_study_id', models.CharField(max_length=64)),
                ('submission_ids', models.JSONField(blank=True, default=list)),
                ('payload', models.JSONField(blank=True, default=dict, help_text='What was sent (no token).')),
                ('state', models.CharField(choices=[('pending', 'Recorded, not yet answered'), ('sent', 'Sent and accepted'), ('failed', 'Refused or unreachable')], default='pending', max_length=10)),
                ('attempts', models.PositiveSmallIntegerField(default=0, help_text='HTTP requests made.')),
                ('response', models.JSONField(blank=True, default=dict)),
                ('error', models.TextField(blank=True, default='')),
                ('by', models.CharField(help_text='Who: the account, or the command line.', max_length=150)),
                ('created_at', models.DateTimeField(auto_now_add=True)),
                ('sent_at', models.DateTimeField(blank=True, null=True)),
                ('by_user', models.ForeignKey(blank=True, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='+', to=settings.AUTH_USER_MODEL)),
                ('study', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='panel_actions', to='studyapp.study')),
            ],
            options={
                'ordering': ['-created_at', '-pk'],
                'indexes': [models.Index(fields=['study', 'kind'], name='studyapp_pa_study_i_4d24c0_idx')],
            },
        ),
    ]
