"""What a Discord id is, once for the models (hence the admin forms) and the API schemas.

A snowflake is a 64-bit integer written in ASCII digits. ``str.isdigit`` and the regex ``\\d`` also
accept every other script's digits (``"١٢"``), which Discord never sends and which would be stored
as an id nobody can match.
"""

from __future__ import annotations

import re

from django.core.exceptions import ValidationError

DISCORD_ID_DIGITS = "[0-9]{1,20}"
# Anchored for JSON Schema and pydantic (whose `$` is the end of the text, not before a final newline).
DISCORD_ID_PATTERN = f"^{DISCORD_ID_DIGITS}$"
DISCORD_ID_MESSAGE = "A Discord id is 1 to 20 ASCII digits."

_DISCORD_ID = re.compile(DISCORD_ID_DIGITS)


def is_discord_id(value: object) -> bool:
    return isinstance(value, str) and _DISCORD_ID.fullmatch(value) is not None


def validate_discord_id(value: object) -> None:
    if not is_discord_id(value):
        raise ValidationError(DISCORD_ID_MESSAGE, code="discord_id")


def validate_discord_id_list(value: object) -> None:
    """A JSON list of Discord ids (a server's RP and private channels)."""
    if not isinstance(value, list) or not all(is_discord_id(item) for item in value):
        raise ValidationError("A list of Discord ids, each 1 to 20 ASCII digits.", code="discord_id_list")
