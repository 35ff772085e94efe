"""With DEBUG on (``make run``) a server error shows Django's technical page to signed-in superusers
only, and no URL credential even to them (issue 26 item 3, ``botplatform.middleware``): the page
prints the settings, and DATABASE_URL, REDIS_URL and CELERY_BROKER_URL carry passwords."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from botplatform import api as api_module
from personas.models import Server, ServerModerator

pytestmark = pytest.mark.django_db

PASSWORD = "hunter2-db"
SECRET_URLS = {
    "DATABASE_URL": f"postgres://tomori:{PASSWORD}@db.internal:5432/tomori",
    "REDIS_URL": "redis://:redis-pw-42@cache.internal:6379/0",
    "CELERY_BROKER_URL": "redis://:redis-pw-42@cache.internal:6379/0",
}
SECRETS = (PASSWORD, "redis-pw-42")
TECHNICAL_MARKS = ("Traceback", "a bug in a view", "DATABASE_URL", "Request information")


@pytest.fixture
def debug_on(settings: Any) -> Any:
    settings.DEBUG = True
    for name, value in SECRET_URLS.items():
        setattr(settings, name, value)
    return settings


def client_of(username: str | None, superuser: bool = False) -> Client:
    client = Client(raise_request_exception=False)
    if username is None:
        return client
    User = get_user_model()
    user = User.objects.create_superuser(username) if superuser else User.objects.create_user(username, is_staff=True)
    if not superuser:
        server = Server.objects.create(server_disc_id="7300", name="Wombat Hall")
        ServerModerator.objects.create(server=server, user=user)
    client.force_login(user)
    return client


@pytest.mark.urls("tests.botplatform.failing_urls")
@pytest.mark.parametrize("who", ["anonymous", "moderator"])
@pytest.mark.parametrize("accept", ["text/html", "text/plain"])
def test_a_server_error_shows_the_plain_page_to_everyone_but_superusers(debug_on: Any, who: str, accept: str) -> None:
    client = client_of(None if who == "anonymous" else "bob")
    response = client.get("/fails/", HTTP_ACCEPT=accept)
    body = response.content.decode()
    assert response.status_code == 500
    assert "Server Error (500)" in body
    assert not any(mark in body for mark in (*TECHNICAL_MARKS, *SECRETS)), body[:500]


@pytest.mark.urls("tests.botplatform.failing_urls")
def test_the_superuser_keeps_djangos_page_without_the_urls_passwords(debug_on: Any) -> None:
    response = client_of("root", superuser=True).get("/fails/", HTTP_ACCEPT="text/html")
    body = response.content.decode()
    assert response.status_code == 500
    assert "a bug in a view" in body and "DATABASE_URL" in body and "db.internal" in body
    assert not any(secret in body for secret in SECRETS)


def test_the_filter_masks_url_credentials_in_nested_settings() -> None:
    from botplatform.middleware import CredentialMaskingFilter

    masking = CredentialMaskingFilter()
    layers = {"default": {"CONFIG": {"hosts": [{"address": "redis://u:layer-pw@h:6379/1"}]}}}
    cleansed = masking.cleanse_setting("CHANNEL_LAYERS", layers)
    assert cleansed["default"]["CONFIG"]["hosts"][0]["address"] == "redis://********************@h:6379/1"
    assert masking.cleanse_setting("PUBLIC_BASE_URL", "http://127.0.0.1:8000") == "http://127.0.0.1:8000"


@pytest.mark.parametrize("who", ["anonymous", "moderator"])
def test_an_api_server_error_is_json_without_a_traceback(debug_on: Any, monkeypatch: Any, who: str) -> None:
    def fails() -> str:
        raise RuntimeError("a bug in a view")

    monkeypatch.setattr(api_module, "redis_status", fails)
    response = client_of(None if who == "anonymous" else "bob").get("/api/v1/health")
    assert response.status_code == 500
    assert response.json() == {"detail": "Internal server error"}
