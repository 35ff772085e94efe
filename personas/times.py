"""The one way a time is shown to people: the console's date-time format, always with its zone."""

from __future__ import annotations

from datetime import UTC, datetime

from django.utils import formats, timezone


def shown(value: datetime | str | None) -> str:
    """A datetime, or the ISO 8601 text exports carry, in the console's format (botplatform/formats);
    "–" for none. A naive time is taken as UTC."""
    if value is None or value == "":
        return "–"
    when = datetime.fromisoformat(value) if isinstance(value, str) else value
    if timezone.is_naive(when):
        when = when.replace(tzinfo=UTC)
    return formats.date_format(timezone.localtime(when), "DATETIME_FORMAT")


def iso(value: datetime | None) -> str | None:
    """A time for machines (exports): ISO 8601 to the second, with its offset."""
    return value.isoformat(timespec="seconds") if value is not None else None
