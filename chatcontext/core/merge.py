"""Consecutive same-author merge (build-context.md §4).

Runs of one author's plain-text messages become one entry, so the prompt reads like a conversation
rather than a log. The merged entry keeps parallel lists — one id, one text and one timestamp per
original message (BC4-04) — so metadata can still name every original message by its `ref_N`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from chatcontext.core.types import SimplifiedMessage

_HOUR_MS = 3_600_000
_DAY_MS = 86_400_000


def local_day(created_at: int, timezone_offset_hours: float) -> int:
    return (created_at + int(timezone_offset_hours * _HOUR_MS)) // _DAY_MS


def can_merge(
    previous: SimplifiedMessage | None,
    new: SimplifiedMessage,
    *,
    previous_is_debug: bool,
    new_is_debug: bool,
    time_awareness_enabled: bool,
    timezone_offset_hours: float,
) -> bool:
    """BC4-01: same author id and name, same debug kind, both with text, neither with media, and
    (with time awareness) the same local calendar day."""
    if previous is None:
        return False
    if previous.author_id != new.author_id or previous.author_name != new.author_name:
        return False
    if previous_is_debug != new_is_debug:
        return False
    if not new.content or not previous.content:
        return False
    if previous.has_media or new.has_media:
        return False
    if time_awareness_enabled and previous.created_at is not None and new.created_at is not None:
        return local_day(previous.created_at, timezone_offset_hours) == local_day(new.created_at, timezone_offset_hours)
    return True


def merge_into(previous: SimplifiedMessage, new: SimplifiedMessage) -> None:
    """BC4-02: promote on first merge, then append id, text and time; the entry keeps its first id."""
    previous.combined_message_ids = [*(previous.combined_message_ids or [previous.id]), new.id]
    previous.individual_contents = [*(previous.individual_contents or [previous.content or ""]), new.content or ""]
    previous.combined_created_ats = [
        *(previous.combined_created_ats or [previous.created_at or 0]),
        new.created_at or 0,
    ]
    previous.content = f"{previous.content}\n{new.content}"


@dataclass
class HistoryMerger:
    """The merge-or-append loop state of §4: the entries so far and whether the last was debug."""

    time_awareness_enabled: bool = True
    timezone_offset_hours: float = 0.0
    entries: list[SimplifiedMessage] = field(default_factory=list)
    previous_is_debug: bool = False

    def add(self, entry: SimplifiedMessage, is_debug: bool) -> bool:
        """Merge into the previous entry or append; True when merged."""
        previous = self.entries[-1] if self.entries else None
        if previous is not None and can_merge(
            previous,
            entry,
            previous_is_debug=self.previous_is_debug,
            new_is_debug=is_debug,
            time_awareness_enabled=self.time_awareness_enabled,
            timezone_offset_hours=self.timezone_offset_hours,
        ):
            merge_into(previous, entry)
            return True
        self.entries.append(entry)
        self.previous_is_debug = is_debug
        return False

    def add_notice(self, entry: SimplifiedMessage) -> None:
        """Block notices are appended, never merged, and reset the debug flag (BC2-10, BC4-03)."""
        self.entries.append(entry)
        self.previous_is_debug = False
