"""Typed reads from a hostile JSON object: a value of the wrong type counts as absent, never as an error
or a crash, so a card with one odd field still imports (the values a persona needs are checked by
the callers)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def text(obj: Mapping[str, Any], key: str) -> str:
    value = obj.get(key)
    return value if isinstance(value, str) else ""


def texts(obj: Mapping[str, Any], key: str) -> tuple[str, ...]:
    value = obj.get(key)
    if isinstance(value, str):  # SillyTavern's exports sometimes write keys as one comma-separated string
        value = value.split(",")
    if not isinstance(value, list):
        return ()
    return tuple(s.strip() for s in value if isinstance(s, str) and s.strip())


_INT32 = 2**31


def integer(obj: Mapping[str, Any], key: str, default: int | None) -> int | None:
    """A whole number that fits a database integer, else the default."""
    value = obj.get(key)
    if isinstance(value, bool) or not isinstance(value, int | float) or not -_INT32 <= value < _INT32:
        return default
    return int(value)


def natural(obj: Mapping[str, Any], key: str, default: int) -> int:
    """A whole number ≥ 0 that fits a database integer, else the default."""
    value = integer(obj, key, default)
    return value if value is not None and value >= 0 else default


def optional_natural(obj: Mapping[str, Any], key: str) -> int | None:
    value = integer(obj, key, None)
    return value if value is not None and value >= 0 else None


def flag(obj: Mapping[str, Any], key: str) -> bool | None:
    value = obj.get(key)
    return value if isinstance(value, bool) else None


def mapping(obj: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = obj.get(key)
    return dict(value) if isinstance(value, dict) else {}
