"""The one settings module. Everything that differs between machines comes from the environment.

With nothing set, the platform runs on an SQLite file in ``var/``, an in-memory channel layer
and in-process Celery tasks, so ``make run`` works on a fresh machine.
"""

from __future__ import annotations

import contextlib
import math
import os
import re
import secrets
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import dj_database_url
from django.core.exceptions import ImproperlyConfigured
from redis.exceptions import ConnectionError as RedisConnectionError

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("TOMORI_VAR_DIR", BASE_DIR / "var"))


# Every variable is parsed strictly (as healthchecks does): a value that is not what the variable
# takes refuses the start with one line naming it (manage.py prints it), never a silent default; a
# typo would otherwise serve cookies over plain HTTP, drop HSTS or change a limit unnoticed.
_YES, _NO = frozenset({"1", "true", "yes", "on"}), frozenset({"0", "false", "no", "off"})


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name, "").strip().lower()
    if not raw:
        return default
    if raw not in _YES | _NO:
        raise ImproperlyConfigured(f"{name}={raw!r} is not one of 1/0, true/false, yes/no, on/off")
    return raw in _YES


def env_int(name: str, default: int, minimum: int | None = 0) -> int:
    """A whole number of at least ``minimum`` (None: any)."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None
    if minimum is not None and value < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} is below its minimum of {minimum}")
    return value


def env_tunable(name: str, default: int) -> int:
    """A pipeline tunable: any whole number, which chatcontext.core.config clamps as
    docs/behaviour/build-context.md §0.1 says (e.g. a timeout of 0 or less is the default)."""
    return env_int(name, default, minimum=None)


def env_seconds(name: str, default: float) -> float:
    """A positive, finite number of seconds."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not (math.isfinite(value) and value > 0):
        raise ImproperlyConfigured(f"{name}={raw!r} is not a positive number of seconds")
    return value


DEBUG = env_bool("DEBUG", True)


def local_secret_key(path: Path) -> str:
    """The development key kept in ``path``: generated on the first start, read on every later one,
    so sessions survive a restart. The file is written whole with 0600 permissions under a private
    name and then linked into place, which fails if another process got there first (both then use
    the one that won). Its value is never printed or logged."""
    if path.exists():
        return _stored_key(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    draft = path.with_name(f".{path.name}.{os.getpid()}")
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="ascii") as handle:
            handle.write("dev-" + secrets.token_urlsafe(40) + "\n")
        with contextlib.suppress(FileExistsError):  # another process linked its key first
            os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)
    return _stored_key(path)


def _stored_key(path: Path) -> str:
    key = path.read_text(encoding="ascii").strip()
    if not key:
        raise ImproperlyConfigured(f"{path} is empty: delete it and a new key is generated on the next start.")
    return key


SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = local_secret_key(VAR_DIR / "secret_key")

ALLOWED_HOSTS = [
    h.strip() for h in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",") if h.strip()
]
CSRF_TRUSTED_ORIGINS = [o.strip() for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o.strip()]

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_celery_beat",
    # Only for its templates and static files: /api/docs then loads Swagger UI from this server,
    # not from a CDN (without the app, django-ninja renders a CDN page), so the docs work offline.
    "ninja",
    "simple_history",
    "personas",
    "chatcontext",
    # After personas and chatcontext, before bot: its admin subclasses theirs and bot's subclasses its.
    "community",
    "bot",
    # SillyTavern cards and lorebooks: import and export commands, admin pages, API.
    "characters",
    # For its management commands (``serve``: the ASGI server and the bot child process).
    "botplatform",
    # Login throttling (botplatform.login_throttle).
    "axes",
]

MIDDLEWARE = [
    # /healthz, /readyz, /metrics: answered before the Host check, since probes use the pod's address.
    "botplatform.health.HealthEndpointsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    # With DEBUG on, only superusers get Django's technical 404 and 500 pages (every URL pattern, the
    # settings); the 500 page goes through DEFAULT_EXCEPTION_REPORTER below.
    "botplatform.middleware.PlainNotFoundMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    # Answers a locked-out sign-in with 429 (botplatform.login_throttle); django-axes wants it last.
    "axes.middleware.AxesMiddleware",
]

# The technical 500 page with DEBUG on: for superusers only, and without the URLs' passwords.
DEFAULT_EXCEPTION_REPORTER = "botplatform.middleware.SuperuserExceptionReporter"
DEFAULT_EXCEPTION_REPORTER_FILTER = "botplatform.middleware.CredentialMaskingFilter"

