"""The window an endpoint's server reports (issue 29 item 1): llama.cpp's /props first, then the
model's entry of /v1/models; anything else is "not reported", and each endpoint and model is asked
once per process."""

from __future__ import annotations

import pytest

from bot.conversation.budget import with_reported_window
from bot.conversation.providers import ProviderConfig
from bot.conversation.providers.reported_window import REPORTED_WINDOWS, ask_reported_window
from tests.bot.fake_llm import FakeLLMServer


@pytest.fixture
async def llm() -> FakeLLMServer:
    server = FakeLLMServer()
    await server.start()
    yield server
    await server.stop()


async def test_llama_cpp_props_come_first_and_the_model_list_is_not_asked(llm):
    llm.n_ctx, llm.context_length = 4096, 32768
    assert await ask_reported_window(llm.base_url, "", "ok") == 4096
    assert llm.limit_asks == ["/props"]  # without the /v1 suffix, as llama.cpp serves it


async def test_the_model_lists_context_length_when_there_is_no_props(llm):
    llm.context_length = 16384
    assert await ask_reported_window(llm.base_url, "", "ok") == 16384
    assert llm.limit_asks == ["/props", "/v1/models"]
    assert await ask_reported_window(llm.base_url, "", "a-model-the-server-does-not-list") is None


@pytest.mark.parametrize(
    "body",
    [
        "<html>502 Bad Gateway</html>",
        '{"default_generation_settings": {"n_ctx": "4k"}}',
        '{"data": [{"id": "ok", "context_length": true}]}',
        "[]",
        '{"data": 7}',
    ],
)
async def test_garbage_is_not_a_window(llm, body):
    llm.limits_body = body
    assert await ask_reported_window(llm.base_url, "", "ok") is None


async def test_an_unreachable_server_is_not_a_window(llm):
    await llm.stop()
    assert await ask_reported_window(llm.base_url, "", "ok") is None


async def test_the_key_goes_to_the_endpoint_with_the_ask(llm):
    llm.context_length = 4096
    assert await ask_reported_window(llm.base_url, "sk-test", "ok") == 4096
    assert llm.limit_keys == ["Bearer sk-test", "Bearer sk-test"]


async def test_each_endpoint_and_model_is_asked_once_per_process(llm):
    llm.n_ctx = 2048
    config = ProviderConfig(kind="openai", base_url=llm.base_url, model="ok", context_window=8192, max_reply_tokens=512)
    for _ in range(3):
        assert (await with_reported_window(config)).context_window == 2048
    assert llm.limit_asks == ["/props"]
    llm.n_ctx = 1024  # a restart with another window is seen by a fresh ask (the admin's test)
    assert await REPORTED_WINDOWS.window(llm.base_url, "", "ok", fresh=True) == 1024
    assert (await with_reported_window(config)).context_window == 1024


async def test_the_budget_takes_the_smaller_of_setting_and_report(llm):
    config = ProviderConfig(
        kind="openai", base_url=llm.base_url, model="ok", context_window=4096, max_reply_tokens=1024
    )
    llm.n_ctx = 131072
    assert await with_reported_window(config) == config  # a larger report does not lift the setting
    REPORTED_WINDOWS.clear()
    llm.n_ctx = 1536  # the reply budget is at most half a reported window, so the prompt keeps room
    smaller = await with_reported_window(config)
    assert (smaller.context_window, smaller.max_reply_tokens) == (1536, 768)
    REPORTED_WINDOWS.clear()
    llm.n_ctx = None
    assert await with_reported_window(config) == config  # 404: the setting


async def test_the_echo_asks_nobody(llm):
    llm.n_ctx = 2048
    config = ProviderConfig(kind="echo", base_url=llm.base_url, model="ok")
    assert await with_reported_window(config) == config
    assert llm.limit_asks == []
