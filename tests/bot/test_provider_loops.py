"""Provider clients belong to the event loop that uses them (issue 27 item 6).

Synchronous callers (Celery tasks, management commands, the playground's sync views) each run a
turn in a fresh loop; against a provider that keeps its HTTP/1.1 connections alive, a client reused
from a loop that has closed fails with ``RuntimeError``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from asgiref.sync import async_to_sync

from bot.conversation.providers import OpenAICompatProvider
from bot.conversation.providers.base import GenerationResult
from tests.bot.fake_llm import FakeLLMServer, ThreadedFakeLLMServer
from tests.bot.provider_items import ITEMS


@pytest.fixture
def keepalive_server() -> Iterator[FakeLLMServer]:
    with ThreadedFakeLLMServer() as server:
        yield server


def test_turns_each_on_a_fresh_loop_all_succeed_against_a_keep_alive_server(keepalive_server):
    # One provider object, as a cached server configuration would be, used from loop after loop.
    provider = OpenAICompatProvider(
        base_url=keepalive_server.base_url, api_key="", model="ok", timeout_s=5, max_reply_tokens=64
    )

    async def turn(stream: bool) -> GenerationResult:
        return await provider.generate(ITEMS, stream=stream)

    results = []
    for i in range(3):
        results.append(asyncio.run(turn(stream=i % 2 == 0)))
        results.append(async_to_sync(turn)(stream=i % 2 == 1))

    assert [r.text for r in results] == [keepalive_server.reply_text] * 6
    assert len(keepalive_server.requests) == 6


def test_within_one_loop_the_connection_is_kept(keepalive_server):
    """The server really keeps connections alive (else the test above proves nothing), and a loop's
    turns share their client's pool."""
    provider = OpenAICompatProvider(
        base_url=keepalive_server.base_url, api_key="", model="ok", timeout_s=5, max_reply_tokens=64
    )

    async def two_turns() -> None:
        await provider.generate(ITEMS, stream=False)
        await provider.generate(ITEMS, stream=True)

    asyncio.run(two_turns())

    assert keepalive_server.peers[0] == keepalive_server.peers[1]
