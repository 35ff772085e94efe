"""Custom emojis in the reply (issue 30 item 8): ``:name:`` becomes the server's emoji markup
(``<:name:id>``, ``<a:name:id>`` when animated) when it names one of the emojis the turn offered the
persona (``ChatTurnContext.loaded_emojis``: none in DMs, role-play channels or with emoji usage off,
build-context.md BC7-08). Unknown names, and markup the model already wrote, stay as they are."""

from __future__ import annotations

import re
from collections.abc import Sequence

from chatcontext.core.types import EmojiRow

# Not inside markup already written (``<:name:id>``, ``<a:name:id>``) and not a digit run (``12:30:45``).
_SHORTCODE = re.compile(r"(?<![<\w]):(\w{2,32}):(?!\d)")


def render_custom_emojis(text: str, emojis: Sequence[EmojiRow] | None) -> str:
    if not emojis:
        return text
    # Discord emoji names are case-sensitive; the first row of a name wins, as in the offered list.
    markup: dict[str, str] = {}
    for e in emojis:
        markup.setdefault(e.emoji_name, f"<{'a' if e.is_animated else ''}:{e.emoji_name}:{e.emoji_disc_id}>")
    return _SHORTCODE.sub(lambda match: markup.get(match.group(1), match.group(0)), text)
