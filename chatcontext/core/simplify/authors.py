"""Author resolution (BC3-06, BC3-10, BC3-11): who a message is from and what the LLM calls them.

Personas speak either as the bot user (the main persona) or through webhooks named after them,
optionally decorated (`Persona (sprite)`, render modifiers `User (Persona)`) and optionally behind a
bridge prefix (`[Matrix|@user:host] Name`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from chatcontext.core.participants.model import ParticipantKey
from chatcontext.core.simplify.base import SimplifyContext
from chatcontext.core.types import DiscordMessage, PersonaInfo

_BRIDGE = re.compile(r"^\[([^\]|]+)\|([^\]]+)\]\s*")
_RENDER_MODIFIER = re.compile(r"^(.+?)\s*\(([^()]+)\)$")
_WS = re.compile(r"\s+")


def strip_bridge_prefix(name: str) -> str:
    """`[Bridge|id] Name` → `Name`."""
    return _BRIDGE.sub("", name, count=1)


def bridge_user_id(name: str) -> str | None:
    match = _BRIDGE.match(name)
    return match.group(2).strip() if match else None


def normalize_name(name: str) -> str:
    """Trim, drop leading `@`, collapse spaces, lower-case (BC3-10 exact normalized-name match)."""
    return _WS.sub(" ", name.strip().lstrip("@").strip()).lower()


def find_persona(name: str, personas: tuple[PersonaInfo, ...]) -> PersonaInfo | None:
    wanted = normalize_name(name)
    if not wanted:
        return None
    return next((p for p in personas if normalize_name(p.persona_nickname) == wanted), None)


@dataclass(frozen=True)
class PersonaMatch:
    persona: PersonaInfo
    render_label: str | None  # `Persona (other)` when matched through a render modifier


def match_persona_name(webhook_name: str, personas: tuple[PersonaInfo, ...]) -> PersonaMatch | None:
    """BC3-10 / BC8-07: render-modifier form `A (B)` first (B a persona → `B (A)`, else A a persona →
    `A (B)`), then the exact normalized nickname."""
    name = strip_bridge_prefix(webhook_name).strip()
    modifier = _RENDER_MODIFIER.match(name)
    if modifier:
        outer, inner = modifier.group(1).strip(), modifier.group(2).strip()
        persona = find_persona(inner, personas)
        if persona is not None:
            return PersonaMatch(persona, f"{persona.persona_nickname} ({outer})")
        persona = find_persona(outer, personas)
        if persona is not None:
            return PersonaMatch(persona, f"{persona.persona_nickname} ({inner})")
    persona = find_persona(name, personas)
    return PersonaMatch(persona, None) if persona is not None else None


def match_persona_webhook(message: DiscordMessage, personas: tuple[PersonaInfo, ...]) -> PersonaMatch | None:
    if not message.webhook_id:
        return None
    return match_persona_name(message.author.username, personas)


def is_tomori_authored(message: DiscordMessage, bot_user_id: str, personas: tuple[PersonaInfo, ...]) -> bool:
    """Who may emit a system notice or history marker: the bot user or a persona webhook.

    Hardening of BC3-16/BC6-05/BC6-06 and BC2-04: the reference classifies CV2 containers from any
    author and markers from any embed; here a user's embed (e.g. a link preview whose page title is
    `🧹 Conversation History Cleared`) can neither slice history nor pose as a system notice.
    """
    return message.author.id == bot_user_id or match_persona_webhook(message, personas) is not None


def persona_label(match: PersonaMatch, message_id: str, ctx: SimplifyContext) -> str:
    """Render label, else the recorded sprite label `Nickname (sprite)`, else the nickname."""
    if match.render_label:
        return match.render_label
    sprite = ctx.sprite_labels.get(message_id)
    if sprite is not None and sprite[0] == match.persona.persona_id:
        return f"{match.persona.persona_nickname} ({sprite[1]})"
    return match.persona.persona_nickname


def bot_user_label(ctx: SimplifyContext) -> str:
    """The bot user's name in annotations and forward blocks.

    [QUIRK] BC3-06 (and BC3-14, which follows it) names the *responding* persona; the bot account
    speaks as the main persona (alters use webhooks), so we name the main persona, falling back to
    the responding persona, then `Bot`.
    """
    return ctx.identity_persona.persona_nickname.strip() or "Bot"


def webhook_label(username: str) -> str:
    """A non-persona webhook's name without its bridge prefix (which may hold a Matrix id)."""
    return strip_bridge_prefix(username).strip() or username.strip() or "User"


def human_label(message: DiscordMessage, ctx: SimplifyContext) -> str:
    """BC3-06/BC3-10: saved nickname (if personalization allows) → member display name → user display
    name → global name → username → `User`. (BC3-10 omits the user display name; Discord derives it
    from the global name or username, so the one order serves both rules.)"""
    author = message.author
    candidates = (
        ctx.saved_nickname(author.id),
        ctx.member_display_name(message),
        author.display_name,
        author.global_name,
        author.username,
    )
    return next((c.strip() for c in candidates if c and c.strip()), "User")


