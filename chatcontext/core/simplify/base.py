"""What `simplify_message` knows besides the message itself, and the message kinds (BC3-01).

Everything Discord or the database could tell is gathered by `chatcontext.history` before the
simplify loop runs (reply targets, forward chains, reaction users, rows, transcripts, cached
members), so simplification is a pure function of a message and this context. The one mutable
part is the turn's `MessageIdMap`, shared by design (BC5-03).
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field

from chatcontext.core.config import StageConfig
from chatcontext.core.frames import system_frame
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.transcripts import CachedTranscript
from chatcontext.core.types import (
    Author,
    DiscordMessage,
    ForwardSnapshot,
    MemberInfo,
    PersonaInfo,
    PrivacyLevel,
    UserRow,
)

JOIN_TYPE = "user_join"
PIN_TYPE = "channel_pinned_message"
DEBUG_PREFIX = "$:"
NO_TEXT = "[System: No text content was included]"

_WS = re.compile(r"\s+")


def collapse_whitespace(text: str) -> str:
    return _WS.sub(" ", text).strip()


def plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def media_suffix(images: int, videos: int) -> str:
    """` (with N image[s])` + ` (with N video[s])` of reply summaries and forward blocks (BC3-05/14)."""
    suffix = f" (with {plural(images, 'image')})" if images else ""
    return suffix + (f" (with {plural(videos, 'video')})" if videos else "")


@dataclass(frozen=True)
class Visibility:
    """Who may be seen (BC2-08/10): privacy levels, the persona's blocks and the relay cache.

    A user without a row has privacy MINIMAL. Only `block` rows hide messages (BC2-07).
    """

    privacy_levels: Mapping[str, int] = field(default_factory=dict)
    blocked_ids: AbstractSet[str] = frozenset()
    # Impersonation relay cache: webhook id → impersonated user id (BC2-08, 24 h TTL upstream).
    impersonation_relays: Mapping[str, str] = field(default_factory=dict)

    def is_full(self, user_id: str) -> bool:
        return self.privacy_levels.get(user_id, PrivacyLevel.MINIMAL) == PrivacyLevel.FULL

    def comparable_id(self, message: DiscordMessage) -> str:
        """BC2-08: a relayed webhook compares as the impersonated user."""
        if message.webhook_id:
            return self.impersonation_relays.get(message.webhook_id, message.author.id)
        return message.author.id

    def is_hidden_author(self, author_id: str, comparable_id: str | None = None) -> bool:
        """A FULL-privacy or blocked author: nothing of theirs may be quoted in another entry."""
        return self.is_full(author_id) or (comparable_id or author_id) in self.blocked_ids

    def hides(self, message: DiscordMessage) -> bool:
        return self.is_hidden_author(message.author.id, self.comparable_id(message))


@dataclass(frozen=True)
class SimplifyContext:
    persona: PersonaInfo  # the responding persona
    main_persona: PersonaInfo | None
    personas: tuple[PersonaInfo, ...]
    bot_user_id: str
    server_name: str
    id_map: MessageIdMap
    config: StageConfig = field(default_factory=StageConfig)
    visibility: Visibility = field(default_factory=Visibility)
    user_rows: Mapping[str, UserRow] = field(default_factory=dict)
    blacklisted: AbstractSet[str] = frozenset()
    personalization_enabled: bool = True
    sprite_labels: Mapping[str, tuple[int, str]] = field(default_factory=dict)
    transcripts: Mapping[str, CachedTranscript] = field(default_factory=dict)
    rendered_tables: Mapping[str, str] = field(default_factory=dict)
    members: Mapping[str, MemberInfo] = field(default_factory=dict)
    # Authors whose `$:` messages are honoured (self-debug on and may manage the server).
    debug_author_ids: AbstractSet[str] = frozenset()
    voice_chat_mode: bool = False
    # Prefetched by the history shell; absent keys mean "nothing resolved".
    reply_targets: Mapping[str, DiscordMessage] = field(default_factory=dict)
    forward_chains: Mapping[str, tuple[ForwardSnapshot, ...] | None] = field(default_factory=dict)
    forward_origin_authors: Mapping[str, Author] = field(default_factory=dict)
    reaction_users: Mapping[str, Sequence[Sequence[Author] | None]] = field(default_factory=dict)

    @property
    def identity_persona(self) -> PersonaInfo:
        """The persona speaking as the bot user: the main persona, else the responding one (BC3-10)."""
        return self.main_persona or self.persona

    @property
    def self_debug_enabled(self) -> bool:
        return self.persona.self_debug_enabled

    def saved_nickname(self, user_id: str) -> str | None:
        """A saved nickname, unless the user is blacklisted or personalization is off (BC3-06, U-3)."""
        row = self.user_rows.get(user_id)
        if row is None or not self.personalization_enabled or user_id in self.blacklisted:
            return None
        nickname = (row.user_nickname or "").strip()
        return nickname or None

    def member_display_name(self, message: DiscordMessage) -> str | None:
        if message.member_display_name:
            return message.member_display_name
        member = self.members.get(message.author.id)
        return (member.display_name or member.nickname) if member else None


def is_join(message: DiscordMessage) -> bool:
    return message.type == JOIN_TYPE


def is_debug_message(message: DiscordMessage, ctx: SimplifyContext) -> bool:
    """BC3-01 `$:` debug message, honoured only when the persona's self-debug is on and the author may
    manage the server (`debug_author_ids`); otherwise it stays ordinary user text, `$:` included."""
    return (
        not is_join(message) and message.content.startswith(DEBUG_PREFIX) and message.author.id in ctx.debug_author_ids
    )


def base_content(message: DiscordMessage, ctx: SimplifyContext, is_debug: bool) -> str:
    """BC3-01: the join notice, the debug text after `$:` (a following space kept), or the raw content."""
    if is_join(message):
        return system_frame(f"<@{message.author.id}> has just joined {ctx.server_name}")
    if is_debug:
        return message.content[len(DEBUG_PREFIX) :]
    return message.content
