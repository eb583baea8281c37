"""Settings from environment variables, with an embedded default that needs no server.

No environment set: SQLite in ``var/`` and a Celery broker in a second SQLite file (kombu's
SQLAlchemy transport, see broker.py), served by a real worker process. ``DATABASE_URL`` and
``CELERY_BROKER_URL`` switch to PostgreSQL and Redis (see docker-compose.yml).

Variables: DJANGO_SECRET_KEY, DJANGO_DEBUG, DJANGO_ALLOWED_HOSTS, DJANGO_CSRF_TRUSTED_ORIGINS,
DATABASE_URL, CELERY_BROKER_URL, STUDYAPP_PGBOUNCER, STUDYAPP_DB_CONN_MAX_AGE,
STUDYAPP_CACHE_URL, STUDYAPP_CACHE_PREFIX, STUDYAPP_VAR_DIR, STUDYAPP_QUEUE,
STUDYAPP_TASK_TIME_LIMIT, STUDYAPP_TASKS_EAGER, STUDYAPP_STATIC_ROOT, STUDYAPP_SWEEP_AFTER_S,
STUDYAPP_SWEEP_EVERY_S, STUDYAPP_FIT_WAIT_S, STUDYAPP_RETENTION_EVERY_S, STUDYAPP_TOKEN_RATE,
STUDYAPP_TEMPLATES_DIR;
HTTPS behind a proxy and login throttling: docs/deploy.md.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

import dj_database_url

from studyapp.config import celery_queues

BASE_DIR = Path(__file__).resolve().parents[2]
#: where a site keeps its own files (var/, templates/): the checkout, or for an installed
#: package the folder it runs in, never site-packages, which the next upgrade replaces
SITE_DIR = BASE_DIR if (BASE_DIR / "manage.py").is_file() else Path.cwd()
VAR_DIR = Path(os.environ.get("STUDYAPP_VAR_DIR", SITE_DIR / "var")).resolve()


def env_bool(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw == "":
        return default
    return raw.strip().lower() in ("1", "true", "yes", "on")


def env_list(name: str, default: str) -> list[str]:
    return [p.strip() for p in os.environ.get(name, default).split(",") if p.strip()]


def _embedded_secret_key() -> str:
    """A per-checkout key kept in var/ so sessions survive restarts of the embedded default."""
    path = VAR_DIR / "secret_key"
    try:
        return path.read_text().strip()
    except OSError:
        VAR_DIR.mkdir(parents=True, exist_ok=True)
        key = secrets.token_urlsafe(50)
        path.write_text(key)
        path.chmod(0o600)
        return key


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY") or _embedded_secret_key()
ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", "127.0.0.1,localhost,testserver")
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", "")

INSTALLED_APPS = [
    "studyapp.console.site.ConsoleAdminConfig",  # django.contrib.admin, the console's site
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",  # Swagger UI served from our static files: works offline
    "django_jsonform",  # the console's structured settings editor (its JS is in our static files)
    "django_celery_beat",  # beat's schedule lives in the database (survives restarts)
    "axes",  # login throttling (failed attempts per address and username)
    "studyapp",
    "studyapp.coding",  # qualitative coding of the free-text answers (its own tables)
]

MIDDLEWARE = [
    # the balancer's health check (/healthz), answered before anything else (docs/deploy.md)
    "studyapp.config.health.HealthMiddleware",
    # its time covers every other middleware (request latency by page, /metrics)
    "studyapp.metrics.middleware.RequestLatencyMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # sessions, users, versions' authors and the session's messages: not for participant
    # URLs (/s/, /p/), which skip them (studyapp/config/participant_middleware.py)
    "studyapp.config.participant_middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "studyapp.config.participant_middleware.AuthenticationMiddleware",
    "studyapp.config.participant_middleware.ActorMiddleware",  # who made a study's change
    "studyapp.config.participant_middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "studyapp.config.urls"
WSGI_APPLICATION = "studyapp.config.wsgi.application"

#: a site's own templates (templates/README.md): a file here named as a packaged participant
#: page (``studyapp/<page>.html``, Jinja2) or console template is used instead of that one
SITE_TEMPLATES_DIR = Path(os.environ.get("STUDYAPP_TEMPLATES_DIR", SITE_DIR / "templates"))

TEMPLATES = [
    {
        # the participant pages (studyapp/participation/jinja_env.py says why Jinja2); this
        # engine serves only names under studyapp/, so the site's console templates stay Django's
        "BACKEND": "django.template.backends.jinja2.Jinja2",
        "DIRS": [SITE_TEMPLATES_DIR, BASE_DIR / "studyapp" / "jinja2"],
        "APP_DIRS": False,
        "OPTIONS": {
            "environment": "studyapp.participation.jinja_env.environment",
            "context_processors": ["django.contrib.messages.context_processors.messages"],
        },
    },
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        # inside the package, so an installed `recourse-study` finds them too
        "DIRS": [SITE_TEMPLATES_DIR, BASE_DIR / "studyapp" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# --- database ---------------------------------------------------------------------------
_default_db = f"sqlite:///{VAR_DIR / 'db.sqlite3'}"
#: seconds a web thread or worker keeps its database connection (0: one per request)
DB_CONN_MAX_AGE = int(os.environ.get("STUDYAPP_DB_CONN_MAX_AGE", "60"))
DATABASES = {
    "default": dj_database_url.parse(
        os.environ.get("DATABASE_URL") or _default_db,
        conn_max_age=DB_CONN_MAX_AGE,
        conn_health_checks=True,
    )
}
#: DATABASE_URL points at PgBouncer in transaction mode (docs/deploy.md): a server connection
#: is lent for one transaction only, so nothing may outlive one on it. Server-side cursors
#: (`.iterator()`) would, and so would prepared statements (psycopg's are per connection;
#: Django's client-side binding makes none, and prepare_threshold=None says so whatever the
#: binding). The kept connection is then a client connection to PgBouncer: cheap to keep, and
#: health-checked before reuse (a restarted PgBouncer closes it).
PGBOUNCER = env_bool("STUDYAPP_PGBOUNCER", False)
if PGBOUNCER:
    if DATABASES["default"]["ENGINE"] != "django.db.backends.postgresql":
        raise ValueError("STUDYAPP_PGBOUNCER=1 needs a postgres:// DATABASE_URL (PgBouncer's)")
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    DATABASES["default"].setdefault("OPTIONS", {})["prepare_threshold"] = None
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":
    # Web server and worker write the same file: WAL lets readers run beside one writer,
    # IMMEDIATE transactions take the write lock up front instead of failing on upgrade.
    # Connections are kept between requests as on PostgreSQL (an idle connection in
    # autocommit holds no lock); opening one and setting its pragmas costs every request.
    # Writers queue on a lock that wakes them, not in SQLite's sleeping busy handler
    # (studyapp/sqlite_backend).
    DATABASES["default"]["ENGINE"] = "studyapp.sqlite_backend"
    # tests: Django's in-memory test database, stated (pytest-django recognises the SQLite
    # default only by Django's own engine name)
    DATABASES["default"]["TEST"] = {"NAME": ":memory:"}
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 30,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
    if DATABASES["default"]["NAME"] != ":memory:":
        Path(DATABASES["default"]["NAME"]).parent.mkdir(parents=True, exist_ok=True)

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- cache: shared by every web node when there are several (docs/deploy.md) -------------
# The API's login throttle and a previewed pool upload (`console.pending_pools`) live here.
# Unset: each process's own memory, right for the embedded default on one host (a pool
# preview then waits in var/); several web nodes need STUDYAPP_CACHE_URL (redis://...).
CACHE_URL = os.environ.get("STUDYAPP_CACHE_URL", "")
STUDYAPP_SHARED_CACHE = bool(CACHE_URL)
if CACHE_URL:
    if not CACHE_URL.startswith(("redis://", "rediss://", "unix://")):
        raise ValueError(f"STUDYAPP_CACHE_URL must be a redis:// URL, got {CACHE_URL!r}")
    CACHES = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": CACHE_URL,
            "KEY_PREFIX": os.environ.get("STUDYAPP_CACHE_PREFIX", "studyapp"),
        }
    }

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]

LANGUAGE_CODE = "en"
#: participant pages run in the participant's language, one of the study's (participation.language)
LANGUAGES = [("en", "English"), ("ja", "Japanese")]
LOCALE_PATHS = [BASE_DIR / "studyapp" / "locale"]
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# --- REST API (researchers only; participants never reach it) ------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.TokenAuthentication",
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_FILTER_BACKENDS": ["django_filters.rest_framework.DjangoFilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.PageNumberPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    # the token endpoint takes a password: throttled per client address (the cache: one
    # count for every web node when STUDYAPP_CACHE_URL is set)
    "DEFAULT_THROTTLE_RATES": {"token": os.environ.get("STUDYAPP_TOKEN_RATE", "10/min")},
    # X-Forwarded-For is trusted only as far as our own proxies (spoofed otherwise)
    "NUM_PROXIES": int(os.environ.get("DJANGO_PROXY_COUNT", "0")),
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Recourse study platform API",
    "DESCRIPTION": "Researchers' API: studies, pools, participants, evaluations, export, monitor.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "StudyStateEnum": "studyapp.models.Study.State",
        "ParticipantStateEnum": "studyapp.models.Participant.State",
        # the same sets, from the model (with labels) and from the settings model (without)
        "LanguageEnum": "studyapp.models.STUDY_LANGUAGES",
        "SettingLanguageEnum": ["en", "ja"],
        "AttentionRuleEnum": "studyapp.models.Study.AttentionRule",
        "SettingAttentionRuleEnum": ["end", "flag"],
        "QuestionPageEnum": ["pre", "post", "evaluation"],
        "KindEnum": "studyapp.release_models.STUDY_KINDS",
        "SettingKindEnum": ["recourse", "pool_collection", "multi_wave"],
        "ReleaseModeEnum": "studyapp.release_models.RELEASE_MODES",
        "SettingReleaseModeEnum": ["immediate", "delayed"],
    },
}

STATIC_URL = "static/"
STATIC_ROOT = Path(os.environ.get("STUDYAPP_STATIC_ROOT", VAR_DIR / "staticfiles"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise warns when it is missing
# Serve straight from the app folders, so the embedded default needs no collectstatic.
WHITENOISE_USE_FINDERS = True

# --- HTTPS behind a TLS proxy (docker-compose sets DJANGO_HTTPS=1; docs/deploy.md) -------
# Off by default: the embedded default serves plain HTTP on 127.0.0.1.
HTTPS = env_bool("DJANGO_HTTPS", False)
if HTTPS:
    # the proxy sets X-Forwarded-Proto (and overwrites whatever a client sent)
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("DJANGO_SSL_REDIRECT", HTTPS)
SECURE_HSTS_SECONDS = int(os.environ.get("DJANGO_HSTS_SECONDS", "31536000" if HTTPS else "0"))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", HTTPS)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_HSTS_PRELOAD", False)
if not SECURE_HSTS_PRELOAD:
    # entering browsers' preload list is the domain owner's decision, not the app's
    SILENCED_SYSTEM_CHECKS = ["security.W021"]
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
#: proxies in front that append to X-Forwarded-For (the client address for throttles)
PROXY_COUNT = int(os.environ.get("DJANGO_PROXY_COUNT", "0"))

# --- login throttling (django-axes): admin login and the API's token endpoint ------------
AUTHENTICATION_BACKENDS = [
    "studyapp.console.login_backend.LoginThrottleBackend",  # django-axes
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = int(os.environ.get("STUDYAPP_LOGIN_FAILURES", "5"))
AXES_COOLOFF_TIME = float(os.environ.get("STUDYAPP_LOGIN_COOLOFF_MINUTES", "15")) / 60  # hours
AXES_LOCKOUT_PARAMETERS = [["ip_address", "username"]]  # one address guessing one account
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_CALLABLE = "studyapp.config.lockout.lockout_response"
AXES_IPWARE_PROXY_COUNT = PROXY_COUNT or None
AXES_IPWARE_PROXY_ORDER = "right-most"  # the address our own proxy appended
AXES_IPWARE_META_PRECEDENCE_ORDER = (
    ("HTTP_X_FORWARDED_FOR", "REMOTE_ADDR") if PROXY_COUNT else ("REMOTE_ADDR",)
)
#: a lost form token shows the study's own page with a way back (not Django's bare 403)
CSRF_FAILURE_VIEW = "studyapp.participation.views.csrf_failure"
X_FRAME_OPTIONS = "DENY"

# --- Celery ------------------------------------------------------------------------------
CELERY_BROKER_URL = os.environ.get("CELERY_BROKER_URL", "")
if not CELERY_BROKER_URL:
    # Embedded default: a SQLite file read by kombu's SQLAlchemy transport, polled every
    # 0.1 s (studyapp/broker.py) instead of kombu's 1 s.
    CELERY_BROKER_URL = f"sqlite:///{VAR_DIR / 'celery-broker.sqlite'}"
    CELERY_BROKER_TRANSPORT = "studyapp.config.broker:Transport"
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
# A queue name of its own lets tests and deployments share one Redis without crosstalk.
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("STUDYAPP_QUEUE", "celery")
# One queue per kind of work (studyapp/config/celery_queues.py, docs/operations.md); each
# name can be set: "STUDYAPP_QUEUE_RECOURSE", "STUDYAPP_QUEUE_FITS", "STUDYAPP_QUEUE_MAIL",
# "STUDYAPP_QUEUE_EXPORTS".
STUDYAPP_QUEUES = celery_queues.queue_names(os.environ.get("STUDYAPP_QUEUE", ""))
CELERY_TASK_QUEUES = celery_queues.task_queues(STUDYAPP_QUEUES, CELERY_TASK_DEFAULT_QUEUE)
CELERY_TASK_ROUTES = celery_queues.task_routes(STUDYAPP_QUEUES)
CELERY_TASK_IGNORE_RESULT = True  # progress and results live in the database
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = int(os.environ.get("STUDYAPP_TASK_TIME_LIMIT", "300"))
CELERY_TASK_SOFT_TIME_LIMIT = max(1, CELERY_TASK_TIME_LIMIT - 30)
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TASK_ALWAYS_EAGER = env_bool("STUDYAPP_TASKS_EAGER", False)
CELERY_TASK_EAGER_PROPAGATES = True
# The sweeper (studyapp/generation/sweeper.py) queues again the recourse task of anyone
# waiting with no sign of it for STUDYAPP_SWEEP_AFTER_S; beat runs it every ..._EVERY_S.
STUDYAPP_SWEEP_AFTER_S = float(os.environ.get("STUDYAPP_SWEEP_AFTER_S", "45"))
STUDYAPP_SWEEP_EVERY_S = float(os.environ.get("STUDYAPP_SWEEP_EVERY_S", "15"))
# How long a participant's recourses wait for a recourse method's fit before the fallback.
STUDYAPP_FIT_WAIT_S = float(os.environ.get("STUDYAPP_FIT_WAIT_S", "600"))
# Delayed release: how often beat runs the schedule; the base of links in e-mails; mail
# goes through Django's backends (the console backend unless a deployment sets one).
STUDYAPP_RELEASE_EVERY_S = float(os.environ.get("STUDYAPP_RELEASE_EVERY_S", "300"))
STUDYAPP_BASE_URL = os.environ.get("STUDYAPP_BASE_URL", "http://127.0.0.1:8000")
EMAIL_BACKEND = os.environ.get("EMAIL_BACKEND", "django.core.mail.backends.console.EmailBackend")
EMAIL_HOST = os.environ.get("EMAIL_HOST", "localhost")
EMAIL_PORT = int(os.environ.get("EMAIL_PORT", "25"))
EMAIL_HOST_USER = os.environ.get("EMAIL_HOST_USER", "")
EMAIL_HOST_PASSWORD = os.environ.get("EMAIL_HOST_PASSWORD", "")
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", False)
DEFAULT_FROM_EMAIL = os.environ.get("DEFAULT_FROM_EMAIL", "studies@localhost")
#: the sender of the e-mails participants get (delayed release: their link, the release
#: notice, reminders); set it to an address participants can reply to
STUDY_EMAIL_FROM = os.environ.get("STUDY_EMAIL_FROM", DEFAULT_FROM_EMAIL)
# Retention (docs/data-protection.md): how often beat deletes what studies' rules make due.
STUDYAPP_RETENTION_EVERY_S = float(os.environ.get("STUDYAPP_RETENTION_EVERY_S", "86400"))
# Prolific (docs/prolific.md): the Fernet key that encrypts the studies' API tokens (none set:
# connecting a study is refused, saying so); `cryptography.fernet.Fernet.generate_key()`.
STUDYAPP_PANEL_KEY = os.environ.get("STUDYAPP_PANEL_KEY", "")
CELERY_BEAT_SCHEDULE = {
    "sweep-waiting": {"task": "studyapp.tasks.sweep_waiting", "schedule": STUDYAPP_SWEEP_EVERY_S},
    # delayed release (studyapp/participation/release.py): release, remind, expire
    "release-due": {"task": "studyapp.tasks.release_due", "schedule": STUDYAPP_RELEASE_EVERY_S},
    # retention (studyapp/retention/): delete what is due, with receipts; daily by default
    "apply-retention": {
        "task": "studyapp.tasks.apply_retention",
        "schedule": STUDYAPP_RETENTION_EVERY_S,
    },
}
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_BEAT_SCHEDULE_FILENAME = str(VAR_DIR / "celerybeat-schedule")
if CELERY_BROKER_URL.startswith("redis"):
    # acks_late: an unacknowledged task is re-delivered after this many seconds, so longer
    # than the longest task (a method fit's own limit, 3600 s) or a running fit is started
    # twice; a lost recourse task does not wait for it, the sweeper queues it again.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": 2 * max(CELERY_TASK_TIME_LIMIT, 3600)}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("DJANGO_LOG_LEVEL", "WARNING")},
    "loggers": {"studyapp": {"level": os.environ.get("STUDYAPP_LOG_LEVEL", "INFO")}},
}
