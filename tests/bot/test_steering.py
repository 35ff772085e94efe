"""/refresh and /compact on Discord (issue 30 items 1–2): dpytest drives the bot, the local
OpenAI-compatible server writes the summaries, and the next turn's prompt shows what the personas read.
dpytest cannot deliver interactions, so the command callbacks get a ``FakeInteraction`` carrying
dpytest's real guild, members and channel."""

from __future__ import annotations

import discord
import discord.ext.test as dpytest
import pytest

from bot.conversation.steering import COMPACT_REFUSED, MANUAL_NEEDS_TEXT, REFRESH_REFUSED, REFRESHED
from bot.conversation.texts import ERROR_MESSAGES
from bot.discord.exts._interactions import interaction_server
from chatcontext.models import PromptRecord
from community import forget
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fake_llm import FakeLLMServer
from tests.bot.fakes import FakeInteraction, run_db, setup_server
from tests.bot.tool_turns import sent_messages, use_llm

pytestmark = pytest.mark.django_db(transaction=True)

SUMMARY = "Ann and Bob planned a picnic at the lake on Saturday; Bob brings the kite."
RESET_FOOTER = "[tomori:v1:reset]"
REFRESH_FOOTER = "[tomori:v1:compact_refresh]"


async def command(harness, name: str, member_index: int, **options: object) -> FakeInteraction:
    inter = FakeInteraction(user=harness.member(member_index), guild=harness.guild, channel_id=harness.channel.id)
    cog = harness.bot.get_cog("SteeringCog")
    await getattr(type(cog), name).callback(cog, inter, **options)
    return inter


async def give_manage_messages(harness, member_index: int) -> None:
    role = dpytest.backend.make_role(
        "Helpers", harness.guild, permissions=discord.Permissions(manage_messages=True).value
    )
    await dpytest.add_role(harness.member(member_index), role)


async def chat_before(harness) -> None:
    """Two members talk, without addressing a persona: the window the commands act on."""
    ann, bob = harness.member(0), harness.member(1)
    await dpytest.message("shall we have a picnic at the lake on saturday", member=ann)
    await dpytest.message("yes and I bring the kite", member=bob)


def prompt_text(harness) -> str:
    return "\n".join(item.text for item in harness.prompts[-1])


async def setup(harness, llm_server: FakeLLMServer | None = None, **settings: object) -> None:
    await run_db(setup_server, harness.guild)
    if llm_server is not None:
        await run_db(use_llm, harness.guild.id, llm_server, **settings)


async def test_refresh_posts_the_reset_notice_and_the_next_turn_reads_nothing_before_it(harness):
    await setup(harness)
    await give_manage_messages(harness, 2)
    await chat_before(harness)

    inter = await command(harness, "refresh", 2)

    assert inter.reply == REFRESHED
    [notice] = sent_messages()
    [embed] = notice.embeds
    assert embed.title == "🧹 Conversation History Cleared" and embed.footer.text == RESET_FOOTER
    await dpytest.message("tomori, what were we planning?", member=harness.member(0))
    text = prompt_text(harness)
    assert "what were we planning" in text
    assert "picnic" not in text and "kite" not in text
    [record] = [r async for r in PromptRecord.objects.all()]
    assert {e["reason"] for e in record.exclusions} >= {"reset_marker"}


async def test_the_steering_jobs_outlet_posts_a_reply_and_a_failure_notice_in_the_channel(harness):
    """The Discord job of ``/compact`` speaks through ``DiscordOutlet`` itself, which is a whole
    ``Outlet``: a reply is a plain post as the persona, a failure the localised error message."""
    await setup(harness)
    await chat_before(harness)
    inter = FakeInteraction(user=harness.member(2), guild=harness.guild, channel_id=harness.channel.id)
    cog = harness.bot.get_cog("SteeringCog")
    job = await cog._job(inter, await interaction_server(inter))
    persona = job.personas[0]

    delivery = await job.outlet.deliver(persona, "A plain post.", reply_notice=None, locale="ja")
    await job.outlet.notify_failure(persona, locale="ja")

    reply, failure = sent_messages()
    assert reply.content == "A plain post." and reply.reference is None
    assert delivery.message_ids == [str(reply.id)] and not delivery.via_webhook
    assert failure.content == ERROR_MESSAGES["ja"] and failure.author.id == harness.bot.user.id


