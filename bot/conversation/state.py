"""The rows a conversation routes by — its server, the triggering author — and the first-contact
writes that create them, as synchronous functions.

Surfaces call them through their ``db`` adapter (``bot.conversation.db``). Reads are batched: one
query per kind of row, whatever the number of personas.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.conversation.media import ImagePolicy
from bot.conversation.providers import ProviderConfig, provider_config
from chatcontext import repository
from chatcontext.core.simplify.media import is_audio_attachment
from chatcontext.core.types import Attachment, Author, DiscordMessage, PersonaInfo, ServerConfig, UserRow
from chatcontext.stage_settings import stage_config
from chatcontext.voice.tasks import enqueue_transcription
from personas import actions
from personas import models as m


@dataclass(frozen=True)
class ServerState:
    """One server as the bot routes it: settings, personas (single-owner triggers), provider, what
    its model may be shown (images) and whether its replies stream."""

    config: ServerConfig
    personas: tuple[PersonaInfo, ...]
    provider: ProviderConfig
    images: ImagePolicy = field(default_factory=ImagePolicy)
    stream_replies: bool = True
    # Steering switches (bot.conversation.steering): who may /refresh, and compaction before a turn.
    refresh_open_to_all: bool = False
    auto_compact: bool = False

    @property
    def server_id(self) -> int:
        assert self.config.server_id is not None
        return self.config.server_id

    @property
    def main_persona(self) -> PersonaInfo | None:
        return next((p for p in self.personas if not p.is_alter), None)


@dataclass(frozen=True)
class AuthorState:
    """The triggering user: their row, blacklist entry and the personas they may not trigger."""

    user_row: UserRow
    blacklisted: bool
    muted_persona_ids: frozenset[int]


# Servers and users the bot hears from are registered by the platform itself.
FIRST_CONTACT = actions.Actor.system("registration on first contact")


def load_server_state(
    server_disc_id: str, *, name: str, is_dm: bool, locale: str | None, default_persona: str | None = None
) -> ServerState:
    """The server of a guild or DM channel, registered on first contact with a main persona named
    ``default_persona`` (default: ``DEFAULT_BOTNAME``). Every surface loads its server here."""
    server = m.Server.objects.select_related("settings").filter(server_disc_id=server_disc_id).first()
    if server is None or not server.personas.filter(is_alter=False).exists():
        actions.register_server(
            server_disc_id,
            name=name,
            is_dm=is_dm,
            locale=locale,
            main_persona_nickname=default_persona or stage_config().default_botname,
            actor=FIRST_CONTACT,
        )
        server = m.Server.objects.select_related("settings").get(server_disc_id=server_disc_id)
    return ServerState(
        config=repository.server_config(server),
        personas=tuple(repository.load_personas(server.server_id)),
        provider=provider_config(server.settings),
        images=ImagePolicy.of(server.settings),
        stream_replies=server.settings.stream_replies,
        refresh_open_to_all=server.settings.refresh_open_to_all,
        auto_compact=server.settings.auto_compact_enabled,
    )


def load_author_state(server_id: int, author: Author, now_ms: int) -> AuthorState:
    """Register the author on first contact; read their blacklist entry and active mute/block rows."""
    user = actions.register_user(
        author.id, username=author.username, global_name=author.global_name, actor=FIRST_CONTACT
    )
    return _author_state(server_id, repository.user_row(user), now_ms)


def read_author_state(server_id: int, author_id: str, now_ms: int) -> AuthorState | None:
    """The rows of a trigger author who did not ask for the turn (a reminder turn anchored on the
    channel's latest message): read only, never registered; None when they have no row."""
    row = repository.load_user_rows([author_id]).get(author_id)
    return _author_state(server_id, row, now_ms) if row is not None else None


def _author_state(server_id: int, row: UserRow, now_ms: int) -> AuthorState:
    muted = m.PersonaUserBlock.objects.filter(
        server_id=server_id, user_disc_id=row.user_disc_id, expires_at__gt=repository.ms_to_datetime(now_ms)
    ).values_list("persona_id", flat=True)
    return AuthorState(
        user_row=row,
        blacklisted=bool(repository.load_blacklisted(server_id, [row.user_disc_id])),
        muted_persona_ids=frozenset(muted),
    )


def audio_to_transcribe(author_id: str, attachments: Sequence[Attachment]) -> Attachment | None:
    """The audio a message's speech-to-text reads: its first audio attachment, unless its author is
    privacy-FULL — their audio is never sent, as their messages never reach a prompt."""
    audio = next((a for a in attachments if is_audio_attachment(a)), None)
    if audio is None:
        return None
    privacy = m.DiscordUser.objects.filter(user_disc_id=author_id).values_list("privacy_level", flat=True)
    return None if privacy.first() == m.PrivacyLevel.FULL else audio


def enqueue_voice_transcription(message: DiscordMessage) -> bool:
    """Queue speech-to-text for a human voice message as it arrives, so later turns find its
    transcript in the cache (build-context.md BC11-01/BC11-02). True when a transcription was queued."""
    audio = audio_to_transcribe(message.author.id, message.attachments)
    if audio is None:
        return False
    enqueue_transcription(message.id, audio.id, audio.url)
    return True
