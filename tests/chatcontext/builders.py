"""Builders for the history tests: the build-context.md §12 fixture world and a one-call history run.

Personas Tomori (id 1, lineage 10, main) and Ellen (id 2, alter); bot user `900`; humans U1 (saved
nickname `Ann`) and U2 (saved nickname `Bob`); server `Cafe`, timezone offset 0, time awareness on.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from chatcontext.core.config import StageConfig
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.memory_transport import InMemoryTransport, TransportCapabilities, TransportFailures
from chatcontext.core.transcripts import MemoryTranscriptCache
from chatcontext.core.types import (
    Attachment,
    Author,
    BlockRow,
    ChatIncoming,
    ChatTurn,
    ContextItem,
    ContextItemTag,
    DiscordMessage,
    Embed,
    LockedTurn,
    MemberInfo,
    MessageReference,
    PersonaInfo,
    ServerConfig,
    TextPart,
    UserRow,
)
from chatcontext.core.voice_prehydration import Transcriber
from chatcontext.history import HistoryInputs, HistoryResult, HistoryRows, build_history

BOT_ID = "900"
U1 = "111111111111111111"
U2 = "222222222222222222"
U3 = "333333333333333333"
CHANNEL = "444444444444444444"
GUILD = "555555555555555555"
WEBHOOK = "666666666666666666"


def at(hour: int, minute: int = 0, *, day: int = 1) -> int:
    """Epoch ms of 2025-12-{day} {hour}:{minute} UTC."""
    return int(datetime(2025, 12, day, hour, minute, tzinfo=UTC).timestamp() * 1000)


NOW = at(12)

TOMORI = PersonaInfo(persona_id=1, persona_nickname="Tomori", persona_lineage_id=10, server_id=1)
ELLEN = PersonaInfo(persona_id=2, persona_nickname="Ellen", persona_lineage_id=20, is_alter=True, server_id=1)
PERSONAS = (TOMORI, ELLEN)

BOT = Author(id=BOT_ID, username="tomoribot", global_name="Tomori", bot=True)
ANN = Author(id=U1, username="ann_u", global_name="Annie")
BOB = Author(id=U2, username="bob_u", global_name="Bobby")
CARL = Author(id=U3, username="carl_u", global_name="Carl")

SERVER = ServerConfig(server_id=1, server_disc_id=GUILD, name="Cafe", timezone_offset=0.0)

USER_ROWS = {
    U1: UserRow(user_id=1, user_disc_id=U1, username="ann_u", user_nickname="Ann"),
    U2: UserRow(user_id=2, user_disc_id=U2, username="bob_u", user_nickname="Bob"),
}


def msg(
    message_id: str,
    author: Author = ANN,
    content: str = "",
    *,
    ts: int | None = None,
    reply_to: str | None = None,
    **changes: Any,
) -> DiscordMessage:
    """A channel message; ids are short strings (`m1`); the time defaults to 10:00 on day 1."""
    created = ts if ts is not None else at(10)
    base = DiscordMessage(
        id=message_id,
        channel_id=CHANNEL,
        guild_id=GUILD,
        author=author,
        created_timestamp=created,
        content=content,
        clean_content=content,
        reference=MessageReference(message_id=reply_to, channel_id=CHANNEL) if reply_to else None,
    )
    return replace(base, **changes)


def webhook_msg(message_id: str, name: str, content: str = "", **changes: Any) -> DiscordMessage:
    author = Author(id=WEBHOOK, username=name, display_name=name, bot=True)
    return msg(message_id, author, content, webhook_id=WEBHOOK, **changes)


def bot_embed(message_id: str, title: str, description: str | None = None, **embed: Any) -> DiscordMessage:
    return msg(message_id, BOT, embeds=(Embed(title=title, description=description, **embed),))


def png(name: str = "a.png", attachment_id: str = "att1") -> Attachment:
    return Attachment(
        id=attachment_id,
        name=name,
        url=f"https://cdn.example/{attachment_id}/{name}",
        proxy_url=f"https://media.example/{attachment_id}/{name}",
        content_type="image/png",
    )


def make_turn(
    trigger: DiscordMessage,
    *,
    persona: PersonaInfo = TOMORI,
    personas: tuple[PersonaInfo, ...] = PERSONAS,
    server: ServerConfig = SERVER,
    is_from_queue: bool = False,
    is_user_impersonation: bool = False,
    now_ms: int = NOW,
) -> ChatTurn:
    incoming = ChatIncoming(message=trigger, is_from_queue=is_from_queue, is_user_impersonation=is_user_impersonation)
    return ChatTurn(
        locked_turn=LockedTurn(incoming=incoming, channel_id=CHANNEL),
        persona=persona,
        all_personas=personas,
        server=server,
        channel_name="lounge",
        bot_user=BOT,
        now_ms=now_ms,
        main_persona=next((p for p in personas if not p.is_alter), None),
    )


def block(user_id: str, minutes: int, block_type: str = "block") -> BlockRow:
    return BlockRow(user_disc_id=user_id, block_type=block_type, expires_at_ms=NOW + minutes * 60_000, persona_id=1)  # type: ignore[arg-type]


@dataclass
class Run:
    result: HistoryResult
    id_map: MessageIdMap
    transport: InMemoryTransport
    cache: MemoryTranscriptCache

    @property
    def entries(self) -> list[Any]:
        return self.result.simplified_messages

    @property
    def contents(self) -> list[str | None]:
        return [e.content for e in self.entries]

    def entry(self, entry_id: str) -> Any:
        return next(e for e in self.entries if e.id == entry_id)


def run_history(
    messages: list[DiscordMessage],
    *,
    trigger: DiscordMessage | None = None,
    turn: ChatTurn | None = None,
    extra_messages: tuple[DiscordMessage, ...] = (),
    members: tuple[MemberInfo, ...] = (),
    users: tuple[Author, ...] = (),
    failing_message_ids: tuple[str, ...] = (),
    failing_reaction_message_ids: tuple[str, ...] = (),
    supports_history: bool = True,
    config: StageConfig | None = None,
    user_rows: dict[str, UserRow] | None = None,
    privacy: dict[str, int] | None = None,
    blocks: list[BlockRow] | None = None,
    blacklisted: set[str] | None = None,
    sprite_labels: dict[str, tuple[int, str]] | None = None,
    relays: dict[str, str] | None = None,
    rendered_tables: dict[str, str] | None = None,
    cache: MemoryTranscriptCache | None = None,
    transcriber: Transcriber | None = None,
    **turn_options: Any,
) -> Run:
    """Build the history of `messages` (oldest first) with in-memory rows: no database involved."""
    transport = InMemoryTransport(
        messages,
        extra_messages=extra_messages,
        members=members,
        users=users,
        capabilities=TransportCapabilities(supports_history=supports_history),
        failures=TransportFailures(failing_message_ids, failing_reaction_message_ids),
    )
    the_turn = turn or make_turn(trigger or (messages[-1] if messages else msg("t", ANN, "hi")), **turn_options)
    id_map = MessageIdMap()
    the_cache = cache if cache is not None else MemoryTranscriptCache()
    result = build_history(
        the_turn,
        transport,
        id_map,
        config=config or StageConfig(),
        transcripts=the_cache,
        transcriber=transcriber,
        given=HistoryInputs(
            rows=HistoryRows(
                user_rows=USER_ROWS if user_rows is None else user_rows,
                blacklisted=blacklisted or set(),
                active_blocks=blocks or [],
                sprite_labels=sprite_labels or {},
            ),
            privacy_levels=privacy,
            impersonation_relays=relays,
            rendered_tables=rendered_tables,
        ),
    )
    return Run(result, id_map, transport, the_cache)


def profile_item() -> ContextItem:
    return ContextItem(
        role="user",
        parts=[TextPart("[System: People taking part in this conversation:\n\nAnn\n]")],
        metadata_tag=Tag.KNOWLEDGE_USERS_IN_CONVERSATION,
        participant_target_index=TARGET_INDEX,
        conversation_users=[{"id": U1, "name": "Ann"}],
        memory_projection={"text": "likes tea"},
    )


def tail_items() -> list[ContextItem | None]:
    return [
        None,
        ContextItem(role="user", parts=[TextPart("[System: presence]")], metadata_tag=Tag.KNOWLEDGE_USER_STATUS),
        ContextItem(role="user", parts=[TextPart("[System: clock]")], metadata_tag=Tag.KNOWLEDGE_CURRENT_CONTEXT),
    ]


Tag = ContextItemTag


TARGET_INDEX = {"targets": [{"serialized_key": "discord_user:1", "aliases": []}], "persona_catalog_complete": False}
