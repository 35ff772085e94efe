"""Persona tools end to end (issue 15 acceptance): dpytest drives the bot, the local
OpenAI-compatible server scripts the model's tool calls (streamed: the bot streams by default), and
the personas rows, the channel and the prompt record show what happened."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime, timedelta

import discord
import discord.ext.test as dpytest
import pytest
from django.utils import timezone

from bot.conversation.tools.gating import ToolPolicy, offered_tools, turn_allows_tools
from chatcontext.core.participants import target_index
from chatcontext.core.participants.target_index import merge_target_indexes
from chatcontext.core.types import StreamingContext
from chatcontext.models import PromptRecord
from chatcontext.records.api import RecordDetailOut
from personas import actions
from personas import models as m
from personas.reminder_firing import ChannelLayerDispatcher, fire_due_reminders
from tests.actors import TEST_ACTOR
from tests.bot.fake_llm import UNSTORABLE_ARGUMENTS, UNSTORABLE_REPLY, tool_round
from tests.bot.fakes import FakeInteraction, post_reply, run_db
from tests.bot.tool_turns import records, remember, sent_messages, setup
from tests.waiting import due_now, until

pytestmark = pytest.mark.django_db(transaction=True)

MEMORY_FOOTER = "[tomori:v1:memory_learning]"


async def test_remember_writes_a_memory_with_provenance_confirms_it_and_the_next_turn_knows_it(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    llm_server.script = [remember("ann", "Ann's cat is called Mochi"), "Noted, Mochi it is!"]

    trigger = await dpytest.message("tomori, remember that my cat is Mochi", member=ann)

    reply, confirmation = sent_messages()
    assert reply.content == "Noted, Mochi it is!"
    [embed] = confirmation.embeds
    assert embed.title.startswith("📝 Tomori Learned Something About ") and embed.footer.text == MEMORY_FOOTER
    memory = await m.PersonalMemory.objects.select_related("user").aget()
    tomori = await m.Persona.objects.aget(persona_nickname="Tomori")
    assert memory.user.user_disc_id == str(ann.id) and memory.persona_lineage_id == tomori.persona_lineage_id
    assert memory.content == "Ann's cat is called Mochi"
    [record] = await records()
    assert memory.source_prompt_record_id == record.pk and memory.source_message_disc_id == str(trigger.id)
    [call] = record.tool_calls["calls"]
    assert call["name"] == "remember_user_fact" and call["status"] == "ok"
    assert call["rows"] == [{"kind": "personal_memory", "id": memory.pk}]
    assert "remember_user_fact" in record.tool_calls["offered"]
    # The model got the result of its call, then answered.
    assert llm_server.requests[1]["messages"][-1]["role"] == "tool"

    llm_server.script = ["Of course I remember."]
    await dpytest.message("tomori, what is my cat called?", member=ann)

    text = "\n".join(item.text for item in harness.prompts[-1])
    assert "Ann's cat is called Mochi" in text  # the profile's memory
    assert f"[System: {embed.title}\nAnn's cat is called Mochi" in text  # the confirmation, as a notice


@pytest.mark.parametrize("forbid", ["full", "blacklisted", "blocked"])
async def test_remembering_someone_the_persona_may_not_is_refused_and_writes_nothing(harness, llm_server, forbid):
    await setup(harness, llm_server)
    ann, bob = harness.member(0), harness.member(1)
    await dpytest.message("I like trains", member=bob)
    sent_messages()

    def forbid_bob() -> None:
        server = m.Server.objects.get(server_disc_id=str(harness.guild.id))
        user = actions.register_user(str(bob.id), username="bob", global_name=None, actor=TEST_ACTOR)
        if forbid == "full":
            actions.set_privacy_level(user, m.PrivacyLevel.PARTIAL, actor=TEST_ACTOR)  # still in history, still named
            m.DiscordUser.objects.filter(pk=user.pk).update(privacy_level=m.PrivacyLevel.FULL)
        elif forbid == "blacklisted":
            actions.add_to_blacklist(server, str(bob.id), actor=TEST_ACTOR)
        else:
            persona = m.Persona.objects.get(server=server, is_alter=False)
            m.PersonaUserBlock.objects.create(
                server=server,
                persona=persona,
                user_disc_id=str(bob.id),
                reason="spam",
                expires_at=timezone.now() + timedelta(days=1),
            )

    await run_db(forbid_bob)
    llm_server.script = [remember("ref_1", "Bob likes trains"), "I won't."]
    await dpytest.message("tomori, remember that bob likes trains", member=ann)

    assert await m.PersonalMemory.objects.acount() == 0
    [*_, record] = await records()
    [call] = record.tool_calls["calls"]
    assert call["status"] == "refused" and call["rows"] == []
    assert all(not message.embeds for message in sent_messages())  # no confirmation


async def test_an_alter_remembers_in_its_own_lineage_and_the_main_persona_does_not_see_it(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    llm_server.script = [remember("ann", "Ann plays the cello"), "Lovely."]

    await dpytest.message("ellen, remember that I play the cello", member=ann)

    ellen = await m.Persona.objects.aget(persona_nickname="Ellen")
    memory = await m.PersonalMemory.objects.aget()
    assert memory.persona_lineage_id == ellen.persona_lineage_id
    sends = harness.webhooks.hooks[harness.channel.id].sends
    assert sends[-1].embed.footer.text == MEMORY_FOOTER and sends[-1].username == "Ellen"

    def prompt() -> str:
        return "\n".join(item.text for item in harness.prompts[-1])

    llm_server.script = ["Hello.", "Hello again."]
    await dpytest.message("tomori, what instrument do I play?", member=ann)
    # Tomori reads Ellen's confirmation in the history, but not the memory in Ann's profile ...
    assert prompt().count("Ann plays the cello") == 1 and f"Ann plays the cello (p{memory.pk})" in prompt()
    await dpytest.message("ellen, and what do I play?", member=ann)
    assert prompt().count("Ann plays the cello") == 2  # ... while Ellen reads both


async def test_an_impersonation_turn_offers_no_tools(harness, llm_server):
    await setup(harness, llm_server)
    impersonation = StreamingContext(disable_all_tools=True)  # BC9-01: what an impersonation turn sets
    assert not turn_allows_tools(impersonation, provider_tools=True, persona_id=1)
    assert offered_tools(impersonation, ToolPolicy()) == []
    llm_server.script = ["hi"]
    await dpytest.message("tomori, hello", member=harness.member(0))
    assert llm_server.requests[-1].get("tools")  # an ordinary turn does offer them


@pytest.mark.parametrize("switch", [{"tools_enabled": False}, {"llm_supports_tools": False}])
async def test_a_server_with_tools_off_or_a_model_without_tool_support_sends_none(harness, llm_server, switch):
    await setup(harness, llm_server, **switch)
    await dpytest.message("tomori, hello", member=harness.member(0))
    assert [bool(r.get("tools")) for r in llm_server.requests] == [False]


async def test_a_persona_with_tools_off_is_offered_none(harness, llm_server):
    await setup(harness, llm_server)
    await m.Persona.objects.filter(persona_nickname="Tomori").aupdate(tools_enabled=False)
    await dpytest.message("tomori, hello", member=harness.member(0))
    assert not llm_server.requests[-1].get("tools")


async def test_memory_tools_need_self_teaching(harness, llm_server):
    await setup(harness, llm_server, self_teaching_enabled=False)
    await dpytest.message("tomori, hello", member=harness.member(0))
    names = {tool["function"]["name"] for tool in llm_server.requests[-1]["tools"]}
    assert names == {"set_reminder", "cancel_reminder", "react"}


async def test_a_reminder_at_21_in_a_utc_plus_9_server_is_12_utc_and_fires_once(harness, llm_server):
    await setup(harness, llm_server, timezone_offset=9)
    ann = harness.member(0)
    local_tomorrow = (datetime.now(UTC) + timedelta(hours=9, days=1)).date()
    when = f"{local_tomorrow.isoformat()}T21:00:00"
    llm_server.script = [
        tool_round(("set_reminder", json.dumps({"user": "ann", "purpose": "stretch", "when": when}))),
        "I'll remind you.",
    ]

    await dpytest.message("tomori, remind me at 21:00 to stretch", member=ann)

    reminder = await m.Reminder.objects.aget()
    assert reminder.reminder_time == datetime(
        local_tomorrow.year, local_tomorrow.month, local_tomorrow.day, 12, tzinfo=UTC
    )
    assert reminder.user_discord_id == str(ann.id) and not reminder.self_reminder
    [*_, confirmation] = sent_messages()
    assert confirmation.embeds[0].footer.text == "[tomori:v1:reminder_set]"
    record = (await records())[-1]
    assert reminder.source_prompt_record_id == record.pk

    llm_server.script = ["Time to stretch!"]
    due_at = reminder.reminder_time + timedelta(seconds=1)
    report = await run_db(fire_due_reminders, ChannelLayerDispatcher(), now=due_at)
    again = await run_db(fire_due_reminders, ChannelLayerDispatcher(), now=due_at)
    assert report.dispatched == 1 and again.dispatched == 0

    async def fired() -> bool:
        return (await m.Reminder.objects.aget()).status == m.Reminder.Status.FIRED

    await until(fired)
    [ping] = sent_messages()
    assert f"<@{ann.id}>" in ping.content


@pytest.mark.parametrize(
    ("extra", "why"),
    [
        ({"repeat_hours": 10**12}, "A repeating reminder repeats at least once a year (every 8760 hours)."),
        ({"purpose": "x" * 1001}, "A reminder's purpose holds at most 1000 characters (this one has 1001)."),
    ],
)
async def test_a_reminder_out_of_bounds_is_a_refusal_the_model_reads(harness, llm_server, extra, why):
    """Issue 26 item 7: the tool result says why, and the model gets it, not "the tool failed"."""
    await setup(harness, llm_server)
    when = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    arguments = {"user": "ann", "purpose": "stretch", "when": when, **extra}
    llm_server.script = [tool_round(("set_reminder", json.dumps(arguments))), "Sorry, I can't."]

    await dpytest.message("tomori, remind me", member=harness.member(0))

    assert not await m.Reminder.objects.aexists()
    [call] = (await records())[-1].tool_calls["calls"]
    assert (call["status"], call["result"]) == ("refused", f"Refused: {why}")
    assert any(message.get("content") == call["result"] for message in llm_server.requests[-1]["messages"])


async def test_nul_and_lone_surrogates_from_the_model_leave_no_reply_without_its_record(harness, llm_server):
    """Issue 26 item 4: escaped NUL and lone surrogates in the reply and in a tool call's arguments are
    cleaned where they enter; the memory, the reply, its notice and the prompt record are all written."""
    await setup(harness, llm_server)
    ann = harness.member(0)
    llm_server.script = [tool_round(("remember_user_fact", UNSTORABLE_ARGUMENTS)), UNSTORABLE_REPLY]

    await dpytest.message("tomori, remember my cat", member=ann)

    reply, confirmation = sent_messages()
    assert reply.content == "Hi there \ufffd!"
    memory = await m.PersonalMemory.objects.select_related("user").aget()
    assert memory.content == "cat called \ufffd Mochi 😀\ufffd" and memory.user.user_disc_id == str(ann.id)
    assert memory.content in confirmation.embeds[0].description
    [record] = await records()
    assert record.reply_text == reply.content and record.error == ""
    [call] = record.tool_calls["calls"]
    assert call["status"] == "ok" and call["arguments"] == {"user": "ann", "content": memory.content}


async def test_arguments_nested_deeper_than_the_stack_are_invalid_json_not_a_failed_turn(harness, llm_server):
    await setup(harness, llm_server)
    nested = "[" * 100_000 + '"\\u0000"' + "]" * 100_000
    llm_server.script = [tool_round(("remember_user_fact", nested)), "Hm?"]

    await dpytest.message("tomori, remember", member=harness.member(0))

    [reply] = sent_messages()
    assert reply.content == "Hm?"
    [call] = (await records())[-1].tool_calls["calls"]
    assert (call["status"], call["result"]) == ("error", "Error: the arguments are not valid JSON.")


async def test_handles_become_pings_and_everyone_pings_nobody(harness, llm_server):
    await setup(harness, llm_server)
    ann, bob = harness.member(0), harness.member(1)
    await dpytest.message("hi all", member=bob)
    sent_messages()
    llm_server.script = ["@BOB say hi to @ann, and @everyone @nobody"]

    await dpytest.message("tomori, greet everyone", member=ann)

    [reply] = sent_messages()
    assert reply.content == f"<@{bob.id}> say hi to <@{ann.id}>, and @everyone @nobody"
    assert reply.mentions == [] or all(not isinstance(x, discord.Role) for x in reply.mentions)
    assert not reply.mention_everyone


async def test_a_tool_turn_merges_its_target_index_once(harness, llm_server, monkeypatch):
    """Issue 28 item 2: the pipeline merges the turn's target index (X-06) once, and the reply's pings
    and the tools' references read it from the turn context instead of merging it again."""
    await setup(harness, llm_server)
    ann, bob = harness.member(0), harness.member(1)
    await dpytest.message("hi all", member=bob)
    sent_messages()
    merges: list[int] = []

    def counted(indexes):  # type: ignore[no-untyped-def]
        merges.append(1)
        return merge_target_indexes(indexes)

    monkeypatch.setattr(target_index, "merge_target_indexes", counted)
    llm_server.script = [remember("ann", "Ann's cat is called Mochi"), "@BOB, Ann's cat is Mochi"]

    await dpytest.message("tomori, remember that my cat is Mochi", member=ann)

    reply, _confirmation = sent_messages()
    assert reply.content == f"<@{bob.id}>, Ann's cat is Mochi"  # the ping came from the turn's index
    memory = await m.PersonalMemory.objects.select_related("user").aget()  # "ann" resolved through it
    assert memory.user.user_disc_id == str(ann.id)
    assert merges == [1]


