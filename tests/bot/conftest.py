"""Fixtures of the bot tests: dpytest drives the real bot (``UnshardedTomoriBot``: dpytest refuses
sharded clients) and a local OpenAI-compatible server answers the provider."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import discord
import discord.ext.test as dpytest
import pytest
from asgiref.sync import sync_to_async
from discord.ext.test import backend
from django.db import connections
from django.db.backends.base.base import BaseDatabaseWrapper

from bot.conversation.media import HttpImageFetcher
from bot.conversation.providers import ProviderConfig, build_provider
from bot.discord.client import UnshardedTomoriBot
from chatcontext.core.transcripts import MemoryTranscriptCache
from chatcontext.core.types import ContextItem
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.fakes import BotHarness, FakeWebhookRegistry, RecordingProvider
from tests.bot.image_server import ImageServer


@pytest.fixture
async def llm_server():
    server = FakeLLMServer()
    await server.start()
    yield server
    await server.stop()


@pytest.fixture
def newest_first_history(monkeypatch):
    """Discord returns channel history newest first; dpytest returns it oldest first. Reversed here
    so the bot sees what Discord would send (and an empty channel reads as empty)."""
    original = backend.FakeHttp.logs_from

    async def logs_from(self, channel_id, limit, before=None, after=None, around=None):  # type: ignore[no-untyped-def]
        # dpytest has no history list for a channel nobody wrote in yet; Discord sends an empty page.
        backend._cur_config.messages.setdefault(channel_id, [])
        data = await original(self, channel_id, limit, before=before, after=after, around=around)
        return data if after is not None or around is not None else list(reversed(data))

    monkeypatch.setattr(backend.FakeHttp, "logs_from", logs_from)


@pytest.fixture
def offline_llm(settings):
    """No real provider in the environment: servers without provider settings use the echo provider."""
    settings.LLM_PROVIDER = settings.LLM_BASE_URL = settings.LLM_API_KEY = settings.LLM_MODEL = ""
    return settings


@pytest.fixture
def edits_in_place(monkeypatch):
    """Discord shows an edit on the message itself; dpytest's ``Message.edit`` answers with a new
    object and leaves the one in its sent queue (its state's cached message) as it was posted. That
    one follows the edit here."""
    original = discord.Message.edit

    async def edit(self: discord.Message, **fields: Any) -> discord.Message:
        edited = await original(self, **fields)
        for message in (self, backend.get_state()._get_message(self.id)):
            if message is not None:
                message.content = edited.content
        return edited

    monkeypatch.setattr(discord.Message, "edit", edit)


@pytest.fixture
async def harness(request, transactional_db, newest_first_history, offline_llm, edits_in_place):
    """The bot under dpytest; ``@pytest.mark.parametrize("harness", [{...}], indirect=True)`` passes
    constructor options (e.g. ``presences``)."""
    prompts: list[Sequence[ContextItem]] = []
    webhooks = FakeWebhookRegistry()

    def provider_factory(config: ProviderConfig, persona_name: str) -> Any:
        return RecordingProvider(build_provider(config, persona_name), prompts)

    bot = UnshardedTomoriBot(
        **{"transcripts": MemoryTranscriptCache(), **getattr(request, "param", {})},
        sync_commands=False,
        provider_factory=provider_factory,
        webhooks=webhooks,
        # The tests' "CDN" is a local server (tests/bot/image_server.py); nothing reaches the internet.
        image_fetcher=HttpImageFetcher(allow=lambda url: url.startswith("http://127.0.0.1:")),
    )
    dpytest.configure(bot, members=["ann", "bob", "rei"])
    # After configure: it swaps in dpytest's connection state, whose event loop must be set too.
    await bot._async_setup_hook()
    await bot.setup_hook()
    yield BotHarness(bot, webhooks, prompts)
    for name in list(bot.cogs):  # stops the reminder listener of this bot
        await bot.remove_cog(name)
    await dpytest.empty_queue()
    await sync_to_async(release_worker_connections, thread_sensitive=True)()


def release_worker_connections() -> None:
    """Close the connections the bot's database worker thread opened.

    Django never closes an in-memory SQLite connection, so the worker thread would keep reading this
    test database even after a later test moves the database elsewhere (tests/chatcontext/records/live copies it to a
    file for a subprocess). The main thread's connection keeps the in-memory database alive.
    """
    for connection in connections.all(initialized_only=True):
        if connection.vendor == "sqlite" and connection.is_in_memory_db():
            BaseDatabaseWrapper.close(connection)


@pytest.fixture
async def image_server():
    server = ImageServer()
    await server.start()
    yield server
    await server.stop()


# The speech fixtures of the background tests: espeak-ng speech files and the one Whisper model.
from tests.botplatform.celery.conftest import speech_files, transcriber  # noqa: E402, F401
