"""Providers over HTTP against a local OpenAI-compatible server (issue 6 acceptance)."""

from __future__ import annotations

import json

import pytest

from bot.conversation.providers import (
    EchoProvider,
    OpenAICompatProvider,
    ProviderError,
    ToolCall,
    ToolSpec,
    build_provider,
    provider_config,
    to_chat_messages,
)
from bot.conversation.providers.openai_compat import reply_limit_parameter
from chatcontext.core.types import ContextItem, TextPart
from personas.models import ServerSettings
from tests.bot.fake_llm import UNSTORABLE_ARGUMENTS, UNSTORABLE_REPLY, USAGE, FakeLLMServer, tool_round
from tests.bot.provider_items import ITEMS

MAX_REPLY_TOKENS = 321


def provider(server: FakeLLMServer, model: str, timeout_s: float = 5.0) -> OpenAICompatProvider:
    return OpenAICompatProvider(
        base_url=server.base_url, api_key="", model=model, timeout_s=timeout_s, max_reply_tokens=MAX_REPLY_TOKENS
    )


def test_context_items_map_to_openai_roles_and_image_parts_to_image_url_parts():
    assert to_chat_messages(ITEMS) == [
        {"role": "system", "content": "You are Tomori."},
        {"role": "user", "content": "Ann: hi there"},
        {"role": "assistant", "content": "Tomori: hello!"},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Ann: look"},
                {"type": "image_url", "image_url": {"url": "https://cdn/x.png"}},
            ],
        },
        {"role": "user", "content": [{"type": "image_url", "image_url": {"url": "https://cdn/y.png"}}]},
    ]


def test_items_without_text_or_images_are_dropped():
    assert to_chat_messages([ContextItem(role="user", parts=[TextPart("  ")])]) == []


@pytest.mark.parametrize("stream", [False, True])
async def test_openai_compat_generates_over_http(llm_server, stream):
    result = await provider(llm_server, "ok").generate(ITEMS, stream=stream)

    assert result.text == llm_server.reply_text
    assert result.usage["total_tokens"] == USAGE["total_tokens"]
    sent = llm_server.requests[-1]
    assert sent["model"] == "ok"
    assert sent["messages"] == to_chat_messages(ITEMS)
    assert bool(sent.get("stream")) is stream


async def test_a_500_is_retried_once_then_succeeds(llm_server):
    result = await provider(llm_server, "flaky").generate(ITEMS, stream=True)

    assert result.text == llm_server.reply_text
    assert len(llm_server.requests) == 2


async def test_a_persistent_500_fails_after_exactly_one_retry(llm_server):
    with pytest.raises(ProviderError, match="HTTP 500"):
        await provider(llm_server, "fail").generate(ITEMS, stream=False)
    assert len(llm_server.requests) == 2


@pytest.mark.parametrize("stream", [False, True])
async def test_a_stalled_server_times_out_after_one_retry(llm_server, stream):
    with pytest.raises(ProviderError, match="timed out"):
        await provider(llm_server, "slow", timeout_s=0.2).generate(ITEMS, stream=stream)
    assert len(llm_server.requests) == 2


async def test_an_unreachable_server_is_a_short_provider_error():
    unreachable = OpenAICompatProvider(
        base_url="http://127.0.0.1:9/v1", api_key="", model="ok", timeout_s=2, max_reply_tokens=MAX_REPLY_TOKENS
    )
    with pytest.raises(ProviderError, match="unreachable"):
        await unreachable.generate(ITEMS, stream=False)


async def test_echo_answers_from_the_assembled_prompt():
    result = await EchoProvider("Tomori").generate(ITEMS, stream=True)
    assert result.text == "[echo] Tomori: I read 5 prompt items; you said: Ann: look"


def test_echo_is_the_default_only_when_nothing_real_is_configured(settings):
    settings.LLM_PROVIDER = settings.LLM_BASE_URL = settings.LLM_API_KEY = settings.LLM_MODEL = ""
    assert provider_config(None).kind == "echo"
    assert isinstance(build_provider(provider_config(None), "Tomori"), EchoProvider)

    settings.LLM_BASE_URL = "http://llm.local/v1"
    assert provider_config(None).kind == "openai"


def test_server_settings_win_over_the_environment(settings):
    settings.LLM_PROVIDER, settings.LLM_BASE_URL, settings.LLM_MODEL = "openai", "http://env/v1", "env-model"
    config = provider_config(ServerSettings(llm_base_url="http://server/v1", llm_model="server-model"))
    assert (config.kind, config.base_url, config.model) == ("openai", "http://server/v1", "server-model")

    echo = provider_config(ServerSettings(llm_provider="echo"))
    assert echo.kind == "echo"