def annotation_label(message: DiscordMessage, ctx: SimplifyContext) -> str:
    """BC3-06: the name of a message's author inside a reply annotation.

    For a non-persona webhook the stripped webhook name comes first (BC3-06 lists it last): its
    `username` still carries the bridge prefix that must not reach the LLM.
    """
    if message.author.id == ctx.bot_user_id:
        return bot_user_label(ctx)
    match = match_persona_webhook(message, ctx.personas)
    if match is not None:
        return persona_label(match, message.id, ctx)
    if message.webhook_id:
        return webhook_label(message.author.username)
    return human_label(message, ctx)


@dataclass(frozen=True)
class AuthorIdentity:
    author_id: str
    author_name: str
    author_type: Literal["user", "persona"] = "user"
    persona_name: str | None = None
    persona_id: int | None = None
    persona_lineage_id: int | None = None
    # Side records of BC3-10 (participants.md U-4): id → {display_name, type}, matrix id → name.
    synthetic_user: tuple[str, dict[str, str]] | None = None
    matrix_user: tuple[str, str] | None = None

    @property
    def is_persona(self) -> bool:
        return self.author_type == "persona"

    @property
    def participant_id(self) -> str:
        """The id this author takes part under (participants.md U-4/U-5): a persona webhook's typed
        synthetic key, everyone else's author id."""
        if self.synthetic_user is not None and self.synthetic_user[1].get("type") == "persona":
            return self.synthetic_user[0]
        return self.author_id


def resolve_author(message: DiscordMessage, ctx: SimplifyContext, *, is_debug: bool) -> AuthorIdentity:
    """BC3-10: bot user or honoured debug message → the main persona; persona webhook → that persona;
    other webhooks → webhook / impersonated user / Matrix user; humans → their best name."""
    author = message.author
    if author.id == ctx.bot_user_id or is_debug:
        persona = ctx.identity_persona
        return AuthorIdentity(
            author_id=author.id,
            author_name=persona.persona_nickname,
            author_type="persona",
            persona_name=persona.persona_nickname,
            persona_id=persona.persona_id,
            persona_lineage_id=persona.persona_lineage_id,
        )
    if message.webhook_id:
        return _resolve_webhook(message, message.webhook_id, ctx)
    return AuthorIdentity(author_id=author.id, author_name=human_label(message, ctx))


def _resolve_webhook(message: DiscordMessage, webhook_id: str, ctx: SimplifyContext) -> AuthorIdentity:
    username = message.author.username
    match = match_persona_webhook(message, ctx.personas)
    if match is not None:
        persona = match.persona
        author_id = str(persona.persona_id) if persona.persona_id is not None else persona.persona_nickname
        # The entry's author id is the internal persona id; as a participant it is typed (D-03), so a
        # Discord user whose id has the same digits stays that user.
        participant_id = (
            ParticipantKey.persona(persona.persona_id).serialized if persona.persona_id is not None else author_id
        )
        label = persona_label(match, message.id, ctx)
        return AuthorIdentity(
            author_id=author_id,
            author_name=label,
            author_type="persona",
            persona_name=persona.persona_nickname,
            persona_id=persona.persona_id,
            persona_lineage_id=persona.persona_lineage_id,
            synthetic_user=(participant_id, {"display_name": label, "type": "persona"}),
        )
    name = webhook_label(username)
    impersonated = ctx.visibility.impersonation_relays.get(webhook_id)
    matrix_id = bridge_user_id(username)
    synthetic = None if impersonated or matrix_id else (webhook_id, {"display_name": name, "type": "webhook"})
    return AuthorIdentity(
        author_id=impersonated or webhook_id,
        author_name=name,
        synthetic_user=synthetic,
        matrix_user=(matrix_id, name) if matrix_id else None,
    )


def strip_trigger_mentions(content: str, personas: tuple[PersonaInfo, ...]) -> str:
    """BC3-11: `@trigger` (not preceded by a word character) → the bare trigger, case-insensitively,
    for every persona's trigger words (surrounding quotes stripped, case kept)."""
    if "@" not in content:  # nothing to strip; most messages skip a regex per trigger word
        return content
    for persona in personas:
        for raw in persona.trigger_words:
            trigger = raw.strip().strip("\"'")
            if trigger:
                # A literal replacement: `re.sub` would read backslashes in the trigger as escapes.
                pattern = re.compile(rf"(?<!\w)@{re.escape(trigger)}", re.IGNORECASE)
                content = pattern.sub(trigger.replace("\\", "\\\\"), content)
    return content