@pytest.mark.parametrize(
    "call",
    [
        ("remember_user_fact", "{not json"),
        ("launch_rockets", "{}"),
        ("remember_user_fact", json.dumps({"user": "ann", "content": 42})),
        ("remember_user_fact", json.dumps({"user": "ann", "content": "x", "extra": 1})),
    ],
    ids=["bad-json", "unknown-tool", "wrong-type", "unknown-field"],
)
async def test_a_malformed_call_answers_an_error_writes_nothing_and_the_turn_still_replies(harness, llm_server, call):
    await setup(harness, llm_server)
    llm_server.script = [tool_round(call), "Sorry, that did not work."]

    await dpytest.message("tomori, remember my cat", member=harness.member(0))

    [reply] = sent_messages()
    assert reply.content == "Sorry, that did not work."
    assert await m.PersonalMemory.objects.acount() == 0
    [record] = await records()
    assert record.tool_calls["calls"][0]["status"] == "error"
    assert llm_server.requests[1]["messages"][-1]["content"].startswith("Error: ")


async def test_the_api_record_detail_shows_the_tool_calls(harness, llm_server):
    await setup(harness, llm_server)
    llm_server.script = [remember("ann", "Ann likes tea"), "Noted."]
    await dpytest.message("tomori, remember I like tea", member=harness.member(0))
    [record] = await records()

    detail = await run_db(lambda: RecordDetailOut.from_orm(PromptRecord.objects.get(pk=record.pk)).model_dump())
    assert detail["tool_calls"]["calls"][0]["name"] == "remember_user_fact"


