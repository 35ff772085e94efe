"""Every Discord turn replays, from its stored snapshot alone, to the prompt its record holds (issue 28
item 1): a message turn and a reminder turn of a persona with example dialogue on a server with
emojis, naming another channel and a role, and a late reminder (its overdue line is in the format)."""

from __future__ import annotations

from datetime import timedelta

import discord
import discord.ext.test as dpytest
import pytest
from discord.ext.test import backend

from chatcontext.models import PromptRecord
from personas import models as m
from personas.reminder_firing import ReminderKind
from tests.bot.due_reminders import fire, one_record
from tests.bot.fakes import run_db, setup_server
from tests.replays import assert_replays_to_its_record

# The snapshot format has no "presence intent" flag and replays as if presence were known, so the
# live bot runs with the presences intent here for both prompts to agree.
pytestmark = [
    pytest.mark.parametrize("harness", [{"presences": True}], indirect=True),
    pytest.mark.django_db(transaction=True, databases=["default", "replay"]),
]

EXAMPLE = [{"role": "user", "text": "Still up, Tomori?"}, {"role": "model", "text": "Always, for the night shift."}]


def dressed_server(guild: discord.Guild) -> m.Server:
    """``setup_server`` with Tomori's example dialogue and two server emojis."""
    server = setup_server(guild)
    m.Persona.objects.filter(server=server, persona_nickname="Tomori").update(sample_dialogue=EXAMPLE)
    m.ServerEmoji.objects.create(server=server, emoji_disc_id="4401", emoji_name="owl_wave")
    m.ServerEmoji.objects.create(server=server, emoji_disc_id="4402", emoji_name="night_owl", is_animated=True)
    return server


def assert_dressed(record: PromptRecord) -> None:
    tags = [item["tag"] for item in record.context_items]
    assert "dialogue_sample" in tags and "knowledge_emojis" in tags
    assert "Still up, Tomori?" in "\n".join(item["text"] for item in record.context_items)


async def test_a_discord_message_turn_replays_to_its_record(harness):
    await run_db(dressed_server, harness.guild)
    # Named by no member: the snapshot keeps the names the turn read (format 2 ``roles``, ``channels``).
    role = backend.make_role("Night Crew", harness.guild)
    other = backend.make_text_channel("garden", harness.guild)
    await dpytest.message(f"who is in <@&{role.id}> tonight? see <#{other.id}>", member=harness.member(1))
    await dpytest.message(f"<@{harness.bot.user.id}> what did Bob ask?", member=harness.member(0))

    [record] = [r async for r in PromptRecord.objects.all()]
    prompt = "\n".join(item["text"] for item in record.context_items)
    assert "@Night Crew" in prompt and "#garden" in prompt
    assert_dressed(record)
    await run_db(assert_replays_to_its_record, record)


async def test_a_late_reminder_turn_replays_to_its_record(harness):
    await run_db(dressed_server, harness.guild)
    ann = str(harness.member(0).id)
    await dpytest.message("back from lunch", member=harness.member(1))

    await fire(harness, target=ann, kind=ReminderKind.HUMAN, late=timedelta(minutes=3))
    record = await one_record()

    prompt = "\n".join(item["text"] for item in record.context_items)
    assert "[System: You are also 3 minutes late in reminding the user.]" in prompt
    assert_dressed(record)
    await run_db(assert_replays_to_its_record, record)
