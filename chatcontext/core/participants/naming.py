"""Persona-relative naming of users (participants.md H-08, H-09, P-02; build-context.md BC7-07).

Pure functions: rows, members, naming preferences and the persona come in; names come out. The same
functions name a user in the participant profile, in the naming field and in the history naming
projection, so a user is called the same everywhere in one turn.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import regex

from chatcontext.core.types import Author, MemberInfo, PersonaInfo, PrivacyLevel, UserRow
from personas.values.naming import ADDRESSING_STYLES

_CJK = regex.compile(r"[\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}]")
# H-09: punctuation after which a prefix still keeps its separating space.
_SPACED_PUNCTUATION = frozenset(".,;:!?")


@dataclass(frozen=True)
class NamingPreference:
    """`user_persona_naming_preferences` row (data-model.md §2.10); `''` deliberately suppresses."""

    user_id: int
    persona_lineage_id: int
    nickname_override: str | None = None
    prefix_override: str | None = None
    suffix_override: str | None = None


@dataclass(frozen=True)
class PersonaRelativeName:
    """H-09 result: the nickname, the resolved affixes and the joined ``formatted`` name."""

    nickname: str
    prefix: str
    suffix: str
    formatted: str


def saved_name_allowed(*, personalization_enabled: bool, blacklisted: bool, privacy_level: int) -> bool:
    """P-02: saved nickname, overrides and affixes need personalization, no blacklist and privacy ≠ FULL.

    [SEED] adds the FULL condition to the reference's personalization-and-blacklist check.
    """
    return personalization_enabled and not blacklisted and privacy_level != PrivacyLevel.FULL


def _text(value: str | None) -> str | None:
    trimmed = (value or "").strip()
    return trimmed or None


def live_name(member: MemberInfo | None, fallback_user: Author | None, discord_id: str) -> str:
    """H-09 live name: member display ?? global ?? username; without a member the plain user's
    global name ?? username ?? the snowflake ([DES]: the reference uses the snowflake directly)."""
    if member is not None:
        name = _text(member.display_name) or _text(member.global_name) or _text(member.username)
        if name:
            return name
    if fallback_user is not None:
        name = _text(fallback_user.global_name) or _text(fallback_user.username)
        if name:
            return name
    return discord_id


def _is_symbolic(char: str) -> bool:
    return unicodedata.category(char)[0] in {"P", "S"} or bool(_CJK.match(char))


def format_name(prefix: str, nickname: str, suffix: str) -> str:
    """H-09 joining of prefix, nickname and suffix.

    A prefix ending in punctuation/symbol or a CJK/kana/Hangul character attaches without a space,
    except `. , ; : ! ?` and a trailing whitespace, which keep it; a suffix starting with
    punctuation/symbol or CJK attaches directly unless it starts with whitespace. An entirely
    lower-case leading token gets its first character upper-cased.
    """
    result = nickname
    trimmed_prefix = prefix.strip()
    if trimmed_prefix:
        last = trimmed_prefix[-1]
        attach = _is_symbolic(last) and last not in _SPACED_PUNCTUATION and not prefix[-1].isspace()
        result = f"{trimmed_prefix}{'' if attach else ' '}{nickname}"
    trimmed_suffix = suffix.strip()
    if trimmed_suffix:
        attach = _is_symbolic(trimmed_suffix[0]) and not suffix[0].isspace()
        result = f"{result}{'' if attach else ' '}{trimmed_suffix}"
    leading = trimmed_prefix or nickname
    if leading.islower():
        result = result[:1].upper() + result[1:]
    return result


def _persona_affix(config: Mapping[str, object], style: str | None) -> str | None:
    """The persona's naming value for the user's addressing style, falling back to `neutral`."""
    wanted = style if style in ADDRESSING_STYLES else "neutral"
    for key in (wanted, "neutral"):
        if key in config and config[key] is not None:
            return str(config[key])
    return None


def _resolve_affix(lineage_value: str | None, user_value: str | None, persona_value: str | None) -> str:
    # Presence, not truthiness: '' is a deliberate suppression at each level (H-09).
    for value in (lineage_value, user_value, persona_value):
        if value is not None:
            return value
    return ""


def persona_relative_name(
    *,
    row: UserRow | None,
    live: str,
    persona: PersonaInfo | None,
    preference: NamingPreference | None,
    personalized: bool,
) -> PersonaRelativeName:
    """H-09: nickname and affixes of a user as the active persona calls them.

    Without ``personalized`` (P-02) no override, saved nickname or persona affix applies: the user
    is called by the live name.
    """
    if not personalized or row is None:
        return PersonaRelativeName(live, "", "", format_name("", live, ""))
    nickname = _text(preference.nickname_override if preference else None) or _text(row.user_nickname) or live
    prefix = _resolve_affix(
        preference.prefix_override if preference else None,
        row.prefix_override,
        _persona_affix(persona.naming_prefixes, row.addressing_style) if persona else None,
    )
    suffix = _resolve_affix(
        preference.suffix_override if preference else None,
        row.suffix_override,
        _persona_affix(persona.naming_suffixes, row.addressing_style) if persona else None,
    )
    return PersonaRelativeName(nickname, prefix.strip(), suffix.strip(), format_name(prefix, nickname, suffix))


def naming_line(bot_name: str, name: PersonaRelativeName) -> str | None:
    """H-11 `naming` field: `- Tomori calls Ally "Master Ally" (prefix "Master")`, only with an affix."""
    affixes = [f'{label} "{value}"' for label, value in (("prefix", name.prefix), ("suffix", name.suffix)) if value]
    if not affixes:
        return None
    return f'- {bot_name} calls {name.nickname} "{name.formatted}" ({", ".join(affixes)})'


def base_display_name(
    *,
    discord_id: str,
    row: UserRow | None,
    member: MemberInfo | None,
    fallback_user: Author | None,
    saved_name_use: bool,
) -> str:
    """H-08 base display name (before H-09 replaces it on non-impersonation turns)."""
    if saved_name_use:
        return (
            _text(row.user_nickname if row else None)
            or _text(member.display_name if member else None)
            or _text(member.global_name if member else None)
            or _text(fallback_user.global_name if fallback_user else None)
            or _text(member.username if member else None)
            or _text(fallback_user.username if fallback_user else None)
            or discord_id
        )
    return _text(member.nickname if member else None) or f"<@{discord_id}>"


def primary_alias(member: MemberInfo | None, fallback_user: Author | None, discord_id: str) -> str:
    """H-08: server nickname ?? global name ?? username ?? id."""
    return (
        _text(member.nickname if member else None)
        or _text(member.global_name if member else None)
        or _text(fallback_user.global_name if fallback_user else None)
        or _text(member.username if member else None)
        or _text(fallback_user.username if fallback_user else None)
        or discord_id
    )


def history_user_labels(
    users: Iterable[UserRow],
    *,
    persona: PersonaInfo | None,
    personalization_enabled: bool,
    blacklisted: Iterable[str] = (),
    naming_preferences: Mapping[tuple[int, int], NamingPreference] | None = None,
    live_names: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """BC7-07 history naming projection: snowflake → the persona-relative label of each user.

    Users without saved-name use (personalization off, blacklisted, privacy FULL — P-02) get no
    label, so the history keeps its live name for them. ``naming_preferences`` is keyed by
    ``(user_id, lineage_id)`` of the persona's lineage (one batched read by the caller).
    """
    if persona is None:
        return {}
    blocked = set(blacklisted)
    preferences = naming_preferences or {}
    names = live_names or {}
    labels: dict[str, str] = {}
    for row in users:
        if not saved_name_allowed(
            personalization_enabled=personalization_enabled,
            blacklisted=row.user_disc_id in blocked,
            privacy_level=row.privacy_level,
        ):
            continue
        live = names.get(row.user_disc_id) or _text(row.global_name) or _text(row.username) or row.user_disc_id
        name = persona_relative_name(
            row=row,
            live=live,
            persona=persona,
            preference=preferences.get((row.user_id, persona.persona_lineage_id)),
            personalized=True,
        )
        labels[row.user_disc_id] = name.formatted
    return labels


def history_persona_mention_labels(
    users: Iterable[UserRow],
    *,
    personas: Iterable[PersonaInfo],
    personalization_enabled: bool,
    blacklisted: Iterable[str] = (),
    naming_preferences: Mapping[tuple[int, int], NamingPreference] | None = None,
    live_names: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """BC7-07: `"{lineage}:{user_id}"` → label, for mentions inside entries authored by each persona."""
    rows = list(users)
    labels: dict[str, str] = {}
    for persona in personas:
        per_persona = history_user_labels(
            rows,
            persona=persona,
            personalization_enabled=personalization_enabled,
            blacklisted=blacklisted,
            naming_preferences=naming_preferences,
            live_names=live_names,
        )
        for disc_id, label in per_persona.items():
            labels[f"{persona.persona_lineage_id}:{disc_id}"] = label
    return labels