async def test_refresh_is_refused_to_members_without_manage_messages_unless_the_server_opens_it(harness):
    await setup(harness)
    await chat_before(harness)

    inter = await command(harness, "refresh", 0)

    assert inter.reply == REFRESH_REFUSED
    assert "Manage Messages" in inter.reply and "for everyone" in inter.reply
    assert sent_messages() == []

    await run_db(
        lambda: m.ServerSettings.objects.filter(server__server_disc_id=str(harness.guild.id)).update(
            refresh_open_to_all=True
        )
    )
    assert (await command(harness, "refresh", 0)).reply == REFRESHED
    [notice] = sent_messages()
    assert notice.embeds[0].footer.text == RESET_FOOTER


async def test_compact_summarises_the_window_records_the_call_and_the_next_turn_starts_at_the_summary(
    harness, llm_server
):
    await setup(harness, llm_server)
    await give_manage_messages(harness, 2)
    await chat_before(harness)
    llm_server.script = [SUMMARY]

    inter = await command(harness, "compact", 2, kind="summary")

    assert inter.response.deferred and inter.reply.startswith("Conversation compacted")
    [notice] = sent_messages()
    [embed] = notice.embeds
    assert embed.title == "🧹 Compact Summary (Refreshed)" and embed.footer.text == REFRESH_FOOTER
    assert embed.description == SUMMARY
    # The summary call: its own prompt, made from the window, with no tools and no stream.
    summary_request = llm_server.requests[-1]
    assert "tools" not in summary_request and not summary_request.get("stream")
    asked = "\n".join(str(message["content"]) for message in summary_request["messages"])
    assert "picnic at the lake" in asked and "I bring the kite" in asked
    [record] = [r async for r in PromptRecord.objects.all()]
    ann, bob = harness.member(0), harness.member(1)
    assert record.command == {
        "name": "compact",
        "kind": "summary",
        "by": str(harness.member(2).id),
        "summarised_messages": 2,
        "notice": "posted",
    }
    assert record.reply_text == SUMMARY and record.error == ""
    assert {str(ann.id), str(bob.id)} <= set(record.subject_user_ids)
    summary = await m.ConversationSummary.objects.aget()
    assert summary.kind == "summary" and summary.content == SUMMARY
    assert summary.author_disc_ids == [str(ann.id), str(bob.id)]
    assert summary.source_prompt_record_id == record.pk and summary.requested_by_disc_id == str(harness.member(2).id)

    llm_server.script = ["On Saturday, with a kite!"]
    await dpytest.message("tomori, what were we planning?", member=ann)

    text = prompt_text(harness)
    assert f"[System: ## 🧹 Compact Summary (Refreshed)\n{SUMMARY}]" in text
    assert "shall we have a picnic" not in text and "yes and I bring the kite" not in text


async def test_compact_is_refused_to_members_without_manage_messages_even_when_refresh_is_open(harness, llm_server):
    await setup(harness, llm_server, refresh_open_to_all=True)
    await chat_before(harness)
    requests = len(llm_server.requests)

    inter = await command(harness, "compact", 0, kind="summary")

    assert inter.reply == COMPACT_REFUSED
    assert len(llm_server.requests) == requests and sent_messages() == []
    assert await PromptRecord.objects.acount() == 0


async def test_a_failed_summary_call_is_recorded_and_leaves_the_conversation_as_it_was(harness, llm_server):
    await setup(harness, llm_server, llm_model="fail")
    await give_manage_messages(harness, 2)
    await chat_before(harness)

    inter = await command(harness, "compact", 2, kind="roleplay_scene")

    assert inter.reply.startswith("Nothing was compacted") and "conversation is as it was" in inter.reply
    assert sent_messages() == []
    [record] = [r async for r in PromptRecord.objects.all()]
    assert record.error and record.command["kind"] == "roleplay_scene" and record.command["notice"] == "not posted"
    assert await m.ConversationSummary.objects.acount() == 0


