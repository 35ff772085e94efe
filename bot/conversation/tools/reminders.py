"""The reminder tools: set one (for a person of the conversation, or ``self``: a task of the persona)
and cancel one.

``when`` is an ISO-8601 time the model computes from the prompt's current-time block; without an
offset it is read in the server's timezone (``ServerSettings.timezone_offset``), so "21:00" in a
UTC+9 server is 12:00 UTC. A time in the past or more than a year ahead is refused
(``personas.actions.tool_actions.set_reminder``).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from pydantic import Field

from bot.conversation.tools.base import Tool, ToolArgs, ToolOutcome, ToolTurn, Unresolved, refusal, resolve_person
from bot.conversation.tools.notices import notice
from personas import actions
from personas import models as m
from personas.actions import tool_actions
from personas.provenance import Provenance, WrittenRow

SELF = "self"


class SetReminder(ToolArgs):
    user: str = Field(
        description="Who to remind: their @handle, name or the ref_N of their message; 'self' for your own task."
    )
    purpose: str = Field(description="What to remind them of, in a few words.")
    when: str = Field(description="ISO-8601 time, e.g. 2025-05-01T21:00:00; without an offset, the server's time.")
    repeat_hours: int | None = Field(
        default=None, description=f"Repeat every this many hours (1 to {tool_actions.MAX_REPEAT_HOURS})."
    )


class CancelReminder(ToolArgs):
    id: int = Field(description="The reminder id shown when it was set.")


def reminder_time(when: str, offset_hours: float) -> datetime:
    """``when`` as an aware UTC time; naive times are the server's local time. Raises ValueError."""
    parsed = datetime.fromisoformat(when.strip())
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone(timedelta(hours=offset_hours)))
    return parsed.astimezone(UTC)


async def set_reminder(turn: ToolTurn, args: SetReminder) -> ToolOutcome:
    self_task = args.user.strip().lower() == SELF
    try:
        target = turn.bot_user_id if self_task else resolve_person(turn, args.user)
    except Unresolved as exc:
        return refusal(str(exc))
    server = turn.ctx.turn.server
    try:
        at = reminder_time(args.when, server.timezone_offset)
    except ValueError:
        return refusal("'when' is not an ISO-8601 time (e.g. 2025-05-01T21:00:00).")
    label = "" if self_task else turn.label_of(target)

    def write() -> m.Reminder:
        return tool_actions.set_reminder(
            m.Persona.objects.get(pk=turn.persona_id),
            tool_actions.ReminderRequest(target, args.purpose, at, args.repeat_hours, label),
            channel_disc_id=turn.ctx.turn.locked_turn.channel_id,
            bot_user_disc_id=turn.bot_user_id,
            created_by_disc_id=turn.triggerer_id,
            provenance=Provenance(message_disc_id=turn.trigger_message_id),
            actor=turn.actor,
            now=datetime.fromtimestamp(turn.now_ms / 1000, tz=UTC),
        )

    try:
        reminder = await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))
    local = at.astimezone(timezone(timedelta(hours=server.timezone_offset)))
    key = "reminders.task_set_title" if self_task else "reminders.reminder_set_title"
    if args.repeat_hours:
        key = "reminders.recurring_task_set_title"
    who = "" if self_task else f" for {label or 'them'}"
    every = f", every {args.repeat_hours} h" if args.repeat_hours else ""
    return ToolOutcome(
        result=f"Reminder {reminder.pk} set{who} at {local:%Y-%m-%d %H:%M} server time.",
        written=(WrittenRow("reminder", reminder.pk),),
        notice=notice(
            key,
            f"{reminder.reminder_purpose} — {local:%Y-%m-%d %H:%M}{every}{who} (reminder {reminder.pk})",
            persona_nickname=turn.ctx.current_persona.persona_nickname,
        ),
        subjects=() if self_task else (target,),
    )


async def cancel_reminder(turn: ToolTurn, args: CancelReminder) -> ToolOutcome:
    def write() -> m.Reminder:
        return tool_actions.cancel_reminder(m.Persona.objects.get(pk=turn.persona_id), args.id, actor=turn.actor)

    try:
        reminder = await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))
    return ToolOutcome(result=f"Reminder {reminder.pk} cancelled.")


TOOLS: tuple[Tool, ...] = (
    Tool("set_reminder", "Set a reminder for a person, or a task for yourself.", SetReminder, "reminder", set_reminder),
    Tool("cancel_reminder", "Cancel a reminder you set.", CancelReminder, "reminder", cancel_reminder),
)
