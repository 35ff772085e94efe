"""Clock and reminder formatting of the participant contributor (participants.md R-11, R-12, R-13).

Pure functions: the instant is always an argument (milliseconds since the epoch), never read here.
Offsets are hours east of UTC and may be fractional (server settings allow 5.5).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

_MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
_WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")


def local_datetime(instant_ms: int, offset_hours: float) -> datetime:
    """The wall-clock time at ``offset_hours`` (a naive datetime: the offset is already applied)."""
    utc = datetime.fromtimestamp(instant_ms / 1000, tz=UTC)
    return (utc + timedelta(hours=float(offset_hours))).replace(tzinfo=None)


def _offset_number(offset_hours: float) -> str:
    value = float(offset_hours)
    if value.is_integer():
        return str(int(value))
    return f"{value:.2f}".rstrip("0").rstrip(".")


def utc_label(offset_hours: float) -> str:
    """R-11: `UTC+9`, `UTC-5`, `UTC+0` (fractional offsets keep their decimals: `UTC+5.5`)."""
    number = _offset_number(offset_hours)
    return f"UTC{number}" if number.startswith("-") else f"UTC+{number}"


def _hour12(hour: int) -> tuple[int, str]:
    return (hour % 12 or 12), ("AM" if hour < 12 else "PM")


def format_clock(instant_ms: int, offset_hours: float) -> str:
    """R-11: `May 21, 2026 | 6:30 PM | Thursday` (12-hour clock, hour unpadded)."""
    local = local_datetime(instant_ms, offset_hours)
    hour, meridiem = _hour12(local.hour)
    return (
        f"{_MONTHS[local.month - 1]} {local.day}, {local.year} | {hour}:{local.minute:02d} {meridiem} "
        f"| {_WEEKDAYS[local.weekday()]}"
    )


def time_of_day_phrase(instant_ms: int, offset_hours: float) -> str:
    """R-11: the phrase for the local hour at the server offset."""
    hour = local_datetime(instant_ms, offset_hours).hour
    if hour <= 3:
        return "It's very late at night"
    if hour <= 6:
        return "It's early in the morning"
    if hour <= 11:
        return "It's morning"
    if hour == 12:
        return "It's around midday"
    if hour <= 16:
        return "It's afternoon"
    if hour <= 19:
        return "It's evening"
    return "It's late at night"


def format_schedule_time(instant_ms: int, offset_hours: float) -> str:
    """R-13: `Thu, May 21, 2026, 06:00 PM` (two-digit 12-hour clock, plain spaces)."""
    local = local_datetime(instant_ms, offset_hours)
    hour, meridiem = _hour12(local.hour)
    return (
        f"{_WEEKDAYS[local.weekday()][:3]}, {_MONTHS[local.month - 1][:3]} {local.day}, {local.year}, "
        f"{hour:02d}:{local.minute:02d} {meridiem}"
    )


def format_reminder(
    *,
    reminder_id: int | None,
    purpose: str,
    reminder_time_ms: int,
    repetition_interval_hours: int | None,
    server_offset_hours: float,
) -> str:
    """R-13: `ID:7 "Take meds" (scheduled for Thu, May 21, 2026, 06:00 PM (UTC+9), repeats every 24 hour(s))`.

    The time is shown at the *server* offset, never the user's.
    """
    prefix = f"ID:{reminder_id} " if reminder_id is not None else ""
    repeat = (
        f", repeats every {repetition_interval_hours} hour(s)"
        if repetition_interval_hours is not None and repetition_interval_hours >= 1
        else ""
    )
    when = format_schedule_time(reminder_time_ms, server_offset_hours)
    return f'{prefix}"{purpose}" (scheduled for {when} ({utc_label(server_offset_hours)}){repeat})'