REMEMBER = ToolSpec(
    name="remember_user_fact",
    description="Save a fact about a person.",
    parameters={"type": "object", "properties": {"user": {"type": "string"}}, "required": ["user"]},
)


@pytest.mark.parametrize("stream", [False, True])
async def test_scripted_tool_calls_come_back_whole_streamed_and_not(llm_server, stream):
    llm_server.script = [tool_round(("remember_user_fact", '{"user": "ann", "content": "has a cat"}'))]

    result = await provider(llm_server, "ok").generate(ITEMS, stream=stream, tools=[REMEMBER])

    assert result.tool_calls == (
        ToolCall(id="call_0", name="remember_user_fact", arguments='{"user": "ann", "content": "has a cat"}'),
    )
    sent = llm_server.requests[-1]
    assert sent["tools"] == [REMEMBER.as_openai()] and sent["tool_choice"] == "auto"
    assert not result.tools_refused


async def test_followups_are_sent_after_the_prompt_and_no_tools_means_no_tools_key(llm_server):
    call = ToolCall(id="call_0", name="remember_user_fact", arguments="{}")
    followups = [
        {"role": "assistant", "content": None, "tool_calls": [call.as_openai()]},
        {"role": "tool", "tool_call_id": "call_0", "content": "saved"},
    ]
    result = await provider(llm_server, "ok").generate(ITEMS, stream=False, followups=followups)

    assert result.text == llm_server.reply_text
    sent = llm_server.requests[-1]
    assert sent["messages"] == [*to_chat_messages(ITEMS), *followups]
    assert "tools" not in sent


@pytest.mark.parametrize("stream", [False, True])
async def test_a_server_refusing_tools_is_asked_once_without_them(llm_server, stream):
    result = await provider(llm_server, "notools").generate(ITEMS, stream=stream, tools=[REMEMBER])

    assert result.text == llm_server.reply_text and result.tools_refused
    assert [bool(r.get("tools")) for r in llm_server.requests] == [True, False]


def test_a_server_whose_model_has_no_tool_support_is_configured_so():
    assert provider_config(ServerSettings(llm_supports_tools=False, llm_provider="echo")).tools is False
    assert provider_config(ServerSettings()).tools is True


@pytest.mark.parametrize("stream", [False, True])
async def test_every_request_carries_the_reply_cap_with_tools_without_and_after_a_refusal(llm_server, stream):
    """Issue 26 item 7: a reply cannot run on without end, whichever request of the turn it is."""
    await provider(llm_server, "ok").generate(ITEMS, stream=stream)
    await provider(llm_server, "ok").generate(ITEMS, stream=stream, tools=[REMEMBER])
    await provider(llm_server, "notools").generate(ITEMS, stream=stream, tools=[REMEMBER])

    assert [r.get("max_tokens") for r in llm_server.requests] == [MAX_REPLY_TOKENS] * 4


async def test_the_platform_reply_cap_reaches_the_request_of_a_configured_provider(llm_server, settings):
    settings.LLM_MAX_REPLY_TOKENS = 77
    config = provider_config(ServerSettings(llm_base_url=llm_server.base_url, llm_model="ok"))

    await build_provider(config, "Tomori").generate(ITEMS, stream=True)

    assert llm_server.requests[-1]["max_tokens"] == 77


CLEAN_CONTENT = "cat called \ufffd Mochi 😀\ufffd"


@pytest.mark.parametrize("stream", [False, True])
async def test_nul_and_lone_surrogates_of_the_model_are_cleaned_where_they_enter(llm_server, stream):
    """Issue 26 item 4: the reply, every streamed piece and a tool call's decoded arguments hold no NUL
    and no lone surrogate, whatever the model sent (escaped or not); a surrogate pair stays its character."""
    pieces: list[str] = []

    async def collect(text: str) -> None:
        pieces.append(text)

    llm_server.script = [UNSTORABLE_REPLY, tool_round(("remember_user_fact\x00", UNSTORABLE_ARGUMENTS))]
    reply = await provider(llm_server, "ok").generate(ITEMS, stream=stream, on_delta=collect)
    calls = await provider(llm_server, "ok").generate(ITEMS, stream=stream, tools=[REMEMBER])

    assert reply.text == "Hi there \ufffd!"
    assert "".join(pieces) == (reply.text if stream else "")
    [call] = calls.tool_calls
    assert call.name == "remember_user_fact"
    assert json.loads(call.arguments) == {"user": "ann", "content": CLEAN_CONTENT}


