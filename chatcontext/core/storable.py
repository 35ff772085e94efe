"""Text from outside made storable where it enters (issue 26 item 4): a model's reply and tool calls,
the playground's forms.

PostgreSQL keeps no NUL in a text or JSON column, and an unpaired surrogate (`\\ud800`, which JSON
can escape) is no Unicode text: no database encodes it, nor does a Discord message. Either one used
to fail a write after the reply was already shown. ``storable_text`` drops NUL and replaces each
unpaired surrogate by U+FFFD; a surrogate pair that stands for one character becomes that character.
"""

from __future__ import annotations

import json
import re
from typing import Any

UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def storable_text(text: str) -> str:
    """``text`` without NUL and unpaired surrogates (module docstring); anything else unchanged."""
    if UNSTORABLE.search(text) is None:
        return text
    # UTF-16 joins a high and a low surrogate into their character and turns a lone one into U+FFFD.
    joined = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return joined.replace("\x00", "")


def storable_json(value: Any) -> Any:
    """A decoded JSON value with every string, keys included, made storable."""
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, list):
        return [storable_json(item) for item in value]
    if isinstance(value, dict):
        return {storable_text(key): storable_json(item) for key, item in value.items()}
    return value


def storable_json_text(raw: str) -> str:
    """JSON text whose decoded strings are storable too: an escaped `\\u0000` decodes to a NUL, so
    the escapes count as well as the characters. JSON that needs no change, or that does not parse
    (the tool layer reports that), keeps its own spelling apart from ``storable_text``."""
    text = storable_text(raw)
    if "\\u" not in text:
        return text
    try:
        value = json.loads(text)
        clean = storable_json(value)
    except (ValueError, RecursionError):  # a hostile model may nest deeper than Python's stack
        return text
    return text if clean == value else json.dumps(clean, ensure_ascii=False)
