"""The platform's Prometheus metrics, defined once for every process that records them (the web
server, the bot, the Celery worker); ``/metrics`` on the web server exposes them
(``botplatform.health``).

The web, the bot and the worker are separate processes (and Celery forks children), so with
``PROMETHEUS_MULTIPROC_DIR`` set every process writes its values into that folder and ``/metrics``
adds them up (prometheus-client's multiprocess mode, chosen by the library from that variable when it
is imported). Without it each process keeps its own, and ``/metrics`` shows the web process's.

Labels never carry a URL, a key, a user or message text: endpoints are named by the operator's
names (``platform``, an approved endpoint's name, ``server`` for a server's own, ``echo``), tools by
the registry's names.
"""

from __future__ import annotations

import atexit
import os
import socket

from django.conf import settings
from prometheus_client import Counter, Gauge, Histogram, multiprocess, values


def process_identifier() -> str:
    """Each process's files in the shared folder: containers sharing it all run their command as pid
    1, so the host name (the container's) keeps web, bot and worker apart; the pid keeps Celery's
    children apart."""
    return f"{socket.gethostname()}_{os.getpid()}"


if settings.PROMETHEUS_MULTIPROC_DIR:
    values.ValueClass = values.MultiProcessValue(process_identifier)

TURNS = Counter("tomori_turns", "Persona turns by outcome.", ["outcome"])
PROVIDER_LATENCY = Histogram(
    "tomori_provider_request_seconds",
    "Duration of one model request, by endpoint name.",
    ["endpoint"],
    buckets=(0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120),
)
PROVIDER_ERRORS = Counter("tomori_provider_errors", "Failed model requests, by endpoint name.", ["endpoint"])
TOOL_CALLS = Counter(
    "tomori_tool_calls",
    "Persona tool calls by tool and status (ok, refused, error).",
    ["tool", "status"],
)
REMINDER_LAG = Histogram(
    "tomori_reminder_lag_seconds",
    "How late a reminder was handed over for delivery after its time.",
    buckets=(1, 5, 15, 30, 60, 120, 300, 900, 3600),
)
WEBSOCKETS = Gauge(
    "tomori_websocket_connections", "Open websockets (live feeds, playground).", multiprocess_mode="livesum"
)

# Turn outcomes (``TURNS``): a fixed set, so the label has as many values as this tuple.
REPLIED, FAILED, NOT_DELIVERED, NO_CONTEXT = "replied", "failed", "not_delivered", "no_context"


def _forget_this_process() -> None:
    """A live gauge of an exited process must not count any more (its websockets are closed)."""
    multiprocess.mark_process_dead(process_identifier())


if settings.PROMETHEUS_MULTIPROC_DIR:
    atexit.register(_forget_this_process)
