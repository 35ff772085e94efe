"""Reminder injection and reminder forced mentions (build-context.md §7.1, BC7-01/02).

Pure: the clock (`now_ms`) and the recipient's names are inputs; member lookups happen in the shell.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from chatcontext.core.frames import system_frame
from chatcontext.core.types import ChatIncoming, JSONDict, SimplifiedMessage

# A bridged Matrix id such as `@al:mx.org` (BC7-01).
_MATRIX_RECIPIENT = re.compile(r"^@[^:]+:[^:]+")


def reminder_applies(incoming: ChatIncoming) -> bool:
    """BC7-01 / BC9-07 condition: reminder data plus a recipient or a self reminder."""
    data = incoming.reminder_data
    return data is not None and bool(incoming.reminder_recipient_id or data.self_reminder)


def reminder_text(purpose: str, lateness: str | None, recipient_id: str | None, self_reminder: bool) -> str:
    """The `[System: ...]` text of a triggered reminder, first matching case of BC7-01."""
    if self_reminder:
        text = system_frame(
            f'A task reminder you set for yourself has triggered. Task: "{purpose}". Please execute this task now.'
        )
        return text + (f"\n[System: This task is {lateness} overdue.]" if lateness else "")
    recipient = recipient_id or ""
    if _MATRIX_RECIPIENT.match(recipient):
        local_part = recipient.split(":", 1)[0].removeprefix("@")
        # The braces after `@` are literal text: the mention syntax the delivery layer expands.
        text = system_frame(
            f"A reminder you set earlier for @{local_part} (Mention ID: @{{{local_part}}}) has triggered. "
            f'Reminder: "{purpose}". Focus on reminding and pinging @{local_part} about this.'
        )
    else:
        mention = f"<@{recipient}>"
        text = system_frame(
            f"A reminder you set earlier for {mention} (Mention format: @{{{mention}}} or @{{{recipient}}}) "
            f'has triggered. Reminder: "{purpose}". Focus on reminding and pinging {mention} about this.'
        )
    return text + (f"\n[System: You are also {lateness} late in reminding the user.]" if lateness else "")


def build_reminder_entry(incoming: ChatIncoming, bot_user_id: str | None, now_ms: int) -> SimplifiedMessage | None:
    """BC7-01: the synthetic history entry appended after the merge loop (never merged), or None."""
    data = incoming.reminder_data
    if data is None or not reminder_applies(incoming):
        return None
    return SimplifiedMessage(
        id=f"synthetic-reminder-{now_ms}",
        author_id=bot_user_id or incoming.reminder_recipient_id or "system",
        author_name="System",
        author_type="user",
        content=reminder_text(
            data.reminder_purpose, data.reminder_lateness, incoming.reminder_recipient_id, bool(data.self_reminder)
        ),
    )


def merge_forced_mentions(*mention_lists: Iterable[JSONDict] | None) -> list[JSONDict]:
    """De-duplicate `{handle, user_id}` mentions on `(user_id, handle.lower())`, first occurrence wins."""
    seen: set[tuple[str, str]] = set()
    merged: list[JSONDict] = []
    for mentions in mention_lists:
        for mention in mentions or ():
            key = (str(mention.get("user_id", "")), str(mention.get("handle", "")).lower())
            if key in seen:
                continue
            seen.add(key)
            merged.append(mention)
    return merged


def build_forced_mentions(
    turn_forced_mentions: Iterable[JSONDict] | None,
    incoming: ChatIncoming,
    recipient_names: Sequence[str] = (),
) -> list[JSONDict] | None:
    """BC7-02: the turn's forced mentions, then the reminder recipient's (not for self reminders).

    ``recipient_names`` are the recipient's known handles (display name, global name, username) as the
    shell resolved them; each becomes one `{handle, user_id}` mention. Empty result → None.
    """
    recipient = incoming.reminder_recipient_id
    self_reminder = bool(incoming.reminder_data and incoming.reminder_data.self_reminder)
    recipient_mentions: list[JSONDict] = []
    if recipient and not self_reminder:
        recipient_mentions = [{"handle": n.strip(), "user_id": recipient} for n in recipient_names if n.strip()]
    merged = merge_forced_mentions(turn_forced_mentions, recipient_mentions)
    return merged or None
