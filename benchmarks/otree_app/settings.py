"""oTree project of the capacity benchmark: the study's pages in oTree (docs/deploy.md,
Capacity). bench_capacity copies this folder to a temp folder and serves it there with
`otree prodserver` on 127.0.0.1."""

from os import environ

SESSION_CONFIGS = [
    dict(name="recourse", app_sequence=["recourse_pages"], num_demo_participants=1),
]
SESSION_CONFIG_DEFAULTS = dict(real_world_currency_per_point=1.00, participation_fee=0.00, doc="")
PARTICIPANT_FIELDS = []
SESSION_FIELDS = []
LANGUAGE_CODE = "en"
REAL_WORLD_CURRENCY_CODE = "USD"
USE_POINTS = True
ADMIN_USERNAME = "admin"
ADMIN_PASSWORD = environ.get("OTREE_ADMIN_PASSWORD")
DEMO_PAGE_INTRO_HTML = ""
# a benchmark on 127.0.0.1 only; a deployment sets its own
SECRET_KEY = environ.get("OTREE_SECRET_KEY", "capacity-benchmark-only")