@pytest.mark.parametrize("stream", [False, True])
async def test_a_missing_model_is_one_request_and_its_error_keeps_the_providers_words(llm_server, stream):
    with pytest.raises(ProviderError) as failed:
        await provider(llm_server, "no-such-model").generate(ITEMS, stream=stream, tools=[REMEMBER])

    # A 404 about the model is no tools refusal: nothing is asked again without the tools.
    assert len(llm_server.requests) == 1
    assert str(failed.value) == "provider returned HTTP 404: The model `no-such-model` does not exist"


async def test_a_key_the_provider_quotes_back_is_not_kept(llm_server):
    key = "sk-test-0123456789abcdef"
    keyed = OpenAICompatProvider(
        base_url=llm_server.base_url, api_key=key, model="unauthorized", timeout_s=5, max_reply_tokens=MAX_REPLY_TOKENS
    )
    with pytest.raises(ProviderError) as failed:
        await keyed.generate(ITEMS, stream=False)

    assert str(failed.value) == "provider returned HTTP 401: Incorrect API key provided: [redacted]."


async def test_an_error_in_the_middle_of_a_stream_keeps_the_providers_words(llm_server):
    with pytest.raises(ProviderError) as failed:
        await provider(llm_server, "overflow").generate(ITEMS, stream=True)

    assert str(failed.value) == (
        "provider reported an error mid-stream: the request exceeds the available context size"
    )
    assert len(llm_server.requests) == 1  # not retried: the same prompt would overflow again


@pytest.mark.parametrize("stream", [False, True])
async def test_openais_own_api_is_sent_max_completion_tokens(llm_server, monkeypatch, stream):
    """OpenAI's reasoning models refuse ``max_tokens`` (400 "Unsupported parameter"). The request
    for api.openai.com reaches the local server through it as an HTTP proxy (no network in tests)."""
    monkeypatch.setenv("HTTP_PROXY", llm_server.base_url.removesuffix("/v1"))
    monkeypatch.delenv("NO_PROXY", raising=False)
    monkeypatch.delenv("no_proxy", raising=False)
    openai = OpenAICompatProvider(
        base_url="http://api.openai.com/v1", api_key="sk-test", model="ok", timeout_s=5.0, max_reply_tokens=55
    )
    result = await openai.generate(ITEMS, stream=stream)

    assert result.text == llm_server.reply_text
    [request] = llm_server.requests
    assert request["max_completion_tokens"] == 55 and "max_tokens" not in request


@pytest.mark.parametrize("base_url", ["", "https://api.openai.com/v1", "https://API.OpenAI.com/v1/"])
def test_the_default_endpoint_and_openais_host_take_max_completion_tokens(base_url):
    assert reply_limit_parameter(base_url) == "max_completion_tokens"


@pytest.mark.parametrize(
    "base_url", ["http://127.0.0.1:8080/v1", "http://localhost:11434/v1", "https://api.openai.com.example.net/v1"]
)
def test_openai_compatible_servers_take_max_tokens(base_url):
    assert reply_limit_parameter(base_url) == "max_tokens"


async def test_bc13_04_cache_hints_mark_the_stable_start_only_when_the_endpoint_asks(llm_server, settings):
    """Off by default: the request is unchanged. On (a server's own endpoint here; the platform's and an
    approved one's through LLM_CACHE_HINTS / LLM_ENDPOINT_<NAME>_CACHE_HINTS): the item before the
    history and the newest history entry carry ``cache_control``."""
    items = [ContextItem(role="system", parts=[TextPart("You are Tomori.")]), *ITEMS[1:3]]
    plain = provider_config(ServerSettings(llm_base_url=llm_server.base_url, llm_model="ok"))
    await build_provider(plain, "Tomori").generate(items, stream=False)
    assert llm_server.requests[-1]["messages"] == to_chat_messages(items)
    assert "cache_control" not in json.dumps(llm_server.requests[-1])

    hinted = provider_config(ServerSettings(llm_base_url=llm_server.base_url, llm_model="ok", llm_cache_hints=True))
    await build_provider(hinted, "Tomori").generate(items, stream=False)
    mark = {"type": "ephemeral"}
    assert llm_server.requests[-1]["messages"] == [
        {"role": "system", "content": [{"type": "text", "text": "You are Tomori.", "cache_control": mark}]},
        {"role": "user", "content": "Ann: hi there"},
        {"role": "assistant", "content": [{"type": "text", "text": "Tomori: hello!", "cache_control": mark}]},
    ]

    settings.LLM_CACHE_HINTS = True
    assert provider_config(None).cache_hints is True
