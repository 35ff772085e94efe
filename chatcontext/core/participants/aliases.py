"""Alias catalogues, purpose views and collision indexes (participants.md D-04..D-09).

Pure functions over ``ParticipantAlias`` values. Every consumer (discovery, hydration, the
renderer's handle selection, the target index and the tool resolver) goes through these builders so
that priorities, purposes and exposure stay identical everywhere.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from chatcontext.core.participants.model import (
    ParticipantAlias,
    ParticipantKey,
    Purpose,
    make_alias,
    normalize_alias,
)
from chatcontext.core.types import PersonaInfo

# D-06: the purpose sets of the table, named once.
_IDENTITY_PURPOSES: frozenset[Purpose] = frozenset({"output_mention", "tool_target", "copied_identity"})
_NAME_PURPOSES: frozenset[Purpose] = frozenset({"input_reference", "output_mention", "tool_target", "copied_identity"})
_INPUT_ONLY: frozenset[Purpose] = frozenset({"input_reference"})
_PERSONA_TRIGGER_PURPOSES: frozenset[Purpose] = frozenset({"output_mention", "persona_trigger"})
_BRIDGE_PURPOSES: frozenset[Purpose] = frozenset({"output_mention", "tool_target"})
# "Output purpose" of the discord_id_fallback condition: anything that offers the alias outward.
OUTPUT_PURPOSES: frozenset[Purpose] = _IDENTITY_PURPOSES

# D-07: surrounding quote pairs stripped from triggers and persona nicknames.
_QUOTE_PAIRS: dict[str, str] = {
    '"': '"',
    "'": "'",
    "`": "`",
    "“": "”",
    "‘": "’",
    "「": "」",
    "『": "』",
    "｢": "｣",
    "«": "»",
    "‹": "›",
}


def strip_quotes(text: str) -> str:
    """D-07: strip matching surrounding quote pairs repeatedly, trimming between rounds."""
    current = text.strip()
    while len(current) >= 2 and _QUOTE_PAIRS.get(current[0]) == current[-1]:
        current = current[1:-1].strip()
    return current


def clean_triggers(triggers: Iterable[str]) -> list[str]:
    """D-07: quote-strip, trim, drop empties and mention triggers (`<@…`), de-duplicate
    case-insensitively keeping the first spelling."""
    seen: set[str] = set()
    cleaned: list[str] = []
    for raw in triggers:
        trigger = strip_quotes(str(raw))
        if not trigger or trigger.startswith("<@"):
            continue
        folded = trigger.lower()
        if folded in seen:
            continue
        seen.add(folded)
        cleaned.append(trigger)
    return cleaned


def canonical_trigger(nickname: str | None, triggers: Iterable[str]) -> str | None:
    """D-07: the first cleaned trigger normalizing like the nickname, else the first trigger,
    else the (quote-stripped) nickname, else None."""
    cleaned = clean_triggers(triggers)
    name = strip_quotes(nickname or "")
    wanted = normalize_alias(name)
    if wanted:
        for trigger in cleaned:
            if normalize_alias(trigger) == wanted:
                return trigger
    if cleaned:
        return cleaned[0]
    return name or None


def _collect(candidates: Iterable[ParticipantAlias | None]) -> list[ParticipantAlias]:
    return [alias for alias in candidates if alias is not None]


@dataclass(frozen=True)
class UserNames:
    """The names one Discord user goes by, D-06's sources: the platform's saved nickname, the guild's
    display name and nickname, Discord's global name and username, and the id as the last resort."""

    saved_nickname: str | None = None
    guild_display_name: str | None = None
    guild_nickname: str | None = None
    global_name: str | None = None
    username: str | None = None
    discord_id: str | None = None


def user_aliases(
    key: ParticipantKey,
    names: UserNames,
    *,
    expose_saved_nickname: bool = False,
    impersonated_identity: str | None = None,
    effective_nickname: str | None = None,
    formatted_name: str | None = None,
) -> list[ParticipantAlias]:
    """D-06 alias catalogue of one Discord user, in table (priority) order.

    Pass ``impersonated_identity`` only when the user is the impersonated user of this turn, and
    ``effective_nickname`` / ``formatted_name`` only when persona-relative naming ran (H-09).
    ``expose_saved_nickname`` is the P-02 decision: a hidden saved nickname stays a lookup-only
    ``input_reference`` alias. ``discord_id_fallback`` is added only when no alias built *in this
    call* has an output purpose.
    """
    return list(
        _user_aliases(key, names, expose_saved_nickname, impersonated_identity, effective_nickname, formatted_name)
    )