# Every page's Content-Security-Policy (django-csp): scripts only from this server's own files, no
# inline script, so a stored upload or a model's reply rendered in a page can never run script in a
# moderator's session. Inline styles stay allowed: Django's admin change list and Swagger UI set them,
# and a style cannot run script. Images also from Discord's media servers (the inspector shows the
# thumbnails of images sent to a model by their CDN url) and data: URLs (Swagger UI's icons).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", "https://*.discordapp.com", "https://*.discordapp.net", "https://*.discord.com"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

ROOT_URLCONF = "botplatform.urls"
WSGI_APPLICATION = "botplatform.wsgi.application"
ASGI_APPLICATION = "botplatform.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
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

DATABASE_URL = os.environ.get("DATABASE_URL", "").strip()
if DATABASE_URL:
    DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DB_CONN_MAX_AGE", 0))}
else:
    VAR_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(VAR_DIR / "db.sqlite3"),
            "OPTIONS": {"timeout": 20},
        }
    }
# `replay_turn` and the inspector's replays load a turn snapshot's rows into this private in-memory
# database (one per thread) and roll back, so a replay never touches, collides with or depends on
# the live data (chatcontext/replay_database.py). Queries reach it only inside `replay_database()`.
DATABASES["replay"] = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
DATABASE_ROUTERS = ["chatcontext.replay_database.ReplayRouter"]
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "").strip()
# Seconds one connection attempt to Redis may take: a host that drops packets must not hold a turn
# for the operating system's TCP timeout (minutes) on every live-feed event or cache read.
REDIS_CONNECT_TIMEOUT = 2
# Every key of the channel layer starts with it, so two installations (or test runs) sharing one Redis
# database neither see nor flush each other's groups and messages.
CHANNEL_LAYER_PREFIX = os.environ.get("CHANNEL_LAYER_PREFIX", "").strip() or "asgi"


def redis_channel_layer(url: str, prefix: str = CHANNEL_LAYER_PREFIX) -> dict[str, object]:
    """The Channels layer on Redis. A consumer waits for messages with BZPOPMIN blocking up to
    channels_redis' 5 s, and redis-py (8.x) gives every socket a 5 s read timeout by default: the
    two raced, and an idle live-feed consumer died now and then with "Timeout reading from Redis".
    The socket timeout must stay above the blocking time."""
    host = {
        "address": url,
        "socket_timeout": 30,
        "socket_connect_timeout": REDIS_CONNECT_TIMEOUT,
        # A pooled connection to a Redis that went away and came back fails its first command (the
        # asyncio pool, unlike the cache's, does not check a connection it hands out): redis-py then
        # drops it and tries once more on a new one, so the first event or socket after an outage works.
        "retry_on_error": [RedisConnectionError],
    }
    return {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [host], "prefix": prefix}}


def redis_cache(url: str) -> dict[str, object]:
    """The cache on Redis, best-effort: unreachable, it is a miss (infrastructure.best_effort)."""
    return {
        "BACKEND": "infrastructure.best_effort.BestEffortRedisCache",
        "LOCATION": url,
        "KEY_PREFIX": os.environ.get("CACHE_KEY_PREFIX", "tomori"),
        "OPTIONS": {"socket_connect_timeout": REDIS_CONNECT_TIMEOUT, "socket_timeout": REDIS_CONNECT_TIMEOUT},
    }


if REDIS_URL:
    CHANNEL_LAYERS = {"default": redis_channel_layer(REDIS_URL)}
    CACHES = {"default": redis_cache(REDIS_URL)}
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: Redis broker when configured; otherwise tasks run in-process (eagerly) so `make run`
# needs no broker. What that gives up is written in the README.
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
CELERY_TIMEZONE = "UTC"
# How long a playground message waits for its voice transcript from a worker (with REDIS_URL) before
# the turn goes on without it (bot.playground.service); the default leaves a short voice message time.
PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS = env_seconds("PLAYGROUND_TRANSCRIPTION_WAIT_SECONDS", 30)

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