async def test_a_manual_entry_posts_the_moderators_text_without_a_model_call(harness, llm_server):
    await setup(harness, llm_server)
    await give_manage_messages(harness, 2)
    await chat_before(harness)
    requests = len(llm_server.requests)

    missing = await command(harness, "compact", 2, kind="manual_entry")
    assert missing.reply == MANUAL_NEEDS_TEXT
    inter = await command(harness, "compact", 2, kind="manual_entry", text="  The picnic moved to Sunday.  ")

    assert inter.reply.startswith("Manual entry posted")
    [notice] = sent_messages()
    assert notice.embeds[0].title == "🧹 Manual Entry (Refreshed)"
    assert notice.embeds[0].description == "The picnic moved to Sunday."
    assert len(llm_server.requests) == requests
    entry = await m.ConversationSummary.objects.aget()
    assert entry.kind == "manual_entry" and entry.author_disc_ids == [str(harness.member(2).id)]

    await dpytest.message("tomori, when is the picnic?", member=harness.member(0))
    text = prompt_text(harness)
    assert "The picnic moved to Sunday." in text and "I bring the kite" not in text


async def test_forget_me_deletes_the_summaries_that_drew_on_the_users_messages(harness, llm_server):
    await setup(harness, llm_server)
    await give_manage_messages(harness, 2)
    await chat_before(harness)
    llm_server.script = [SUMMARY]
    await command(harness, "compact", 2, kind="summary")
    await dpytest.message("just me now", member=harness.member(2))
    llm_server.script = ["Only Rei was here."]
    await command(harness, "compact", 2, kind="summary")
    sent_messages()
    rei_only = await m.ConversationSummary.objects.filter(content="Only Rei was here.").aget()

    result = await run_db(forget.forget_user, str(harness.member(1).id), actor=TEST_ACTOR)

    assert result.summaries == 1
    assert [s.pk async for s in m.ConversationSummary.objects.all()] == [rei_only.pk]


async def test_automatic_compaction_summarises_a_full_window_before_the_turn(harness, llm_server):
    await setup(harness, llm_server, auto_compact_enabled=True, message_fetch_limit=20)
    ann, bob = harness.member(0), harness.member(1)
    for i in range(19):
        await dpytest.message(f"chatter number {i}", member=ann if i % 2 else bob)
    llm_server.script = [SUMMARY, "Saturday at the lake!"]

    await dpytest.message("tomori, what did we decide?", member=ann)

    notice, reply = sent_messages()
    assert notice.embeds[0].title == "🧹 Compact Summary (Refreshed)" and reply.content == "Saturday at the lake!"
    summary_record, turn_record = [r async for r in PromptRecord.objects.order_by("created_at", "id")]
    assert summary_record.command["by"] == "automatic" and summary_record.reply_text == SUMMARY
    stored = await m.ConversationSummary.objects.aget()
    assert stored.requested_by_disc_id == "" and set(stored.author_disc_ids) == {str(ann.id), str(bob.id)}
    text = prompt_text(harness)
    assert SUMMARY in text and "what did we decide" in text  # the trigger is read after the summary
    assert "chatter number" not in text
    assert turn_record.reply_text == "Saturday at the lake!"


async def test_automatic_compaction_waits_until_the_window_is_full(harness, llm_server):
    await setup(harness, llm_server, auto_compact_enabled=True, message_fetch_limit=20)
    await chat_before(harness)
    llm_server.script = ["Hi!"]

    await dpytest.message("tomori, hi", member=harness.member(0))

    [reply] = sent_messages()
    assert reply.content == "Hi!" and await m.ConversationSummary.objects.acount() == 0
    assert await PromptRecord.objects.acount() == 1