# Cached (the arguments are immutable values): discovery and hydration build the catalogues of the
# same members on every turn, and at 200 participants that was a tenth of discovery (issue 9).
@functools.lru_cache(maxsize=8192)
def _user_aliases(
    key: ParticipantKey,
    names: UserNames,
    expose_saved_nickname: bool,
    impersonated_identity: str | None,
    effective_nickname: str | None,
    formatted_name: str | None,
) -> tuple[ParticipantAlias, ...]:
    saved_purposes = _NAME_PURPOSES if expose_saved_nickname else _INPUT_ONLY
    aliases = _collect(
        [
            make_alias(key, impersonated_identity, "impersonated_identity", _IDENTITY_PURPOSES, "visible", 0),
            make_alias(key, effective_nickname, "effective_nickname", _NAME_PURPOSES, "visible", 8),
            make_alias(key, formatted_name, "formatted_name", _NAME_PURPOSES, "visible", 9),
            make_alias(
                key,
                names.saved_nickname,
                "saved_nickname",
                saved_purposes,
                "visible" if expose_saved_nickname else "lookup_only",
                10,
            ),
            make_alias(key, names.guild_display_name, "guild_display_name", _INPUT_ONLY, "lookup_only", 15),
            make_alias(key, names.guild_nickname, "guild_nickname", _NAME_PURPOSES, "visible", 20),
            make_alias(key, names.global_name, "global_name", _NAME_PURPOSES, "visible", 30),
            make_alias(key, names.username, "username", _NAME_PURPOSES, "visible", 40),
        ]
    )
    if not any(alias.purposes & OUTPUT_PURPOSES for alias in aliases):
        aliases.extend(
            _collect([make_alias(key, names.discord_id, "discord_id_fallback", _IDENTITY_PURPOSES, "visible", 50)])
        )
    return tuple(aliases)


def persona_nickname_alias(persona: PersonaInfo) -> ParticipantAlias | None:
    """D-06 `persona_nickname`: the quote-stripped nickname, canonical value = canonical trigger."""
    if persona.persona_id is None:
        return None
    return make_alias(
        ParticipantKey.persona(persona.persona_id),
        strip_quotes(persona.persona_nickname or ""),
        "persona_nickname",
        _IDENTITY_PURPOSES,
        "visible",
        10,
        canonical_trigger(persona.persona_nickname, persona.trigger_words),
    )


def persona_aliases(persona: PersonaInfo) -> list[ParticipantAlias]:
    """D-06/D-07 full persona catalogue: nickname alias, then one alias per cleaned trigger
    (priority 20+i, canonical value = the trigger). A persona without an id has no key, so none."""
    if persona.persona_id is None:
        return []
    key = ParticipantKey.persona(persona.persona_id)
    triggers = [
        make_alias(key, trigger, "persona_trigger", _PERSONA_TRIGGER_PURPOSES, "visible", 20 + index, trigger)
        for index, trigger in enumerate(clean_triggers(persona.trigger_words))
    ]
    return _collect([persona_nickname_alias(persona), *triggers])


def bridge_alias(matrix_id: str, display_name: str | None) -> list[ParticipantAlias]:
    """D-06/D-30 `bridge_display_name` of a Matrix user (lookup-only, output/tool purposes)."""
    return _collect(
        [
            make_alias(
                ParticipantKey.matrix_user(matrix_id),
                display_name,
                "bridge_display_name",
                _BRIDGE_PURPOSES,
                "lookup_only",
                10,
            )
        ]
    )


def webhook_alias(webhook_id: str, display_name: str | None) -> list[ParticipantAlias]:
    """D-06/D-28 `webhook_display_name` of a synthetic webhook: no purposes, lookup-only."""
    return _collect(
        [
            make_alias(
                ParticipantKey.webhook(webhook_id), display_name, "webhook_display_name", frozenset(), "lookup_only", 10
            )
        ]
    )


_priority = operator.attrgetter("priority")


def aliases_for_purpose(aliases: Iterable[ParticipantAlias], purpose: Purpose) -> list[ParticipantAlias]:
    """D-08: stable-sort by priority, keep aliases having ``purpose``, drop later duplicates of the
    same ``(owner, normalized)`` pair."""
    seen: set[tuple[str, str, str]] = set()
    kept: list[ParticipantAlias] = []
    # Filtering before the (stable) sort keeps the same order and sorts fewer aliases.
    for alias in sorted((a for a in aliases if purpose in a.purposes), key=_priority):
        # The owner's fields rather than the key itself: hashing strings skips a Python-level
        # dataclass __hash__ per alias (a turn runs this view a few hundred times).
        pair = (alias.owner.kind, alias.owner.id, alias.normalized)
        if pair in seen:
            continue
        seen.add(pair)
        kept.append(alias)
    return kept


def collision_index(aliases: Iterable[ParticipantAlias], purpose: Purpose) -> dict[str, list[ParticipantKey]]:
    """D-09: normalized value → distinct owners (first-claim order) over ``aliases_for_purpose``.
    Exposure is deliberately ignored: lookup-only aliases still claim their value."""
    index: dict[str, list[ParticipantKey]] = {}
    for alias in aliases_for_purpose(aliases, purpose):
        owners = index.setdefault(alias.normalized, [])
        if alias.owner not in owners:
            owners.append(alias.owner)
    return index


def is_unique(alias: ParticipantAlias, index: dict[str, list[ParticipantKey]]) -> bool:
    """D-09: exactly one owner claims the alias's normalized value."""
    return len(index.get(alias.normalized, ())) == 1


def unique_aliases(aliases: Sequence[ParticipantAlias], purpose: Purpose) -> list[ParticipantAlias]:
    """The D-08 view of ``purpose`` restricted to D-09-unique aliases (collision-filtered)."""
    index = collision_index(aliases, purpose)
    return [alias for alias in aliases_for_purpose(aliases, purpose) if is_unique(alias, index)]
