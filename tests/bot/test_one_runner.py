"""One turn runner for every surface (issue 14): the same locked turn — the same channel content, the
same trigger, the same personas — run through the Discord outlet (dpytest, the real bot) and through
the playground outlet gives the same prompt record.

The playground channel mirrors the Discord one row for row: the same message ids, authors, texts,
times and reply, and the guild's members as member rows. The playground turn runs at the Discord
turn's ``now_ms``. "The same record" is then every field of the record except the three that name
the surface or the moment the row was written: ``id``, ``created_at`` and ``source``.
"""

from __future__ import annotations

from typing import Any

import discord
import discord.ext.test as dpytest
import pytest

from bot.conversation.db import in_callers_transaction
from bot.conversation.jobs import TurnJob, TurnResult
from bot.conversation.runner import TurnRunner
from bot.conversation.window_memory import WINDOWS
from bot.discord.transport import to_discord_message, to_member_info
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.service import admit_row, playground_bot, playground_runner, read_trigger, server_state
from chatcontext.core.types import DiscordMessage
from chatcontext.models import PromptRecord
from personas import actions
from personas import models as m
from tests.actors import TEST_ACTOR
from tests.bot.fakes import post_reply, run_db, setup_server

pytestmark = pytest.mark.django_db(transaction=True)

# What legitimately differs between the two records: the row's own id and write time, the surface
# it came from, and how long the stages took (the diagnostics' timings). Everything else — the prompt
# (context items), the simplified messages, the ref_N map, the streaming context, the target index,
# the rest of the diagnostics, the exclusions, the turn snapshot, the reply, provider, usage and the
# subjects — must be equal.
SURFACE_FIELDS = {"id", "created_at", "source"}
WEBHOOK_ID = "1300000000000000001"


def without_timings(diagnostics: Any) -> Any:
    if isinstance(diagnostics, dict):
        return {
            k: without_timings(v) for k, v in diagnostics.items() if k != "durations" and not k.endswith("duration_ms")
        }
    return diagnostics


def record_fields(record: PromptRecord) -> dict[str, Any]:
    fields = {f.attname: getattr(record, f.attname) for f in PromptRecord._meta.concrete_fields}
    assert fields.keys() >= SURFACE_FIELDS and "durations" in fields["diagnostics"]
    kept = {k: v for k, v in fields.items() if k not in SURFACE_FIELDS}
    return {**kept, "diagnostics": without_timings(kept["diagnostics"])}


def mirror_channel(
    guild: discord.Guild, channel: discord.TextChannel, messages: list[discord.Message]
) -> PlaygroundChannel:
    """The Discord channel as a playground channel: its members as member rows (as the bot sees them
    with the presence intent) and its messages as rows with the same ids and times."""
    server = m.Server.objects.get(server_disc_id=str(guild.id))
    for member in guild.members:
        info = to_member_info(member, presence_intent=True)
        m.ServerMember.objects.create(
            server=server,
            user_disc_id=info.user_disc_id,
            username=info.username,
            global_name=info.global_name,
            nickname=info.nickname,
            is_bot=info.is_bot,
            can_manage_server=info.can_manage_server,
            roles=[{"id": r.id, "name": r.name, "position": r.position} for r in info.roles],
            presence_status=info.presence_status,
        )
    mirror = PlaygroundChannel.objects.create(
        server=server, disc_id=str(channel.id), webhook_disc_id=WEBHOOK_ID, name=channel.name, topic=channel.topic or ""
    )
    rows: dict[str, PlaygroundMessage] = {}
    for message in messages:
        seen = to_discord_message(message)
        replied = seen.reference.message_id if seen.reference else None
        rows[seen.id] = PlaygroundMessage.objects.create(
            channel=mirror,
            disc_id=seen.id,
            author_disc_id=seen.author.id,
            content=seen.content,
            created_at_ms=seen.created_timestamp,
            reply_to=rows[replied] if replied else None,
        )
    return mirror


