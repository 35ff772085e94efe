"""How the responding persona names the triggerer (build-context.md §1.1 `triggerer_name`,
`triggerer_formatted_name`, `triggerer_address_term`; participants.md H-08, H-09, P-02).

The same persona-relative naming the profile and the history use, so `{user}`, `{user_formatted}`
and `{user_term}` (R-14) agree with what the rest of the prompt calls that person.
"""

from __future__ import annotations

from chatcontext.core.participants.naming import (
    live_name,
    persona_relative_name,
    saved_name_allowed,
)
from chatcontext.core.types import Author, MemberInfo, PersonaInfo, ServerConfig, TriggererName, UserRow
from personas.values.naming import ADDRESSING_STYLES


def address_term(persona: PersonaInfo, row: UserRow | None) -> str | None:
    """The persona's address term for the user's addressing style, falling back to `neutral`."""
    if row is None:
        return None
    style = row.addressing_style if row.addressing_style in ADDRESSING_STYLES else "neutral"
    for key in (style, "neutral"):
        value = persona.naming_address_terms.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return None


def triggerer_naming(
    server: ServerConfig,
    persona: PersonaInfo,
    row: UserRow | None,
    member: MemberInfo | None,
    author: Author,
    *,
    blacklisted: bool,
) -> TriggererName:
    """Saved names, persona affixes and the address term only where P-02 allows them; otherwise
    the live name (member display name, global name, username)."""
    personalized = row is not None and saved_name_allowed(
        personalization_enabled=server.personal_memories_enabled,
        blacklisted=blacklisted,
        privacy_level=row.privacy_level,
    )
    live = live_name(member, author, author.id)
    name = persona_relative_name(row=row, live=live, persona=persona, preference=None, personalized=personalized)
    return TriggererName(
        nickname=name.nickname,
        formatted=name.formatted,
        address_term=address_term(persona, row) if personalized else None,
    )
