"""Presence text of a participant (participants.md H-12).

Pure: the member snapshot and the instant are inputs. Durations make this text clock-dependent,
which is why it is rendered only in the tail presence block, never in the profile (R-03).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chatcontext.core.types import Activity, MemberInfo

STATUS_WORDS = {
    "online": "Online",
    "idle": "Away/Idle",
    "dnd": "Do Not Disturb",
    "offline": "Offline",
    "invisible": "Invisible",
}
DM_PRESENCE = "Online (Direct Message)"
UNKNOWN_GUILD_PRESENCE = "Status unknown"
MISSING_PRESENCE = "Offline or status unknown"

_UNITS = (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1))


def format_duration(elapsed_ms: int) -> str:
    """`2 hours, 5 minutes`: zero components omitted, singular for 1, seconds only under one hour.

    Empty when nothing is left to show (an activity that started this very second).
    """
    remaining = max(0, int(elapsed_ms)) // 1000
    show_seconds = remaining < 3_600
    parts: list[str] = []
    for unit, size in _UNITS:
        value, remaining = divmod(remaining, size)
        if unit == "second" and not show_seconds:
            continue
        if value:
            parts.append(f"{value} {unit}{'' if value == 1 else 's'}")
    return ", ".join(parts)


def _is_spotify(activity: Activity) -> bool:
    return activity.type == "listening" and activity.name == "Spotify"


def _asset_texts(activity: Activity) -> list[str]:
    return [t for t in (activity.large_image_text, activity.small_image_text) if t]


def _base_text(activity: Activity) -> str:
    kind = activity.type
    if kind == "playing":
        return "".join([f"Playing {activity.name}", *(f": {v}" for v in (activity.details, activity.state) if v)])
    if kind == "streaming":
        return f"Streaming {activity.name}"
    if kind == "listening":
        if _is_spotify(activity):
            return f"Listening to {activity.details} by {activity.state} on Spotify"
        if activity.state and activity.details:
            return f"Listening to {activity.state} - {activity.details} on {activity.name}"
        return f"Listening to {activity.name}"
    if kind == "watching":
        return f"Watching {activity.name}"
    if kind == "competing":
        return f"Competing in {activity.name}"
    if kind == "custom":
        values: list[str] = []
        for value in (activity.emoji_name, activity.state, activity.details, *_asset_texts(activity)):
            if value and value not in values:
                values.append(value)
        return "Custom status: " + ": ".join(values) if values else "Custom status"
    return activity.name


def describe_activity(activity: Activity, now_ms: int) -> str:
    """One activity of H-12, with asset texts and the elapsed time where the rule asks for them."""
    text = _base_text(activity)
    if activity.type != "custom" and not _is_spotify(activity):
        extra = [t for t in _asset_texts(activity) if t not in text]
        if extra:
            text += f" [{' / '.join(extra)}]"
    timed = activity.type in {"playing", "streaming", "listening", "watching", "competing"}
    if timed and activity.started_at_ms is not None:
        end = activity.ended_at_ms if activity.ended_at_ms is not None else now_ms
        duration = format_duration(end - activity.started_at_ms)
        if duration:
            text += f" for {duration}"
    return text


def presence_text(status: str, activities: Sequence[Activity], now_ms: int) -> str:
    """`Online - Playing Chess: Rated for 2 hours, 5 minutes`."""
    word = STATUS_WORDS.get(status.lower(), status.capitalize())
    described = [describe_activity(a, now_ms) for a in activities]
    return f"{word} - {', '.join(described)}" if described else word


@dataclass(frozen=True)
class PresenceOutcome:
    """The status text, or None with the hidden reason (``missing_data`` without presence intent)."""

    text: str | None
    reason: str = "visible"


def member_presence(
    member: MemberInfo | None,
    *,
    is_dm: bool,
    guild_available: bool,
    presence_intent: bool,
    now_ms: int,
) -> PresenceOutcome:
    """H-12 decision ladder: DM, unknown guild, no presence intent, missing member/presence, text."""
    if is_dm:
        return PresenceOutcome(DM_PRESENCE)
    if not guild_available:
        return PresenceOutcome(UNKNOWN_GUILD_PRESENCE)
    if not presence_intent:
        return PresenceOutcome(None, "missing_data")
    if member is None or not member.presence_status:
        return PresenceOutcome(MISSING_PRESENCE)
    return PresenceOutcome(presence_text(member.presence_status, member.activities, now_ms))
