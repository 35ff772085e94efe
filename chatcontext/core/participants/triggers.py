"""Persona trigger matcher (participants.md D-12) and the boundary helpers discovery shares.

This is the routing matcher in non-deliberate mode; discovery uses it even when Deliberate Trigger
Mode is on (D-11), and the bot's admission may use it for routing. "Word character" follows §0:
Unicode categories L*, N*, M* or `_`, which Python's ``re`` cannot express, hence ``regex``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import lru_cache

import regex

from chatcontext.core.participants.aliases import strip_quotes
from chatcontext.core.types import PersonaInfo

WORD_CLASS = r"[\p{L}\p{N}\p{M}_]"
_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")
_MENTION_TRIGGER = regex.compile(r"<@!?([0-9]+)>")
_ASCII_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")

Matcher = Callable[[str], bool]


def _never(_text: str) -> bool:
    return False


@lru_cache(maxsize=1024)
def compile_trigger(trigger: str) -> Matcher:
    """D-12: a predicate telling whether ``trigger`` fires on a text.

    - `<@id>` / `<@!id>` triggers match a real mention of that id (either form);
    - triggers containing Han/Hiragana/Katakana/Hangul match as a case-sensitive substring;
    - anything else matches "screaming" spellings (each ASCII letter repeatable) case-insensitively,
      neither preceded nor followed by a word character (`lilya` fires on `LIIILYAAA!`, not `lilyanne`).
    """
    cleaned = strip_quotes(trigger)
    if not cleaned:
        return _never
    if cleaned.startswith("<@"):
        mention = _MENTION_TRIGGER.fullmatch(cleaned)
        if mention is None:
            return _never
        pattern = regex.compile(rf"<@!?{mention.group(1)}>")
        return lambda text: pattern.search(text) is not None
    if _CJK.search(cleaned):
        return lambda text: cleaned in text
    body = "".join(f"{regex.escape(ch)}+" if ch in _ASCII_LETTERS else regex.escape(ch) for ch in cleaned)
    screaming = regex.compile(rf"(?<!{WORD_CLASS}){body}(?!{WORD_CLASS})", regex.IGNORECASE)
    return lambda text: screaming.search(text) is not None


def trigger_matches(trigger: str, text: str) -> bool:
    """D-12 for one trigger and one text."""
    return compile_trigger(trigger)(text)


def persona_triggered(persona: PersonaInfo, text: str) -> bool:
    """D-11: any of the persona's raw trigger words fires on ``text``."""
    return any(trigger_matches(str(trigger), text) for trigger in persona.trigger_words)


def triggered_personas(personas: Iterable[PersonaInfo], text: str) -> list[PersonaInfo]:
    """The personas (catalog order kept) with a trigger firing on ``text``."""
    return [persona for persona in personas if persona_triggered(persona, text)]
