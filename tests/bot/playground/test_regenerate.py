"""The playground's Regenerate button (issue 30 item 4; BC9-06, BC9-10) through the real runner: the
reply is written again for the same message and replaced in place, both versions keep their prompt
records, and only the channel's latest reply can be regenerated."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from django.contrib.auth import get_user_model
from django.test import AsyncClient
from django.urls import reverse

from bot.playground.models import PlaygroundMessage
from bot.playground.regenerate import NOT_A_REPLY, NOT_LATEST
from chatcontext.models import PromptRecord
from chatcontext.records.commands import versions_of
from personas import models as m
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.playground.conftest import MINA, Demo
from tests.bot.playground.turns import use_llm

pytestmark = pytest.mark.django_db(transaction=True)


async def moderator_client(demo: Demo, server: FakeLLMServer) -> AsyncClient:
    """A moderator's browser session on a demo server answered by the local model server."""
    await asyncio.to_thread(use_llm, demo, server)

    def make() -> Any:
        alice = get_user_model().objects.create_user("alice", password="pw", is_staff=True)
        m.ServerModerator.objects.create(server=demo.server, user=alice)
        return alice

    client = AsyncClient()
    await client.aforce_login(await asyncio.to_thread(make))
    return client


async def say(client: AsyncClient, demo: Demo, content: str) -> dict[str, Any]:
    response = await client.post(
        reverse("playground:send_message", args=[demo.channel.pk]), {"identity": MINA, "content": content}
    )
    assert response.status_code == 200
    return response.json()


async def regenerate(client: AsyncClient, demo: Demo, message_id: str) -> Any:
    url = reverse("playground:regenerate", args=[demo.channel.pk, message_id])
    return await client.post(url, {"identity": MINA})


async def test_regenerate_rewrites_the_reply_in_place_and_keeps_both_records(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    client = await moderator_client(tdemo, llm_server)
    llm_server.script = ["the first answer", "a better answer"]
    sent = await say(client, tdemo, "tomori, what's new?")
    user_message, reply = sent["messages"]
    [first] = sent["records"]

    response = await regenerate(client, tdemo, reply["id"])

    assert response.status_code == 200, response.content
    answer = response.json()
    [rewritten] = [msg for msg in answer["messages"] if msg["id"] == reply["id"]]
    assert rewritten["content"] == "a better answer"
    assert await PlaygroundMessage.objects.filter(channel=tdemo.channel, is_bot=True).acount() == 1  # replaced
    [second] = answer["records"]
    old = await PromptRecord.objects.aget(pk=first["id"])
    new = await PromptRecord.objects.aget(pk=second["id"])
    assert (old.reply_text, new.reply_text) == ("the first answer", "a better answer")
    assert new.trigger_message_disc_id == user_message["id"]
    assert new.command["name"] == "regenerate" and new.command["by"] == MINA
    assert new.command["replaces_record"] == old.pk
    assert [r.pk for r in await asyncio.to_thread(versions_of, new)] == [old.pk, new.pk]
    # The new version is the channel's latest turn: it can be regenerated again.
    llm_server.script = ["the third answer"]
    assert (await regenerate(client, tdemo, reply["id"])).status_code == 200


async def test_only_the_latest_reply_and_only_a_persona_reply_can_be_regenerated(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    client = await moderator_client(tdemo, llm_server)
    first_user, first_reply = (await say(client, tdemo, "tomori, first"))["messages"]
    await say(client, tdemo, "tomori, second")
    records_before = await PromptRecord.objects.acount()

    old = await regenerate(client, tdemo, first_reply["id"])
    own = await regenerate(client, tdemo, first_user["id"])

    assert (old.status_code, old.json()) == (400, {"error": NOT_LATEST})
    assert (own.status_code, own.json()) == (400, {"error": NOT_A_REPLY})
    assert await PromptRecord.objects.acount() == records_before
