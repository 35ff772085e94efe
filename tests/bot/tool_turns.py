"""Turns with tool calls on dpytest: the server set up on a fake model, the records and the messages sent."""

from __future__ import annotations

import json

import discord
import discord.ext.test as dpytest

from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer, tool_round
from tests.bot.fakes import run_db, setup_server


def sent_messages() -> list[discord.Message]:
    messages = []
    while not dpytest.sent_queue.empty():
        messages.append(dpytest.get_message())
    return messages


async def records() -> list[PromptRecord]:
    return [r async for r in PromptRecord.objects.order_by("created_at", "id")]


def remember(user: str, content: str) -> list[tuple[str, str]]:
    return tool_round(("remember_user_fact", json.dumps({"user": user, "content": content})))


async def setup(harness, llm_server, **settings) -> None:  # type: ignore[no-untyped-def]
    await run_db(setup_server, harness.guild)
    await run_db(use_llm, harness.guild.id, llm_server, **settings)


def use_llm(guild_id: int, server: FakeLLMServer, *, model: str = "ok", **settings: object) -> None:
    s = m.ServerSettings.objects.get(server__server_disc_id=str(guild_id))
    s.llm_base_url, s.llm_model = server.base_url, model
    for name, value in settings.items():
        setattr(s, name, value)
    s.save()
