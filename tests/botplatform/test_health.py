"""``/healthz``, ``/readyz`` and ``/metrics`` (botplatform/health.py): no login, any Host, a clear
503 naming what is not ready, and metrics only for loopback callers or the METRICS_TOKEN bearer."""

from __future__ import annotations

import json

import pytest
from django.db.migrations.recorder import MigrationRecorder
from django.test import Client

from botplatform import health
from tests.serve_process import free_port

pytestmark = pytest.mark.django_db

TOKEN = "metrics-token-7d1f0c2a9b"
OUTSIDE = "203.0.113.7"


@pytest.fixture(autouse=True)
def fresh_migration_check(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(health, "_migrated", False)


def test_healthz_answers_plain_http_without_login_for_a_host_not_in_allowed_hosts(client: Client, settings) -> None:
    settings.ALLOWED_HOSTS = ["tomori.example.org"]
    settings.SECURE_SSL_REDIRECT = True
    response = client.get("/healthz", HTTP_HOST="10.0.3.7:8000")
    assert response.status_code == 200 and response.json() == {"status": "ok"}
    # Everything else is redirected to HTTPS on the allowed name.
    redirected = client.get("/admin/login/", HTTP_HOST="tomori.example.org")
    assert redirected.status_code == 301 and redirected["Location"] == "https://tomori.example.org/admin/login/"


def test_readyz_is_ready_on_a_migrated_database(client: Client) -> None:
    response = client.get("/readyz", HTTP_HOST="10.0.3.7:8000")
    assert response.status_code == 200
    assert response.json()["checks"]["database"] == "ok"
    assert response.json()["checks"]["migrations"] == "applied"


def test_readyz_names_a_pending_migration(client: Client) -> None:
    MigrationRecorder.Migration.objects.filter(app="personas").order_by("-id").first().delete()
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json()["detail"] == "not ready: migrations pending"


def test_readyz_names_an_unreachable_redis(client: Client, settings) -> None:
    settings.REDIS_URL = f"redis://127.0.0.1:{free_port()}/0"
    response = client.get("/readyz")
    assert response.status_code == 503
    assert response.json() == {
        "detail": "not ready: redis unreachable",
        "checks": {"database": "ok", "migrations": "applied", "redis": "unreachable"},
    }


def test_health_endpoints_refuse_writes(client: Client) -> None:
    assert client.post("/readyz").status_code == 405


def test_metrics_answer_loopback_callers_in_prometheus_text(client: Client) -> None:
    response = client.get("/metrics", REMOTE_ADDR="127.0.0.1")
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    text = response.content.decode()
    assert "# TYPE tomori_turns_total counter" in text
    assert "# TYPE tomori_provider_request_seconds histogram" in text


def test_metrics_are_hidden_from_others_without_a_token(client: Client, settings) -> None:
    settings.METRICS_TOKEN = ""
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE).status_code == 404
    # A reverse proxy on this host connects from loopback: the forwarding header gives it away.
    assert client.get("/metrics", REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR=OUTSIDE).status_code == 404


def test_metrics_take_the_bearer_token_and_never_echo_a_wrong_one(client: Client, settings) -> None:
    settings.METRICS_TOKEN = TOKEN
    assert client.get("/metrics", REMOTE_ADDR=OUTSIDE, HTTP_AUTHORIZATION=f"Bearer {TOKEN}").status_code == 200
    for header in ({}, {"HTTP_AUTHORIZATION": "Bearer guessed-token-123"}, {"HTTP_AUTHORIZATION": TOKEN}):
        response = client.get("/metrics", REMOTE_ADDR=OUTSIDE, **header)
        assert response.status_code == 401 and response["WWW-Authenticate"] == "Bearer"
        body = response.content.decode()
        assert json.loads(body) == {"detail": "A valid METRICS_TOKEN bearer token is required"}
        assert "guessed" not in body and TOKEN not in body
