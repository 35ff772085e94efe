"""What a persona may write by itself (``personas.actions.tool_actions``, issue 15): the privacy boundary
and the lineage rule, as a property over generated channels and random sequences of tool writes."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.db import transaction
from django.utils import timezone
from hypothesis import given
from hypothesis import strategies as st

from personas import actions
from personas import models as m
from personas.actions import tool_actions
from personas.provenance import Provenance, clear_provenance
from tests.actors import TEST_ACTOR
from tests.budgets import database_property

pytestmark = pytest.mark.django_db

STATES = ("minimal", "partial", "full", "blacklisted", "blocked", "expired_block", "other_persona_block")
FORBIDDEN = {"full", "blacklisted", "blocked"}
BOT_ID = "900000000000000001"

ops = st.lists(
    st.tuples(st.sampled_from(["user_memory", "server_memory", "reminder"]), st.integers(0, 5), st.booleans()),
    max_size=8,
)


def world(states: list[str], speaker_is_alter: bool, global_allowed: bool) -> tuple[m.Persona, list[str]]:
    server = actions.register_server(
        "800000000000000001", name="s", is_dm=False, locale=None, main_persona_nickname="T", actor=TEST_ACTOR
    )
    m.ServerSettings.objects.filter(server=server).update(global_memories_enabled=global_allowed)
    main = m.Persona.objects.get(server=server, is_alter=False)
    alter = m.Persona.objects.create(server=server, persona_nickname="Ellen", is_alter=True)
    speaker = alter if speaker_is_alter else main
    other = main if speaker_is_alter else alter
    ids = []
    for i, state in enumerate(states):
        disc_id = str(700000000000000000 + i)
        ids.append(disc_id)
        user = actions.register_user(disc_id, username=f"u{i}", global_name=None, actor=TEST_ACTOR)
        if state in ("partial", "full"):
            actions.set_privacy_level(
                user, m.PrivacyLevel.PARTIAL if state == "partial" else m.PrivacyLevel.FULL, actor=TEST_ACTOR
            )
        elif state == "blacklisted":
            actions.add_to_blacklist(server, disc_id, actor=TEST_ACTOR)
        elif state in ("blocked", "expired_block", "other_persona_block"):
            expires = timezone.now() + timedelta(days=-1 if state == "expired_block" else 1)
            blocker = other if state == "other_persona_block" else speaker
            m.PersonaUserBlock.objects.create(
                server=server, persona=blocker, user_disc_id=disc_id, reason="r", expires_at=expires
            )
    return speaker, ids


@database_property
@given(
    states=st.lists(st.sampled_from(STATES), min_size=1, max_size=6),
    speaker_is_alter=st.booleans(),
    global_allowed=st.booleans(),
    writes=ops,
)
def test_no_tool_write_is_about_a_forbidden_user_and_every_row_is_in_the_personas_lineage(
    states, speaker_is_alter, global_allowed, writes
) -> None:  # type: ignore[no-untyped-def]
    with transaction.atomic():
        persona, ids = world(states, speaker_is_alter, global_allowed)
        at = timezone.now() + timedelta(hours=1)
        for op, index, everywhere in writes:
            target = ids[index % len(ids)]
            try:
                if op == "user_memory":
                    tool_actions.learn_about_user(
                        persona,
                        target,
                        "likes tea",
                        global_scope=everywhere,
                        provenance=Provenance("1"),
                        actor=TEST_ACTOR,
                    )
                elif op == "server_memory":
                    tool_actions.learn_about_server(persona, "has a garden", global_scope=everywhere, actor=TEST_ACTOR)
                else:
                    tool_actions.set_reminder(
                        persona,
                        tool_actions.ReminderRequest(BOT_ID if everywhere else target, "tea", at),
                        channel_disc_id="600000000000000001",
                        bot_user_disc_id=BOT_ID,
                        actor=TEST_ACTOR,
                    )
            except actions.ActionError:
                pass
        allowed_lineages = {persona.persona_lineage_id} | ({0} if global_allowed else set())
        forbidden = {disc_id for disc_id, state in zip(ids, states, strict=True) if state in FORBIDDEN}
        no_memories = forbidden | {disc_id for disc_id, state in zip(ids, states, strict=True) if state == "partial"}
        memories = m.PersonalMemory.objects.select_related("user")
        assert not {mem.user.user_disc_id for mem in memories} & no_memories
        assert {mem.persona_lineage_id for mem in memories} <= allowed_lineages
        assert set(m.ServerMemory.objects.values_list("persona_lineage_id", flat=True)) <= allowed_lineages
        assert not set(m.Reminder.objects.values_list("user_discord_id", flat=True)) & forbidden
        transaction.set_rollback(True)


def test_a_reminder_in_the_past_or_beyond_a_year_is_refused() -> None:
    persona, [user] = world(["minimal"], False, False)
    now = timezone.now()
    for at in (now - timedelta(minutes=1), now + timedelta(days=366)):
        with pytest.raises(tool_actions.ToolWriteRefused):
            tool_actions.set_reminder(
                persona,
                tool_actions.ReminderRequest(user, "x", at),
                channel_disc_id="1",
                bot_user_disc_id=BOT_ID,
                now=now,
                actor=TEST_ACTOR,
            )
    assert not m.Reminder.objects.exists()


def _reminder(persona: m.Persona, user: str, *, purpose: str = "x", repeat_hours: int | None = None) -> m.Reminder:
    return tool_actions.set_reminder(
        persona,
        tool_actions.ReminderRequest(user, purpose, timezone.now() + timedelta(hours=1), repeat_hours),
        channel_disc_id="1",
        bot_user_disc_id=BOT_ID,
        actor=TEST_ACTOR,
    )


def test_a_purpose_over_the_limit_is_refused_and_one_at_the_limit_is_kept(settings) -> None:  # type: ignore[no-untyped-def]
    """Issue 26 item 7: a purpose is shown in every prompt until it fires, so it is capped like a memory."""
    settings.TOMORI = {**settings.TOMORI, "MAX_REMINDER_PURPOSE_LENGTH": 30}
    persona, [user] = world(["minimal"], False, False)
    with pytest.raises(tool_actions.ToolWriteRefused, match="at most 30 characters"):
        _reminder(persona, user, purpose="x" * 31)
    assert not m.Reminder.objects.exists()
    assert _reminder(persona, user, purpose=" " + "y" * 30 + " ").reminder_purpose == "y" * 30


@pytest.mark.parametrize("repeat_hours", [0, 365 * 24 + 1, 10**12, 10**30])
def test_a_repetition_out_of_range_is_refused_with_why(repeat_hours: int) -> None:
    persona, [user] = world(["minimal"], False, False)
    with pytest.raises(tool_actions.ToolWriteRefused, match="repeats"):
        _reminder(persona, user, repeat_hours=repeat_hours)
    assert not m.Reminder.objects.exists()
    assert _reminder(persona, user, repeat_hours=365 * 24).repetition_interval_hours == 365 * 24


def test_self_teaching_off_refuses_memories() -> None:
    persona, [user] = world(["minimal"], False, False)
    m.ServerSettings.objects.filter(server=persona.server).update(self_teaching_enabled=False)
    with pytest.raises(tool_actions.ToolWriteRefused):
        tool_actions.learn_about_user(persona, user, "x", actor=TEST_ACTOR)
    assert not m.PersonalMemory.objects.exists()


def test_clear_provenance_drops_pointers_at_deleted_records_and_forgotten_messages() -> None:
    """What retention (record ids) and forget-me (record ids and the forgotten author's message ids) call."""
    persona, [bob] = world(["minimal"], False, False)
    memory = tool_actions.learn_about_user(
        persona, bob, "likes trains", provenance=Provenance("555", 42), actor=TEST_ACTOR
    )
    assert (memory.source_message_disc_id, memory.source_prompt_record_id) == ("555", 42)

    assert clear_provenance(record_ids=[42]) == 1
    memory.refresh_from_db()
    assert memory.source_prompt_record_id is None and memory.source_message_disc_id == "555"
    assert clear_provenance(message_ids=["555"]) == 1
    memory.refresh_from_db()
    assert memory.source_message_disc_id == ""
