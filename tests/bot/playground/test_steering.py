"""Steering a playground channel (issue 30 items 1–3): ``/refresh`` and ``/compact`` typed in the
message box, and the short-term memory tool, all through the real runner; the next turn's prompt
record shows what the persona read."""

from __future__ import annotations

import asyncio
import json

import pytest
from django.contrib.auth import get_user_model
from django.test import AsyncClient
from django.urls import reverse

from bot.conversation.steering import COMPACT_REFUSED, REFRESH_REFUSED, REFRESHED
from bot.playground.models import PlaygroundMessage
from bot.playground.service import PlaygroundOutcome, post_playground_message
from chatcontext.core.short_term_memory import DUE_AFTER_MESSAGES
from chatcontext.models import PromptRecord
from chatcontext.records.inspector import replay_now
from community import forget
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fake_llm import FakeLLMServer, tool_round
from tests.bot.playground.conftest import JUN, MINA, Demo
from tests.bot.playground.turns import record_panel, use_llm

pytestmark = pytest.mark.django_db(transaction=True)

SUMMARY = "Mina and Jun compared ramen shops; Jun recommends the one by the station."
NOTE = "Mina is planning a trip to Kyoto in April; she asked about temples."


def let_jun_manage(demo: Demo) -> None:
    m.ServerMember.objects.filter(server=demo.server, user_disc_id=JUN).update(can_manage_server=True)


async def say(demo: Demo, author: str, content: str) -> PlaygroundOutcome:
    return await post_playground_message(demo.channel, author, content)


def prompt_of(record: PromptRecord) -> str:
    return "\n".join(item["text"] for item in record.context_items)


async def newest_record() -> PromptRecord:
    return await PromptRecord.objects.order_by("-created_at", "-id").afirst()


async def chat_before(demo: Demo) -> None:
    await say(demo, MINA, "which ramen shop is good around here")
    await say(demo, JUN, "the one by the station, best broth in town")


async def test_refresh_typed_in_the_box_clears_what_the_next_turn_reads(tdemo: Demo) -> None:
    await asyncio.to_thread(let_jun_manage, tdemo)
    await chat_before(tdemo)

    outcome = await say(tdemo, JUN, "/refresh")

    assert outcome.message is None and outcome.command is not None and outcome.command.text == REFRESHED
    assert not await PlaygroundMessage.objects.filter(content__startswith="/refresh").aexists()
    notice = await PlaygroundMessage.objects.filter(channel=tdemo.channel, is_bot=True).order_by("-id").afirst()
    [embed] = notice.embeds
    assert embed["title"] == "🧹 Conversation History Cleared" and embed["footer_text"] == "[tomori:v1:reset]"

    await say(tdemo, MINA, "tomori, where should we eat?")

    text = prompt_of(await newest_record())
    assert "where should we eat" in text
    assert "ramen shop" not in text and "best broth" not in text


async def test_refresh_is_refused_to_a_member_who_may_not_unless_the_server_opens_it(tdemo: Demo) -> None:
    await chat_before(tdemo)
    before = await PlaygroundMessage.objects.acount()

    outcome = await say(tdemo, MINA, "/refresh")

    assert outcome.command is not None and outcome.command.refused and outcome.command.text == REFRESH_REFUSED
    assert await PlaygroundMessage.objects.acount() == before
    await m.ServerSettings.objects.filter(server=tdemo.server).aupdate(refresh_open_to_all=True)
    assert (await say(tdemo, MINA, "/refresh")).command.text == REFRESHED
    # /compact stays with the moderators.
    assert (await say(tdemo, MINA, "/compact")).command.text == COMPACT_REFUSED


async def test_a_slash_word_that_names_no_command_is_an_ordinary_message(tdemo: Demo) -> None:
    outcome = await say(tdemo, MINA, "/shrug tomori")

    assert outcome.command is None and outcome.message is not None and outcome.message.content == "/shrug tomori"


