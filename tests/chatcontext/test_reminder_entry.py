"""BC7-01/02: reminder injection and reminder forced mentions (§12 scenarios 46–47)."""

from __future__ import annotations

from chatcontext.core.reminder_injection import build_forced_mentions, build_reminder_entry, merge_forced_mentions
from chatcontext.core.types import ChatIncoming, ReminderData
from tests.chatcontext.turn_factory import BOT, NOW_MS, U2, message


def incoming(recipient: str | None = None, **data: object) -> ChatIncoming:
    return ChatIncoming(
        message=message(),
        reminder_recipient_id=recipient,
        reminder_data=ReminderData(**data) if data else None,  # type: ignore[arg-type]
    )


def test_s46_bc7_01_self_reminder() -> None:
    result = build_reminder_entry(
        incoming(reminder_purpose="water plants", reminder_lateness="5 minutes", self_reminder=True), BOT, NOW_MS
    )
    assert result is not None
    assert result.content == (
        '[System: A task reminder you set for yourself has triggered. Task: "water plants". '
        "Please execute this task now.]\n[System: This task is 5 minutes overdue.]"
    )
    assert (result.id, result.author_id, result.author_name, result.author_type) == (
        f"synthetic-reminder-{NOW_MS}",
        BOT,
        "System",
        "user",
    )
    assert result.created_at is None
    assert not result.has_media


def test_s47_bc7_01_user_and_matrix_reminders() -> None:
    discord = build_reminder_entry(incoming(U2, reminder_purpose="call mom"), BOT, NOW_MS)
    assert discord is not None and discord.content is not None
    assert f"(Mention format: @{{<@{U2}>}} or @{{{U2}}})" in discord.content
    assert discord.content == (
        f"[System: A reminder you set earlier for <@{U2}> (Mention format: @{{<@{U2}>}} or @{{{U2}}}) has "
        f'triggered. Reminder: "call mom". Focus on reminding and pinging <@{U2}> about this.]'
    )

    matrix = build_reminder_entry(
        incoming("@al:mx.org", reminder_purpose="stretch", reminder_lateness="2 hours"), BOT, NOW_MS
    )
    assert matrix is not None and matrix.content is not None
    assert "for @al (Mention ID: @{al}) has triggered" in matrix.content
    assert matrix.content.endswith("\n[System: You are also 2 hours late in reminding the user.]")

    assert build_reminder_entry(incoming(None, reminder_purpose="nobody"), BOT, NOW_MS) is None
    assert build_reminder_entry(incoming(U2), BOT, NOW_MS) is None


def test_bc7_01_author_falls_back_to_recipient_then_system() -> None:
    to_user = build_reminder_entry(incoming(U2, reminder_purpose="x"), None, NOW_MS)
    assert to_user is not None and to_user.author_id == U2
    to_self = build_reminder_entry(incoming(None, reminder_purpose="x", self_reminder=True), None, NOW_MS)
    assert to_self is not None and to_self.author_id == "system"


def test_bc7_02_forced_mentions_turn_first_then_recipient_deduplicated() -> None:
    turn_mentions = [{"handle": "Bob", "user_id": U2}]
    result = build_forced_mentions(turn_mentions, incoming(U2, reminder_purpose="x"), ["bob", "bobby", "  "])
    assert result == [{"handle": "Bob", "user_id": U2}, {"handle": "bobby", "user_id": U2}]


def test_bc7_02_self_reminder_adds_no_recipient_mentions_and_empty_is_none() -> None:
    self_incoming = ChatIncoming(
        message=message(), reminder_recipient_id=U2, reminder_data=ReminderData("x", self_reminder=True)
    )
    assert build_forced_mentions(None, self_incoming, ["Bob"]) is None
    assert merge_forced_mentions(None, []) == []