async def test_memories_list_says_a_learned_memory_came_from_chat_and_links_its_message(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    llm_server.script = [remember("ann", "Ann's cat is called Mochi"), "Noted."]
    trigger = await dpytest.message("tomori, remember that my cat is Mochi", member=ann)
    by_hand = await run_db(
        lambda: actions.add_personal_memory(
            m.DiscordUser.objects.get(user_disc_id=str(ann.id)),
            m.Persona.objects.get(persona_nickname="Tomori").persona_lineage_id,
            "Ann plays the cello",
            [],
            actor=TEST_ACTOR,
        )
    )

    cog = harness.bot.get_cog("MembersCog")
    inter = FakeInteraction(user=ann, guild=harness.guild, channel_id=harness.channel.id)
    await type(cog).memories.get_command("list").callback(cog, inter)

    link = f"https://discord.com/channels/{harness.guild.id}/{harness.channel.id}/{trigger.id}"
    assert f"Ann's cat is called Mochi — learned in chat ({link})" in inter.reply
    assert f"`#{by_hand.pk}` Ann plays the cello — added by a moderator" in inter.reply


# --- the other tools over dpytest (issue 15 acceptance) -------------------------------------------


def ann_memory(guild_id: int, ann_id: int, content: str) -> m.PersonalMemory:
    tomori = m.Persona.objects.get(server__server_disc_id=str(guild_id), persona_nickname="Tomori")
    user = actions.register_user(str(ann_id), username="ann", global_name=None, actor=TEST_ACTOR)
    return actions.add_personal_memory(user, tomori.persona_lineage_id, content, [], actor=TEST_ACTOR)


async def test_react_puts_the_personas_reaction_on_the_referenced_message(harness, llm_server, monkeypatch):
    await setup(harness, llm_server)
    # dpytest's reaction backend does not build the gateway event this discord.py reads: the call
    # Discord would get is recorded instead.
    reactions: list[tuple[int, str]] = []

    async def add_reaction(self: discord.PartialMessage, emoji: str) -> None:
        reactions.append((self.id, emoji))

    monkeypatch.setattr(discord.PartialMessage, "add_reaction", add_reaction)
    bob = harness.member(1)
    trains = await dpytest.message("I like trains", member=bob)
    sent_messages()
    # A reply makes Bob's message addressable (BC5: the replier is ref_1, the message it answers ref_2).
    llm_server.script = [tool_round(("react", json.dumps({"ref": "ref_2", "emoji": "🚂"}))), "Choo choo!"]

    await post_reply(harness.channel, harness.member(0), trains.id, "tomori, react to this")

    [reply] = sent_messages()
    assert reply.content == "Choo choo!"
    assert reactions == [(trains.id, "🚂")]
    [record] = await records()
    assert record.tool_calls["calls"][0]["status"] == "ok" and record.tool_calls["calls"][0]["rows"] == []


async def test_update_memory_changes_it_confirms_it_and_records_the_row(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    memory = await run_db(ann_memory, harness.guild.id, ann.id, "Ann's cat is called Mochi")
    update = {"id": f"p{memory.pk}", "content": "Ann's cat is called Mochi-chan"}
    llm_server.script = [tool_round(("update_memory", json.dumps(update))), "Updated!"]

    await dpytest.message("tomori, my cat is actually Mochi-chan", member=ann)

    reply, confirmation = sent_messages()
    assert reply.content == "Updated!"
    [embed] = confirmation.embeds
    assert embed.title.startswith("✏️ Tomori Updated a Memory About ") and embed.footer.text == MEMORY_FOOTER
    assert (await m.PersonalMemory.objects.aget(pk=memory.pk)).content == "Ann's cat is called Mochi-chan"
    [record] = await records()
    assert record.tool_calls["calls"][0]["rows"] == [{"kind": "personal_memory", "id": memory.pk}]


async def test_forget_memory_deletes_it_and_confirms_it(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    memory = await run_db(ann_memory, harness.guild.id, ann.id, "Ann hates mornings")
    llm_server.script = [tool_round(("forget_memory", json.dumps({"id": f"p{memory.pk}"}))), "Forgotten."]

    await dpytest.message("tomori, forget that I hate mornings", member=ann)

    reply, confirmation = sent_messages()
    assert reply.content == "Forgotten."
    assert confirmation.embeds[0].title.startswith("🗑️ Tomori Deleted a Memory About ")
    assert not await m.PersonalMemory.objects.filter(pk=memory.pk).aexists()


async def test_cancel_reminder_cancels_it_and_it_never_fires(harness, llm_server):
    await setup(harness, llm_server)
    ann = harness.member(0)
    reminder = await due_now(harness)  # due, not yet fired
    await m.Reminder.objects.filter(pk=reminder.pk).aupdate(
        persona=await m.Persona.objects.aget(persona_nickname="Tomori")
    )
    llm_server.script = [tool_round(("cancel_reminder", json.dumps({"id": reminder.pk}))), "Cancelled."]

    await dpytest.message("tomori, cancel my stretching reminder", member=ann)

    [reply] = sent_messages()
    assert reply.content == "Cancelled."
    assert (await m.Reminder.objects.aget(pk=reminder.pk)).status == m.Reminder.Status.CANCELLED
    assert (await run_db(fire_due_reminders, ChannelLayerDispatcher())).dispatched == 0
    [record] = await records()
    assert record.tool_calls["calls"][0]["result"] == f"Reminder {reminder.pk} cancelled."


async def test_an_impersonation_turn_over_discord_sends_the_model_no_tools(harness, llm_server, monkeypatch):
    """BC9-01/BC9-11: a turn that writes as a user is offered no tool at all, whatever the server allows."""
    await setup(harness, llm_server)
    bob = harness.member(1)
    await dpytest.message("I like trains", member=bob)
    sent_messages()
    # discord.py loads an extension as a module of its own: patch the copy the bot runs.
    chat = sys.modules["bot.discord.exts.chat"]
    original = chat.message_job

    def impersonating(*args, **kwargs):  # type: ignore[no-untyped-def]
        job = original(*args, **kwargs)
        job.locked_turn.incoming.is_user_impersonation = True
        job.locked_turn.incoming.impersonated_user_id = str(bob.id)
        return job

    monkeypatch.setattr(chat, "message_job", impersonating)
    llm_server.script = [remember("ann", "never written"), "Trains are great."]

    await dpytest.message("tomori, write as bob", member=harness.member(0))

    [request] = llm_server.requests
    assert "tools" not in request or not request["tools"]
    [record] = await records()
    assert record.tool_calls == {}
    assert await m.PersonalMemory.objects.acount() == 0