async def test_compact_typed_in_the_box_posts_the_summary_the_next_turn_starts_at(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(let_jun_manage, tdemo)
    alice = await asyncio.to_thread(get_user_model().objects.create_superuser, "alice", password="pw")
    await chat_before(tdemo)
    llm_server.script = [SUMMARY]
    client = AsyncClient()
    await client.aforce_login(alice)

    url = reverse("playground:send_message", args=[tdemo.channel.pk])
    response = await client.post(url, {"identity": JUN, "content": "/compact"})

    assert response.status_code == 200
    payload = response.json()
    assert payload["command"] == {
        "text": "Conversation compacted: the personas now read the summary and what comes after it.",
        "refused": False,
    }
    [summary_record] = payload["records"]
    record = await PromptRecord.objects.aget(pk=summary_record["id"])
    assert record.command["name"] == "compact" and record.command["by"] == JUN
    assert record.reply_text == SUMMARY and record.source == PromptRecord.Source.PLAYGROUND
    assert "which ramen shop is good" in prompt_of(record)  # the summary call's own prompt
    panel = await asyncio.to_thread(record_panel, record)
    assert "<h2>Command</h2>" in panel and "<th>kind</th><td>summary</td>" in panel
    notice = await PlaygroundMessage.objects.filter(channel=tdemo.channel, is_bot=True).order_by("-id").afirst()
    assert notice.embeds[0]["title"] == "🧹 Compact Summary (Refreshed)" and notice.embeds[0]["description"] == SUMMARY
    stored = await m.ConversationSummary.objects.aget()
    assert stored.author_disc_ids == [MINA, JUN] and stored.source_prompt_record_id == record.pk

    llm_server.script = ["The station one!"]
    await say(tdemo, MINA, "tomori, which shop again?")

    text = prompt_of(await newest_record())
    assert f"[System: ## 🧹 Compact Summary (Refreshed)\n{SUMMARY}]" in text
    assert "which ramen shop is good" not in text and "best broth" not in text


async def test_a_compaction_record_replays_to_the_summary_prompt_it_holds(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    """The record of a compaction holds the summary call's prompt; "replay now" rebuilds that prompt
    from the replayed turn context (it compared the turn context itself, so every compaction showed
    a diff)."""
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await asyncio.to_thread(let_jun_manage, tdemo)
    await chat_before(tdemo)
    llm_server.script = [SUMMARY]
    await say(tdemo, JUN, "/compact scene")
    record = await PromptRecord.objects.select_related("server").aget(command__name="compact")

    replayed = await asyncio.to_thread(replay_now, record)

    assert record.command["kind"] == "roleplay_scene"
    assert not replayed.changed, replayed.diff
    assert "the scene's setting" in replayed.context_items[0]["text"]
    assert "which ramen shop is good" in replayed.context_items[-1]["text"]


async def test_the_short_term_memory_tool_writes_the_note_and_the_next_turn_shows_it(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    llm_server.script = [
        tool_round(("update_short_term_memory", json.dumps({"note": NOTE}))),
        "Kyoto in April, lovely!",
    ]

    first = await say(tdemo, MINA, "tomori, I'm going to Kyoto in April, which temples?")

    [result] = first.results
    [call] = result.record.tool_calls["calls"]
    assert call["name"] == "update_short_term_memory" and call["status"] == "ok"
    note = await m.ShortTermMemory.objects.aget()
    assert note.content == NOTE and note.channel_disc_id == tdemo.channel.disc_id
    assert note.persona_id == tdemo.tomori.pk and note.author_disc_ids == [MINA]
    assert note.source_prompt_record_id == result.record.pk and note.source_message_disc_id == first.message.disc_id
    [version] = [v async for v in m.ShortTermMemory.history.all()]
    assert version.actor_kind == m.ActorKind.TOOL_CALL

    llm_server.script = ["Kiyomizu-dera first."]
    await say(tdemo, MINA, "tomori, and which one first?")

    text = prompt_of(await newest_record())
    assert f"[System: Your short-term memory of this channel (you wrote it):\n{NOTE}]" in text
    # Pip, another persona, has no note of its own here.
    llm_server.script = ["No idea."]
    await say(tdemo, MINA, "pip, any idea?")
    assert NOTE not in prompt_of(await newest_record())


async def test_the_nudge_comes_when_upkeep_is_due_and_the_tool_is_offered(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    for i in range(DUE_AFTER_MESSAGES):
        await say(tdemo, MINA if i % 2 else JUN, f"small talk {i}")
    await say(tdemo, MINA, "tomori, hi")  # the echo provider takes no tools: no nudge
    assert "is due for an update" not in prompt_of(await newest_record())

    await asyncio.to_thread(use_llm, tdemo, llm_server)
    await say(tdemo, MINA, "tomori, hi again")

    text = prompt_of(await newest_record())
    assert "Your short-term memory of this channel is due for an update" in text
    assert "update_short_term_memory" in (await newest_record()).tool_calls["offered"]


async def test_forget_me_deletes_the_note_that_drew_on_the_users_messages(
    tdemo: Demo,
    llm_server: FakeLLMServer,
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    llm_server.script = [tool_round(("update_short_term_memory", json.dumps({"note": NOTE}))), "Noted."]
    await say(tdemo, MINA, "tomori, Kyoto in April!")
    assert await m.ShortTermMemory.objects.acount() == 1

    result = await asyncio.to_thread(forget.forget_user, MINA, actor=TEST_ACTOR)

    assert result.short_term_memories == 1
    assert await m.ShortTermMemory.objects.acount() == 0
    assert not await m.ShortTermMemory.history.filter(content=NOTE).aexists()