# Login throttling with django-axes (botplatform.login_throttle): failures are counted per username
# and client address together, and a locked combination is free again after the cool-off.
AUTHENTICATION_BACKENDS = [
    "botplatform.login_throttle.LoginThrottleBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
# The client address is REMOTE_ADDR (axes' default): a header a client sets itself would give it a
# fresh combination per request.
AXES_IPWARE_META_PRECEDENCE_ORDER = ("REMOTE_ADDR",)
# No row per successful sign-in (who signed in from where); failures are kept until reset.
AXES_DISABLE_ACCESS_LOG = True
AXES_CLIENT_STR_CALLABLE = "botplatform.login_throttle.client_description"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
FORMAT_MODULE_PATH = ["botplatform.formats"]  # one date-time format, with its zone (botplatform/formats)
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
# Where collectstatic puts the files the reverse proxy serves (a volume the proxy mounts).
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", "").strip() or BASE_DIR / "staticfiles")

# Discord and the LLM provider.
DISCORD_TOKEN = os.environ.get("DISCORD_TOKEN", "")
# Only for `manage.py invite_url`; without it the id is read from DISCORD_TOKEN.
DISCORD_APPLICATION_ID = os.environ.get("DISCORD_APPLICATION_ID", "").strip()
DISCORD_SHARD_COUNT = env_int("DISCORD_SHARD_COUNT", 0) or None
DISCORD_SHARD_IDS = [int(s) for s in os.environ.get("DISCORD_SHARD_IDS", "").split(",") if s.strip().isdigit()] or None
# The presences intent is privileged: enable it in the developer portal before turning this on.
DISCORD_PRESENCE_INTENT = env_bool("DISCORD_PRESENCE_INTENT", False)
LLM_PROVIDER = os.environ.get("LLM_PROVIDER", "").strip().lower()  # "openai" or "echo"; empty = derive
# The platform's endpoint: base URL, key and model go together (bot.conversation.providers). A server uses it
# unless it picks an approved endpoint or a superuser gave it one of its own.


def http_url(variable: str) -> str:
    """The variable's URL, refused at start-up unless it is http(s) with a host: the SDK would take
    ``localhost:8080/v1`` or a typo for a relative path and fail only at the first turn. The value
    is not repeated in the error (a URL may carry credentials)."""
    value = os.environ.get(variable, "").strip()
    parts = urlsplit(value)
    if value and (parts.scheme not in {"http", "https"} or not parts.hostname):
        raise ImproperlyConfigured(f"{variable} is not an http(s) URL (e.g. http://127.0.0.1:8080/v1)")
    return value


LLM_BASE_URL = http_url("LLM_BASE_URL")
LLM_API_KEY = os.environ.get("LLM_API_KEY", "").strip()
LLM_MODEL = os.environ.get("LLM_MODEL", "").strip()
_ENDPOINT_NAME = re.compile("[a-z0-9][a-z0-9_-]{0,31}")


def approved_endpoints(names: str) -> dict[str, dict[str, Any]]:
    """``LLM_APPROVED_ENDPOINTS=local,fast``: endpoints a moderator may choose by name, each with its
    ``LLM_ENDPOINT_<NAME>_BASE_URL`` (required), ``_API_KEY`` and ``_MODEL`` (``-`` in a name is
    ``_`` in the variable). Their keys stay in the environment; moderators only see the names."""
    endpoints: dict[str, dict[str, Any]] = {}
    for name in (n.strip() for n in names.split(",")):
        if not name:
            continue
        if not _ENDPOINT_NAME.fullmatch(name):
            raise ImproperlyConfigured(f"LLM_APPROVED_ENDPOINTS: {name!r} is not a-z, 0-9, - and _ (32 at most)")
        prefix = f"LLM_ENDPOINT_{name.upper().replace('-', '_')}_"
        base_url = http_url(prefix + "BASE_URL")
        if not base_url:
            raise ImproperlyConfigured(f"LLM_APPROVED_ENDPOINTS names {name!r} but {prefix}BASE_URL is not set")
        endpoints[name] = {
            "base_url": base_url,
            "api_key": os.environ.get(prefix + "API_KEY", "").strip(),
            "model": os.environ.get(prefix + "MODEL", "").strip(),
            "context_window": env_int(prefix + "CONTEXT_WINDOW", LLM_CONTEXT_WINDOW, minimum=MIN_CONTEXT_WINDOW),
            "max_reply_tokens": env_int(prefix + "MAX_REPLY_TOKENS", LLM_MAX_REPLY_TOKENS, minimum=1),
            "cache_hints": env_bool(prefix + "CACHE_HINTS", False),
        }
        fits_reply(prefix, endpoints[name]["context_window"], endpoints[name]["max_reply_tokens"])
    return endpoints


# The reply cap (`max_tokens`) of every request to a model, so no reply runs on without end.
LLM_MAX_REPLY_TOKENS = env_int("LLM_MAX_REPLY_TOKENS", 1024, minimum=1)
# The platform endpoint's context window in tokens: the prompt is cut to fit it with the reply cap
# (chatcontext.core.budget). 8,192 is what small local models commonly run with; a hosted model's is larger.
MIN_CONTEXT_WINDOW = 1024
LLM_CONTEXT_WINDOW = env_int("LLM_CONTEXT_WINDOW", 8192, minimum=MIN_CONTEXT_WINDOW)
# Counted tokens are an estimate (tiktoken's cl100k, not the model's tokenizer): this share is added.
LLM_TOKEN_MARGIN_PERCENT = env_int("LLM_TOKEN_MARGIN_PERCENT", 10)
# Mark the prompt's stable start with `cache_control` (providers that cache by explicit hints); off by default.
LLM_CACHE_HINTS = env_bool("LLM_CACHE_HINTS", False)


def fits_reply(prefix: str, window: int, reply: int) -> None:
    """A window must leave the prompt at least half of itself after the reply cap."""
    if reply > window // 2:
        raise ImproperlyConfigured(
            f"{prefix}MAX_REPLY_TOKENS={reply} leaves too little of {prefix}CONTEXT_WINDOW={window} for the prompt "
            "(at most half the window)"
        )


fits_reply("LLM_", LLM_CONTEXT_WINDOW, LLM_MAX_REPLY_TOKENS)
LLM_APPROVED_ENDPOINTS = approved_endpoints(os.environ.get("LLM_APPROVED_ENDPOINTS", ""))
LLM_TIMEOUT_SECONDS = env_seconds("LLM_TIMEOUT_SECONDS", 60)
# Time budget of one image download for a vision model (bot.conversation.media).
MEDIA_FETCH_TIMEOUT_SECONDS = env_seconds("MEDIA_FETCH_TIMEOUT_SECONDS", 10)
# Most pixels an image from outside may declare (bot.conversation.image_bytes): larger ones are
# refused from their header, before any pixel is decoded (about 4 bytes of memory per pixel).
MAX_IMAGE_PIXELS = env_int("MAX_IMAGE_PIXELS", 25_000_000, minimum=1)
# Persona tools (bot.conversation.tools): model rounds with tool calls per turn before the reply is
# asked for without tools, and how long one tool call may take.
LLM_TOOL_MAX_ROUNDS = int(os.environ.get("LLM_TOOL_MAX_ROUNDS", "3") or 3)
LLM_TOOL_TIMEOUT_SECONDS = env_seconds("LLM_TOOL_TIMEOUT_SECONDS", 10)
# Commands that print links say so while it is the default (it is then likely not where people go).
PUBLIC_BASE_URL_DEFAULT = "http://127.0.0.1:8000"
PUBLIC_BASE_URL = os.environ.get("PUBLIC_BASE_URL", PUBLIC_BASE_URL_DEFAULT).rstrip("/")

# Tunables of the context pipeline (data-model.md §3, build-context.md §0.1): the one place they are
# read; chatcontext takes them from here (chatcontext.core.config.StageConfig, participants.sources),
# which applies their lower bounds.
TOMORI = {
    "EMOJI_STICKER_CACHE_TTL_MINUTES": env_int("EMOJI_STICKER_CACHE_TTL_MINUTES", 10),
    "VOICE_TRANSCRIPT_CACHE_TTL_MINUTES": env_int("VOICE_TRANSCRIPT_CACHE_TTL_MINUTES", 120),
    "MAX_PERSONAL_MEMORIES": env_int("MAX_PERSONAL_MEMORIES", 100),
    "MAX_SERVER_MEMORIES": env_int("MAX_SERVER_MEMORIES", 100),
    "MAX_MEMORY_LENGTH": env_int("MAX_MEMORY_LENGTH", 1000, minimum=1),
    "MAX_REMINDER_PURPOSE_LENGTH": env_int("MAX_REMINDER_PURPOSE_LENGTH", 1000, minimum=1),
    # Days the audit trail keeps old versions (community.retention.prune_history); 0 keeps them.
    "AUDIT_HISTORY_DAYS": env_int("AUDIT_HISTORY_DAYS", 0),
    "PARTICIPANT_SOURCE_TIMEOUT_MS": env_tunable("PARTICIPANT_SOURCE_TIMEOUT_MS", 1500),
    "REACTION_CONTEXT_ENABLED": env_bool("REACTION_CONTEXT_ENABLED", True),
    "REACTION_CONTEXT_MAX_API_CALLS_PER_TURN": env_tunable("REACTION_CONTEXT_MAX_API_CALLS_PER_TURN", 20),
    "REACTION_CONTEXT_MAX_REACTIONS_PER_MESSAGE": env_tunable("REACTION_CONTEXT_MAX_REACTIONS_PER_MESSAGE", 4),
    "REACTION_CONTEXT_MAX_USERS_PER_REACTION": env_tunable("REACTION_CONTEXT_MAX_USERS_PER_REACTION", 5),
    "FORWARD_CHAIN_MAX_DEPTH": env_tunable("FORWARD_CHAIN_MAX_DEPTH", 3),
    # Only the exact word disables it (BC8-11).
    "EMOJI_PENALTY_ENABLED": os.environ.get("EMOJI_PENALTY_ENABLED", "") != "false",
    # [QUIRK] the reference falls back to 2 for an unparsable lookback; we use the documented default
    # 3 so a typo does not silently change behaviour.
    "EMOJI_PENALTY_LOOKBACK": env_tunable("EMOJI_PENALTY_LOOKBACK", 3),
    "EMOJI_PENALTY_THRESHOLD": env_tunable("EMOJI_PENALTY_THRESHOLD", 1),
    "MEDIA_IMAGE_MESSAGE_LIMIT": env_tunable("MEDIA_IMAGE_MESSAGE_LIMIT", 3),
    # Messages the history window drops at once when it is full (BC2-07a); 0 slides it one by one.
    "HISTORY_WINDOW_STEP": env_tunable("HISTORY_WINDOW_STEP", 40),
    # User rows a process keeps between turns (chatcontext.personalization); 0 reads them every turn.
    "PERSONALIZATION_CACHE_USERS": env_int("PERSONALIZATION_CACHE_USERS", 50_000),
}
# The main persona's name where a server has none yet (build-context.md §0.1); outside TOMORI, whose
# values are all numbers and switches.
DEFAULT_BOTNAME = os.environ.get("DEFAULT_BOTNAME", "").strip() or "Tomori"

# Production behind a TLS-terminating reverse proxy (docs/deploy.md; .env.example sets all of these).


def proxy_ssl_header(raw: str) -> tuple[str, str] | None:
    """``X-Forwarded-Proto``: the header the proxy sets to ``https``; requests are then secure when it says so."""
    if not raw:
        return None
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9-]{0,63}", raw):
        raise ImproperlyConfigured(f"SECURE_PROXY_SSL_HEADER={raw!r} is not a header name such as X-Forwarded-Proto")
    return ("HTTP_" + raw.upper().replace("-", "_"), "https")


