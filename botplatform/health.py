"""``/healthz``, ``/readyz`` and ``/metrics``: for orchestrators and Prometheus, without a login.

Answered by a middleware placed first, before Django checks the Host header: probes call the
process by its container or pod address, which is not in ALLOWED_HOSTS, and nothing here builds a
link from the host.

- ``/healthz``: the process answers (no database, no Redis).
- ``/readyz``: the database is reachable, every migration is applied and, when ``REDIS_URL`` is
  set, Redis answers; 503 with ``{"detail": …}`` naming what is not.
- ``/metrics``: Prometheus text, for loopback callers that did not come through a proxy, or for a
  caller sending ``Authorization: Bearer <METRICS_TOKEN>``; anyone else gets 404 (no token
  configured) or 401 (a token configured), never an echo of what they sent.
"""

from __future__ import annotations

import hmac
import ipaddress
from collections.abc import Callable, Iterator
from typing import Any

import redis
from django.conf import settings
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.http import HttpRequest, HttpResponse, JsonResponse
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

import personas.metrics  # noqa: F401  (registers the platform's metric families: listed before the first turn)
from infrastructure.best_effort import REDIS_ERRORS, redis_status

# The queue Celery's workers consume (its default name; the platform routes every task there).
CELERY_QUEUE = "celery"
# Set once this process has seen every migration applied: a newer migration only arrives with
# newer code, that is a new process.
_migrated = False


def migrations_applied() -> bool:
    global _migrated
    if not _migrated:
        executor = MigrationExecutor(connection)
        _migrated = not executor.migration_plan(executor.loader.graph.leaf_nodes())
    return _migrated


def readiness() -> tuple[dict[str, str], str]:
    """Each check's state, and the first failure in words ("" when ready)."""
    checks = {"database": "unreachable", "migrations": "unknown", "redis": redis_status()}
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
        checks["database"] = "ok"
        checks["migrations"] = "applied" if migrations_applied() else "pending"
    except Exception:  # no log line: the answer names it, and probes ask every few seconds
        return checks, "not ready: database unreachable"
    for name, bad in (("migrations", "pending"), ("redis", "unreachable")):
        if checks[name] == bad:
            return checks, f"not ready: {name} {bad}"
    return checks, ""


class QueueDepth(Collector):
    """Tasks waiting in the broker, read at scrape time (Redis only: without it tasks run inline)."""

    def collect(self) -> Iterator[GaugeMetricFamily]:
        if not settings.REDIS_URL:
            return
        client = redis.Redis.from_url(
            settings.REDIS_URL,
            socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT,
            socket_timeout=settings.REDIS_CONNECT_TIMEOUT,
        )
        try:
            depth = client.llen(CELERY_QUEUE)
        except REDIS_ERRORS:
            return
        finally:
            client.close()
        yield GaugeMetricFamily("tomori_queue_depth", "Celery tasks waiting in the broker.", value=depth)


def _is_loopback(address: str) -> bool:
    try:
        return ipaddress.ip_address(address).is_loopback
    except ValueError:
        return False


def metrics_refusal(request: HttpRequest) -> HttpResponse | None:
    """None when the caller may read the metrics. A request that came through a reverse proxy on
    this host arrives from loopback too, so a forwarding header takes loopback's trust away."""
    token = settings.METRICS_TOKEN
    header = request.META.get("HTTP_AUTHORIZATION", "")
    offered = header.removeprefix("Bearer ").strip() if header.startswith("Bearer ") else ""
    if token and offered and hmac.compare_digest(offered.encode(), token.encode()):
        return None
    proxied = any(name in request.META for name in ("HTTP_X_FORWARDED_FOR", "HTTP_FORWARDED", "HTTP_X_REAL_IP"))
    if _is_loopback(request.META.get("REMOTE_ADDR", "")) and not proxied:
        return None
    if not token:
        return JsonResponse({"detail": "Not Found"}, status=404)
    response = JsonResponse({"detail": "A valid METRICS_TOKEN bearer token is required"}, status=401)
    response["WWW-Authenticate"] = "Bearer"
    return response


def metrics_text() -> bytes:
    if settings.PROMETHEUS_MULTIPROC_DIR:
        registry = CollectorRegistry()
        multiprocess.MultiProcessCollector(registry)
    else:
        registry = REGISTRY
    queue = CollectorRegistry()
    queue.register(QueueDepth())
    return generate_latest(registry) + generate_latest(queue)


def healthz(request: HttpRequest) -> HttpResponse:
    return JsonResponse({"status": "ok"})


def readyz(request: HttpRequest) -> HttpResponse:
    checks, problem = readiness()
    if problem:
        return JsonResponse({"detail": problem, "checks": checks}, status=503)
    return JsonResponse({"status": "ready", "checks": checks})


def metrics(request: HttpRequest) -> HttpResponse:
    refusal = metrics_refusal(request)
    if refusal is not None:
        return refusal
    return HttpResponse(metrics_text(), content_type="text/plain; version=0.0.4; charset=utf-8")


ENDPOINTS: dict[str, Callable[[HttpRequest], HttpResponse]] = {
    "/healthz": healthz,
    "/readyz": readyz,
    "/metrics": metrics,
}


class HealthEndpointsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], Any]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> Any:
        endpoint = ENDPOINTS.get(request.path_info)
        if endpoint is None:
            return self.get_response(request)
        if request.method not in ("GET", "HEAD"):
            return JsonResponse({"detail": "Method not allowed"}, status=405)
        return endpoint(request)
