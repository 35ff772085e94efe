"""What a first start tells the operator (issue 27 item 8): the language model by endpoint and host,
never its key or the credentials of its URL; add_moderator's links on the configured address, and a
note while that address is only the default; check --deploy on a non-https PUBLIC_BASE_URL."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from bot.conversation.providers.summary import endpoint_host, platform_model_summary
from botplatform.checks import public_base_url_is_https
from personas.models import Server

KEY = "sk-live-3f9a1c7e5b"


def test_the_summary_names_the_endpoint_host_and_model_and_never_the_key(settings) -> None:
    settings.LLM_PROVIDER = ""
    settings.LLM_BASE_URL = "https://svc:hunter2@llm.example.org:8443/v1?api_key=abc123"
    settings.LLM_API_KEY = KEY
    settings.LLM_MODEL = "qwen3-32b"
    settings.LLM_APPROVED_ENDPOINTS = {"fast-lane": {"base_url": "http://10.0.0.9/v1", "api_key": "k2", "model": ""}}
    line = platform_model_summary()
    assert line == (
        "platform endpoint, OpenAI-compatible at llm.example.org:8443, qwen3-32b, with a key; "
        "approved endpoints: fast-lane"
    )
    for secret in (KEY, "hunter2", "svc", "abc123", "10.0.0.9", "k2"):
        assert secret not in line


def test_the_summary_says_when_only_the_offline_echo_provider_answers(settings) -> None:
    settings.LLM_PROVIDER = settings.LLM_BASE_URL = settings.LLM_API_KEY = settings.LLM_MODEL = ""
    settings.LLM_APPROVED_ENDPOINTS = {}
    assert platform_model_summary().startswith("offline echo provider")


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("", "api.openai.com"),
        ("http://localhost:11434/v1", "localhost:11434"),
        ("http://x:99999/", "x"),
        ("::", "an unparsable URL"),
    ],
)
def test_endpoint_host_is_only_the_host(url: str, host: str) -> None:
    assert endpoint_host(url) == host


@pytest.mark.django_db
@pytest.mark.parametrize("configured", [False, True])
def test_add_moderator_links_to_the_configured_address_and_says_when_it_is_the_default(settings, configured) -> None:
    settings.PUBLIC_BASE_URL = "https://tomori.example.org" if configured else settings.PUBLIC_BASE_URL_DEFAULT
    Server.objects.create(server_disc_id="904493457735819999", name="Quokka Hall")
    out = StringIO()
    call_command("add_moderator", "bob", "Quokka Hall", stdout=out)
    text = out.getvalue()
    assert f"{settings.PUBLIC_BASE_URL}/account/set-password/" in text
    assert f"They sign in at {settings.PUBLIC_BASE_URL}/admin/" in text
    assert ("PUBLIC_BASE_URL is not set" in text) is not configured


def test_check_deploy_warns_about_a_plain_http_public_base_url(settings) -> None:
    settings.PUBLIC_BASE_URL = "http://127.0.0.1:8000"
    [warning] = public_base_url_is_https(None)
    assert warning.id == "botplatform.W001"
    settings.PUBLIC_BASE_URL = "https://tomori.example.org"
    assert public_base_url_is_https(None) == []
