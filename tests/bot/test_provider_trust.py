"""Provider configuration is resolved as a whole (issue 13 item 1): the platform's base URL, key and
model go together, a server that names its own endpoint brings its own key or sends none, and an
approved endpoint brings the key the operator gave it. The operator's LLM_API_KEY never travels to
an address the operator did not give, and a server's key reaches no record, page or log line.

Checked over HTTP against a local OpenAI-compatible server (tests/bot/fake_llm.py), from rows read
back from the database (PostgreSQL in CI), and as a property of the resolution for every mix of
server settings."""

from __future__ import annotations

import json
import logging
from typing import Any

import discord.ext.test as dpytest
import pytest
from django.core import serializers
from hypothesis import HealthCheck, given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from bot.conversation.providers import build_provider, provider_config, server_endpoint
from chatcontext.core.types import ContextItem, ContextItemTag, TextPart
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.fakes import run_db, setup_server

OPERATOR_KEY = "sk-operator-0123456789abcdef"
OPERATOR_URL = "http://127.0.0.1:9/operator/v1"  # never contacted: the tests only check it is not used
APPROVED_KEY = "sk-approved-0123456789abcdef"
SERVER_KEY = "sk-server-0123456789abcdef"
ITEMS = [
    ContextItem(role="system", parts=[TextPart("You are Tomori.")]),
    ContextItem(role="user", parts=[TextPart("Ann: hi")], metadata_tag=ContextItemTag.DIALOGUE_HISTORY),
]


@pytest.fixture
def operator(settings: Any, monkeypatch: pytest.MonkeyPatch) -> Any:
    """The operator's environment: a platform endpoint with a key, and the OPENAI_* variables the SDK
    would read by itself if it were let."""
    settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_MODEL = "", OPERATOR_URL, "operator-model"
    settings.LLM_API_KEY = OPERATOR_KEY
    settings.LLM_APPROVED_ENDPOINTS = {}
    monkeypatch.setenv("OPENAI_API_KEY", OPERATOR_KEY)
    monkeypatch.setenv("OPENAI_ORG_ID", "org-operator")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-operator")
    monkeypatch.setenv("OPENAI_BASE_URL", OPERATOR_URL)
    return settings


def stored_settings(**fields: str) -> m.ServerSettings:
    """A server's settings as the bot reads them: written, then read back from the database."""
    server = m.Server.objects.create(server_disc_id="4100", name="Night Owls")
    m.ServerSettings.objects.filter(server=server).update(**fields)
    return m.ServerSettings.objects.get(server=server)


def sent_secrets(llm_server: FakeLLMServer) -> str:
    return json.dumps(llm_server.headers)


async def generate(config_settings: m.ServerSettings, stream: bool) -> None:
    provider = build_provider(provider_config(config_settings), "Tomori")
    await provider.generate(ITEMS, stream=stream)


@pytest.fixture
def own_url_no_key(db: None, operator: Any, llm_server: FakeLLMServer) -> m.ServerSettings:
    return stored_settings(llm_base_url=llm_server.base_url, llm_model="ok")


@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_with_its_own_url_and_no_key_sends_no_authorization_header(
    own_url_no_key: m.ServerSettings, llm_server: FakeLLMServer, stream: bool
) -> None:
    await generate(own_url_no_key, stream)

    [headers] = llm_server.headers
    assert "authorization" not in headers  # not the operator's key, not even the SDK's placeholder
    assert "openai-organization" not in headers and "openai-project" not in headers
    assert OPERATOR_KEY not in sent_secrets(llm_server) and "operator" not in sent_secrets(llm_server)
    assert llm_server.requests[0]["model"] == "ok"


@pytest.fixture
def own_url_and_key(db: None, operator: Any, llm_server: FakeLLMServer) -> m.ServerSettings:
    return stored_settings(llm_base_url=llm_server.base_url, llm_api_key=SERVER_KEY, llm_model="ok")


async def test_a_servers_own_key_goes_to_its_own_url(own_url_and_key: m.ServerSettings, llm_server) -> None:  # type: ignore[no-untyped-def]
    await generate(own_url_and_key, stream=False)
    [headers] = llm_server.headers
    assert headers["authorization"] == f"Bearer {SERVER_KEY}"
    assert OPERATOR_KEY not in sent_secrets(llm_server)


@pytest.fixture
def approved(db: None, operator: Any, llm_server: FakeLLMServer) -> m.ServerSettings:
    operator.LLM_APPROVED_ENDPOINTS = {
        "local": {"base_url": llm_server.base_url, "api_key": APPROVED_KEY, "model": "ok"},
    }
    return stored_settings(llm_endpoint="local", llm_model="ignored-model")


async def test_an_approved_endpoint_brings_its_own_key_url_and_model(approved: m.ServerSettings, llm_server) -> None:  # type: ignore[no-untyped-def]
    await generate(approved, stream=True)
    [headers] = llm_server.headers
    assert headers["authorization"] == f"Bearer {APPROVED_KEY}"
    assert llm_server.requests[0]["model"] == "ok"  # the endpoint's, not a model set beside it