SECURE_PROXY_SSL_HEADER = proxy_ssl_header(os.environ.get("SECURE_PROXY_SSL_HEADER", "").strip())
# /healthz, /readyz and /metrics are not redirected: botplatform.health answers them before this applies.
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", False)
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", False)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", False)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", False)
# /metrics answers loopback callers, and others that send ``Authorization: Bearer <METRICS_TOKEN>``.
METRICS_TOKEN = os.environ.get("METRICS_TOKEN", "").strip()
# prometheus-client's own variable: every process (web, bot, Celery worker and its children) writes its
# metrics into this folder and /metrics adds them up. Unset: /metrics shows the web process's only.
PROMETHEUS_MULTIPROC_DIR = os.environ.get("PROMETHEUS_MULTIPROC_DIR", "").strip()
if PROMETHEUS_MULTIPROC_DIR and not Path(PROMETHEUS_MULTIPROC_DIR).is_dir():
    raise ImproperlyConfigured(f"PROMETHEUS_MULTIPROC_DIR={PROMETHEUS_MULTIPROC_DIR} is not an existing folder")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "filters": {"mask_path_ids": {"()": "botplatform.logging_filters.MaskPathIds"}},
    # Every logger writes through this one handler, so every line is masked: request paths carry
    # Discord ids (django.request, django.server, django.security.*), database errors quote SQL and values.
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain", "filters": ["mask_path_ids"]}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        # Its DEBUG lines are every query with its parameters.
        "django.db.backends": {"level": "WARNING"},
        "django.request": {"level": "WARNING"},
        "django.server": {"level": "INFO"},
        # A line per sign-in otherwise ("Deleted 0 failed login attempts"); lockouts are warnings.
        "axes": {"level": "WARNING"},
    },
}