def register_members(guild: discord.Guild, memory_of: discord.Member, memory: str) -> None:
    """Every member registered before either turn, as the first turn would register them: the two
    turns then start from the same rows (a turn's only other write is its record). One memory."""
    server = m.Server.objects.get(server_disc_id=str(guild.id))
    lineage = actions.persona_memory_lineage(m.Persona.objects.get(server=server, is_alter=False))
    for member in guild.members:
        if not member.bot:
            user = actions.register_user(
                str(member.id), username=member.name, global_name=member.global_name, actor=TEST_ACTOR
            )
            if member == memory_of:
                actions.add_personal_memory(user, lineage, memory, actor=TEST_ACTOR)


async def playground_turn(
    mirror: PlaygroundChannel, trigger_id: str, runner: TurnRunner
) -> tuple[DiscordMessage, list[TurnResult[PlaygroundMessage]]]:
    """The mirrored trigger through the playground's admission, its outlet and the shared runner."""
    db = in_callers_transaction
    row = await PlaygroundMessage.objects.select_related("reply_to", "channel__server").aget(disc_id=trigger_id)
    channel = row.channel
    state = await db(server_state)(channel.server)
    bot_user = await db(playground_bot)(channel, state)
    trigger = await db(read_trigger)(channel, row, bot_user)
    admission = await admit_row(trigger, state, bot_user, runner.clock())
    assert admission.admitted
    outlet = PlaygroundOutlet(channel, row, bot_user, clock=runner.clock)
    results = await runner.run(TurnJob.answering(trigger.message, admission, state, outlet, triggerer=trigger.member))
    return trigger.message, results


def delivered_on_discord(harness: Any, persona: str) -> str:
    if persona == "Tomori":  # the main persona replies natively
        [reply] = [dpytest.get_message() for _ in range(dpytest.sent_queue.qsize())]
        return reply.content
    [send] = harness.webhooks.hooks[harness.channel.id].sends  # an alter through the channel webhook
    assert send.username == persona
    return send.content


@pytest.mark.parametrize("harness", [{"presences": True}], indirect=True)
@pytest.mark.parametrize(
    ("addressing", "persona"),
    [("mention", "Tomori"), ("trigger word", "Ellen")],
)
async def test_the_same_locked_turn_gives_the_same_prompt_record_through_the_discord_and_playground_outlets(
    harness, addressing, persona
):
    ann, bob, rei = harness.member(0), harness.member(1), harness.member(2)
    await run_db(setup_server, harness.guild, full_privacy=[rei])
    await run_db(register_members, harness.guild, ann, "works the night shift at the harbour")
    await dpytest.message("my new address is 4 Harbor Lane", member=rei)  # privacy-FULL: left out
    asked = await dpytest.message("evening! anyone up for a round later?", member=bob)
    await post_reply(harness.channel, ann, asked.id, "after midnight, maybe")
    address = f"<@{harness.bot.user.id}>" if addressing == "mention" else "ellen,"
    trigger = await dpytest.message(f"{address} what did Bob ask?", member=ann)

    [on_discord] = [r async for r in PromptRecord.objects.all()]
    assert on_discord.source == PromptRecord.Source.BOT and on_discord.persona_nickname == persona
    window = [msg async for msg in harness.channel.history(limit=20) if msg.id <= trigger.id]
    mirror = await run_db(mirror_channel, harness.guild, harness.channel, window[::-1])
    now_ms = on_discord.snapshot["now_ms"]
    runner = playground_runner(clock=lambda: now_ms)
    WINDOWS.clear()  # the same turn again, as a process that never served this channel runs it

    read, [result] = await playground_turn(mirror, str(trigger.id), runner)

    assert read == to_discord_message(trigger)  # the same trigger, as the pipeline reads it
    in_playground = result.record
    assert in_playground.source == PromptRecord.Source.PLAYGROUND
    assert record_fields(in_playground) == record_fields(on_discord)
    # Each outlet delivered the reply of record its own way.
    assert delivered_on_discord(harness, persona) == on_discord.reply_text == result.reply.content
    assert result.reply.reply_to_id is not None and (result.reply.webhook_disc_id != "") == (persona == "Ellen")
    # The prompt is worth comparing: it holds the reply and not the FULL user's words, and Tomori's
    # memory of Ann only in Tomori's own prompt (an alter has a lineage of its own).
    prompt = "\n".join(item["text"] for item in on_discord.context_items)
    assert "after midnight, maybe" in prompt and "Harbor Lane" not in prompt and on_discord.exclusions
    assert ("works the night shift at the harbour" in prompt) == (persona == "Tomori")