@pytest.fixture
def platform(db: None, operator: Any, llm_server: FakeLLMServer) -> m.ServerSettings:
    operator.LLM_BASE_URL, operator.LLM_MODEL = llm_server.base_url, "ok"
    # A model set without an endpoint of the server's own does not pick from the operator's.
    return stored_settings(llm_provider="openai", llm_model="server-model")


async def test_the_platform_endpoint_is_used_whole(platform: m.ServerSettings, llm_server) -> None:  # type: ignore[no-untyped-def]
    await generate(platform, stream=False)
    [headers] = llm_server.headers
    assert headers["authorization"] == f"Bearer {OPERATOR_KEY}"
    assert llm_server.requests[0]["model"] == "ok"


def test_an_approved_name_the_operator_removed_falls_back_to_the_platform(operator: Any, caplog) -> None:  # type: ignore[no-untyped-def]
    settings_row = m.ServerSettings(llm_endpoint="gone")
    with caplog.at_level(logging.WARNING, logger="bot.conversation.providers"):
        endpoint = server_endpoint(settings_row)
    assert (endpoint.base_url, endpoint.api_key) == (OPERATOR_URL, OPERATOR_KEY)
    assert "'gone' is not configured" in caplog.text


def test_the_config_and_the_endpoint_never_show_their_key(operator: Any) -> None:
    config = provider_config(m.ServerSettings(llm_base_url="http://a.example/v1", llm_api_key=SERVER_KEY))
    assert SERVER_KEY not in repr(config) and SERVER_KEY not in repr(server_endpoint(m.ServerSettings()))
    assert OPERATOR_KEY not in repr(provider_config(None))


URLS = st.sampled_from(["", OPERATOR_URL, "http://approved.example/v1", "http://evil.example/v1"])


@hypothesis_settings(suppress_health_check=[HealthCheck.function_scoped_fixture])  # the fixture is the same each time
@given(
    base_url=URLS,
    api_key=st.sampled_from(["", SERVER_KEY]),
    endpoint=st.sampled_from(["", "approved", "gone"]),
    model=st.sampled_from(["", "m"]),
    kind=st.sampled_from(["", "openai", "echo"]),
)
def test_a_key_only_ever_goes_to_the_url_it_was_given_with(
    operator: Any, base_url: str, api_key: str, endpoint: str, model: str, kind: str
) -> None:
    operator.LLM_APPROVED_ENDPOINTS = {
        "approved": {"base_url": "http://approved.example/v1", "api_key": APPROVED_KEY, "model": "a"}
    }
    row = m.ServerSettings(
        llm_base_url=base_url, llm_api_key=api_key, llm_endpoint=endpoint, llm_model=model, llm_provider=kind
    )
    config = provider_config(row)
    pair = (config.base_url, config.api_key)
    if base_url or api_key:  # the server's own endpoint, exactly as a superuser set it
        assert (*pair, config.model) == (base_url, api_key, model)
    elif endpoint == "approved":
        assert (*pair, config.model) == ("http://approved.example/v1", APPROVED_KEY, "a")
    else:
        assert (*pair, config.model) == (OPERATOR_URL, OPERATOR_KEY, "operator-model")
    assert config.api_key != OPERATOR_KEY or config.base_url == OPERATOR_URL
    assert config.api_key != APPROVED_KEY or config.base_url == "http://approved.example/v1"
    assert config.kind == (kind or "openai")


# --- a whole Discord turn: the server's key is in no record and no log line ----------------------


@pytest.mark.django_db(transaction=True)
async def test_a_turn_through_a_servers_own_endpoint_keeps_its_key_out_of_records_and_logs(
    harness, llm_server, settings, caplog
) -> None:  # type: ignore[no-untyped-def]
    settings.LLM_API_KEY = OPERATOR_KEY

    def configure() -> None:
        server = setup_server(harness.guild)
        m.ServerSettings.objects.filter(server=server).update(
            llm_base_url=llm_server.base_url, llm_api_key=SERVER_KEY, llm_model="ok", prompt_snapshot_enabled=True
        )

    await run_db(configure)
    caplog.set_level(logging.DEBUG)
    await dpytest.message("tomori, are you awake?", member=harness.member(0))

    assert llm_server.headers[-1]["authorization"] == f"Bearer {SERVER_KEY}"
    stored = await run_db(lambda: serializers.serialize("json", PromptRecord.objects.all()))
    [record] = json.loads(stored)
    assert record["fields"]["reply_text"] == llm_server.reply_text
    snapshot_settings = record["fields"]["snapshot"]["server"]["settings"]
    assert snapshot_settings and not [k for k in snapshot_settings if k.startswith("llm_")]
    for secret in (SERVER_KEY, llm_server.base_url, OPERATOR_KEY):
        assert secret not in stored
    assert SERVER_KEY not in caplog.text and OPERATOR_KEY not in caplog.text
