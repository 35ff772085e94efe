"""Value objects of the Build Context stage (build-context.md §1) and the rows it reads.

Everything here is plain data: no Django models, no discord.py. The imperative shell (transports,
loaders) produces these; the pure functions of the pipeline consume them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from personas.values.sampling import Sampling

if TYPE_CHECKING:  # the target index module reads these types
    from chatcontext.core.participants.target_index import TurnTargets
    from chatcontext.core.preset import Preset

JSONDict = dict[str, Any]


class PrivacyLevel(enum.IntEnum):
    """Mirror of personas.models.PrivacyLevel, usable without Django (participants.md P-01)."""

    MINIMAL = 0
    PARTIAL = 1
    FULL = 2


# ---------------------------------------------------------------------------------------------
# Discord-shaped input (build-context.md §1.3). Field names follow the turn-snapshot format.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Author:
    id: str
    username: str = ""
    global_name: str | None = None
    display_name: str | None = None
    bot: bool = False


@dataclass(frozen=True)
class Attachment:
    id: str
    name: str
    url: str
    proxy_url: str = ""
    content_type: str | None = None
    size: int = 0


@dataclass(frozen=True)
class StickerRef:
    id: str
    name: str


@dataclass(frozen=True)
class EmbedField:
    name: str = ""
    value: str = ""


@dataclass(frozen=True)
class EmbedMedia:
    url: str
    proxy_url: str | None = None


@dataclass(frozen=True)
class Embed:
    title: str | None = None
    description: str | None = None
    url: str | None = None
    color: int | None = None
    author_name: str | None = None
    footer_text: str | None = None
    fields: tuple[EmbedField, ...] = ()
    image: EmbedMedia | None = None
    thumbnail: EmbedMedia | None = None


@dataclass(frozen=True)
class ReactionEmoji:
    id: str | None = None
    name: str | None = None


@dataclass(frozen=True)
class Reaction:
    emoji: ReactionEmoji
    count: int
    # Resolved reactor ids when the source already knows them (turn snapshots); live transports
    # leave this None and answer ChatTransport.fetch_reaction_users instead.
    users: tuple[str, ...] | None = None


@dataclass(frozen=True)
class MessageReference:
    type: Literal["default", "forward"] = "default"
    message_id: str | None = None
    channel_id: str | None = None


@dataclass(frozen=True)
class ForwardSnapshot:
    """One entry of `message_snapshots` (a forwarded message's content)."""

    content: str = ""
    attachments: tuple[Attachment, ...] = ()
    components: tuple[JSONDict, ...] = ()
    embeds: tuple[Embed, ...] = ()
    stickers: tuple[StickerRef, ...] = ()
    author: Author | None = None
    member_display_name: str | None = None
    channel_id: str | None = None


@dataclass(frozen=True)
class DiscordMessage:
    id: str
    channel_id: str
    author: Author
    created_timestamp: int
    guild_id: str | None = None
    type: str = "default"
    member_display_name: str | None = None
    webhook_id: str | None = None
    content: str = ""
    clean_content: str = ""
    reference: MessageReference | None = None
    message_snapshots: tuple[ForwardSnapshot, ...] = ()
    attachments: tuple[Attachment, ...] = ()
    stickers: tuple[StickerRef, ...] = ()
    embeds: tuple[Embed, ...] = ()
    # Raw Components-V2 tree (dicts with type/content/components/items/media/accessory/file).
    components: tuple[JSONDict, ...] = ()
    reactions: tuple[Reaction, ...] = ()


@dataclass(frozen=True)
class Activity:
    type: str  # playing | streaming | listening | watching | custom | competing | other
    name: str = ""
    details: str | None = None
    state: str | None = None
    started_at_ms: int | None = None
    ended_at_ms: int | None = None
    emoji_name: str | None = None
    large_image_text: str | None = None
    small_image_text: str | None = None


@dataclass(frozen=True)
class Role:
    id: str
    name: str
    position: int = 0


@dataclass(frozen=True)
class MemberInfo:
    """A guild member as the transport reports it (data-model.md §2.5)."""

    user_disc_id: str
    username: str = ""
    global_name: str | None = None
    nickname: str | None = None
    display_name: str | None = None
    is_bot: bool = False
    can_manage_server: bool = False
    roles: tuple[Role, ...] = ()
    presence_status: str | None = None
    activities: tuple[Activity, ...] = ()

    @property
    def effective_display_name(self) -> str:
        return self.display_name or self.nickname or self.global_name or self.username or self.user_disc_id


# ---------------------------------------------------------------------------------------------
# Rows read from the database, as value objects.
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PersonaAttributeInfo:
    text: str
    is_public: bool = False


@dataclass(frozen=True)
class LoreEntryInfo:
    """An enabled lorebook entry a persona reads, with its book's settings applied (README, "Lorebooks")."""

    book_id: int
    uid: int
    content: str
    keys: tuple[str, ...] = ()
    secondary_keys: tuple[str, ...] = ()
    comment: str = ""
    selective: bool = False
    selective_logic: Literal["and_any", "not_all", "not_any", "and_all"] = "and_any"
    constant: bool = False
    insertion_order: int = 100
    position: Literal["before_char", "after_char", "at_depth"] = "before_char"
    depth: int = 4
    scan_depth: int = 2
    case_sensitive: bool = False
    match_whole_words: bool = True
    token_budget: int = 2048


@dataclass(frozen=True)
class CardFields:
    """The fields of a persona's imported character card that a preset's slots carry (README, "Presets"):
    persona data, never a user's text."""

    personality: str = ""
    scenario: str = ""
    system_prompt: str = ""
    post_history_instructions: str = ""


@dataclass(frozen=True)
class PersonaInfo:
    """A persona with the config fields the stage reads (build-context.md §1.4)."""

    persona_id: int | None
    persona_nickname: str
    persona_lineage_id: int
    is_alter: bool = False
    server_id: int | None = None
    trigger_words: tuple[str, ...] = ()
    persona_prompt: str | None = None
    physical_appearance_tags: tuple[str, ...] = ()
    attributes: tuple[PersonaAttributeInfo, ...] = ()
    naming_prefixes: JSONDict = field(default_factory=dict)
    naming_suffixes: JSONDict = field(default_factory=dict)
    naming_address_terms: JSONDict = field(default_factory=dict)
    webhook_id: str | None = None
    webhook_avatar_url: str | None = None
    sample_dialogue: tuple[JSONDict, ...] = ()
    self_debug_enabled: bool = False
    sprite_names: tuple[str, ...] = ()
    has_tools: bool = False
    llm_provider: str = ""
    llm_codename: str = ""
    # The SillyTavern preset that orders this persona's prompt (participants.md R-17); None: native order.
    preset: Preset | None = None
    # How its replies are drawn (sent by the provider, never read by the stage).
    sampling: Sampling = field(default_factory=Sampling)
    lorebook: tuple[LoreEntryInfo, ...] = ()
    # Its character card's fields, which only a preset places; None: the persona has no card.
    card: CardFields | None = None


@dataclass(frozen=True)
class ServerConfig:
    """A server with its settings (data-model.md §2.1–2.2) as one assembled config object."""

    server_id: int | None
    server_disc_id: str
    name: str = ""
    description: str | None = None
    is_dm: bool = False
    message_fetch_limit: Any = 80
    timezone_offset: float = 0.0
    memory_tagging_enabled: bool = False
    channel_memory_enabled: bool = False
    personal_memories_enabled: bool = True
    emoji_usage_enabled: bool = True
    sticker_usage_enabled: bool = True
    time_awareness_enabled: bool = True
    user_blocking_enabled: bool = True
    deliberate_trigger_mode: bool = False
    # Routing and the bot's commands only; the prompt never reads them.
    always_reply_enabled: bool = False
    prompt_command_enabled: bool = True
    rp_channel_ids: tuple[str, ...] = ()
    voice_transcript_chat_mode: bool | None = None
    uncensor_injection_enabled: bool = False
    uncensor_unicode_space_enabled: bool = False
    preferred_locale: str = "en-US"


@dataclass(frozen=True)
class UserRow:
    """`users` joined with personalization (data-model.md §2.3)."""

    user_id: int
    user_disc_id: str
    username: str = ""
    global_name: str | None = None
    language_pref: str = "en-US"
    privacy_level: int = PrivacyLevel.MINIMAL
    user_nickname: str | None = None
    prefix_override: str | None = None
    suffix_override: str | None = None
    addressing_style: str | None = None
    gender_identity: str | None = None
    pronouns: str | None = None
    timezone_offset: int | None = None
    physical_appearance_tags: tuple[str, ...] = ()
    nai_char_ref_url: str | None = None
    impersonation_prompt: str | None = None
    personal_dtm: str = "follow"
    personal_deliberate_tool_mode: str = "follow"
    shortterm_cache_crossserver_opt_in: bool = False


@dataclass(frozen=True)
class BlockRow:
    user_disc_id: str
    block_type: Literal["mute", "block"]
    expires_at_ms: int
    persona_id: int | None = None
    reason: str = ""


@dataclass(frozen=True)
class MemoryRow:
    personal_memory_id: int
    user_id: int
    persona_lineage_id: int
    content: str
    tags: tuple[str, ...] = ()
    created_at_ms: int = 0


@dataclass(frozen=True)
class ServerMemoryRow:
    persona_lineage_id: int
    content: str
    tags: tuple[str, ...] = ()
    created_at_ms: int = 0


@dataclass(frozen=True)
class ReminderRow:
    reminder_id: int | None
    user_discord_id: str
    reminder_purpose: str
    reminder_time_ms: int
    channel_disc_id: str = ""
    persona_id: int | None = None
    self_reminder: bool = False
    repetition_interval_hours: int | None = None
    created_by_user_id: int | None = None


@dataclass(frozen=True)
class EmojiRow:
    emoji_disc_id: str
    emoji_name: str
    is_animated: bool = False
    emoji_desc: str = ""


@dataclass(frozen=True)
class StickerRow:
    sticker_disc_id: str
    sticker_name: str
    sticker_desc: str = ""


# ---------------------------------------------------------------------------------------------
# Stage output shapes (build-context.md §1.5–§1.7, §9).
# ---------------------------------------------------------------------------------------------


@dataclass
class ImageRef:
    url: str
    proxy_url: str
    mime_type: str | None
    filename: str
    is_emoji: bool = False
    source_message_id: str | None = None


@dataclass
class VideoRef:
    url: str
    proxy_url: str
    mime_type: str | None
    filename: str
    is_youtube_link: bool = False
    source_message_id: str | None = None


@dataclass
class SimplifiedMessage:
    """One history entry (reference `SimplifiedMessageForContext`)."""

    id: str
    author_id: str
    author_name: str
    author_type: Literal["user", "persona"] = "user"
    persona_name: str | None = None
    author_persona_id: int | None = None
    author_persona_lineage_id: int | None = None
    content: str | None = None
    created_at: int | None = None
    media_source_message_ids: list[str] | None = None
    remote_media_source_kind: Literal["reply", "forwarded"] | None = None
    combined_message_ids: list[str] | None = None
    individual_contents: list[str] | None = None
    combined_created_ats: list[int] | None = None
    image_attachments: list[ImageRef] = field(default_factory=list)
    video_attachments: list[VideoRef] = field(default_factory=list)

    @property
    def has_media(self) -> bool:
        return bool(self.image_attachments or self.video_attachments or self.media_source_message_ids)


@dataclass(frozen=True)
class TextPart:
    text: str
    type: Literal["text"] = "text"


@dataclass(frozen=True)
class ImagePart:
    uri: str
    mime_type: str
    type: Literal["image"] = "image"


@dataclass(frozen=True)
class VideoPart:
    uri: str
    mime_type: str
    is_youtube_link: bool = False
    type: Literal["video"] = "video"


Part = TextPart | ImagePart | VideoPart


class ContextItemTag(enum.StrEnum):
    SYSTEM_INSTRUCTION_BLOCK = "system_instruction_block"
    SYSTEM_PERSONALITY = "system_personality"
    KNOWLEDGE_SERVER_INFO = "knowledge_server_info"
    KNOWLEDGE_PERSONA_USER_BLOCKS = "knowledge_persona_user_blocks"
    KNOWLEDGE_SERVER_MEMORIES = "knowledge_server_memories"
    KNOWLEDGE_EMOJIS = "knowledge_emojis"
    KNOWLEDGE_STICKERS = "knowledge_stickers"
    KNOWLEDGE_USERS_IN_CONVERSATION = "knowledge_users_in_conversation"
    KNOWLEDGE_USER_STATUS = "knowledge_user_status"
    KNOWLEDGE_CURRENT_CONTEXT = "knowledge_current_context"
    DIALOGUE_SAMPLE = "dialogue_sample"
    DIALOGUE_HISTORY = "dialogue_history"
    CONTEXT_NOTE_INJECTION = "context_note_injection"
    WORLD_INFO_BEFORE = "world_info_before"
    WORLD_INFO_AFTER = "world_info_after"
    WORLD_INFO_AT_DEPTH = "world_info_at_depth"


@dataclass(frozen=True)
class MediaDescriptor:
    kind: Literal["image", "video"]
    uri: str
    mime_type: str
    media_id: str
    within_window: bool
    filename: str
    fallback_uri: str | None = None
    is_youtube_link: bool | None = None


@dataclass
class ContextItem:
    role: Literal["system", "user", "model"]
    parts: list[Part]
    metadata_tag: ContextItemTag | None = None
    message_id: str | None = None
    sender: JSONDict | None = None
    media_descriptors: list[MediaDescriptor] | None = None
    # Hidden metadata carried for tools and adapters; never rendered as text.
    conversation_users: list[JSONDict] | None = None
    participant_target_index: JSONDict | None = None
    persona_mention_map: dict[str, str] | None = None
    memory_projection: JSONDict | None = None
    # Lorebook items: which entries fired and on which key, for the inspector.
    world_info: list[JSONDict] | None = None
    placement: Literal["inline", "tail"] = "inline"

    @property
    def text(self) -> str:
        return "\n".join(p.text for p in self.parts if isinstance(p, TextPart))


@dataclass
class ReplyNoticeState:
    attempted: bool = False
    sent: bool = False


@dataclass
class StreamingContext:
    """Per-turn flags read by generation and tools (build-context.md §9)."""

    disable_youtube_processing: bool = False
    disable_profile_picture_processing: bool = False
    disable_gif_processing: bool = False
    disable_short_term_memory_update: bool = False
    disable_cross_channel_message: bool = False
    disable_message_metadata_context: bool = False
    explicit_long_term_memory_intent: bool = False
    force_reason: bool | None = None
    is_manually_triggered: bool | None = None
    suppress_user_errors: bool = False
    text_credential_source: str = "server"
    disable_all_tools: bool = False
    nai_continuation_prefill: str | None = None
    empty_response_retry_count: int = 0
    triggerer_user_id: int | None = None
    forced_mentions: list[JSONDict] | None = None
    reply_notice_state: ReplyNoticeState | None = None
    deliberate_tool_allowed_names: list[str] | None = None
    end_turn_after_tools: list[str] | None = None
    # The turn's chatcontext.core.idmap.MessageIdMap (BC5-03), shared with tools; Any to avoid an import cycle.
    message_id_map: Any = None


# ---------------------------------------------------------------------------------------------
# Turn inputs (build-context.md §1.1–§1.2).
# ---------------------------------------------------------------------------------------------


@dataclass
class ReminderData:
    reminder_purpose: str
    reminder_lateness: str | None = None
    self_reminder: bool | None = None


@dataclass
class ChatIncoming:
    message: DiscordMessage
    is_from_queue: bool = False
    is_manually_triggered: bool | None = None
    force_reason: bool | None = None
    reasoning_query: str | None = None
    is_stop_response: bool | None = None
    retry_count: int = 0
    reminder_recipient_id: str | None = None
    reminder_data: ReminderData | None = None
    is_persona_job: bool = False
    is_user_impersonation: bool = False
    impersonated_user_id: str | None = None
    manual_system_prompt: str | None = None
    manual_prefill: str | None = None
    nai_continuation_prefill: str | None = None
    injected_context_items: list[ContextItem] | None = None
    forced_mentions: list[JSONDict] | None = None
    manual_streaming_context_overrides: JSONDict | None = None
    scene_turn: JSONDict | None = None


@dataclass(eq=False)
class LockedTurn:
    """One admitted trigger and its planned persona turns; its identity keys the request scope."""

    incoming: ChatIncoming
    channel_id: str
    locked_at_ms: int = 0
    queue_depth: int = 0
    triggered_persona_ids: tuple[int, ...] = ()


@dataclass(frozen=True)
class TriggererName:
    """How the responding persona names the triggerer (build-context.md §1.1; ``chatcontext.core.triggerer``):
    the nickname (`{user}`), the formatted name (`{user_formatted}`) and the address term (`{user_term}`)."""

    nickname: str
    formatted: str
    address_term: str | None = None


@dataclass(frozen=True)
class ShortTermNote:
    """The persona's short-term memory of the turn's channel (``personas.ShortTermMemory``) as the
    surface read it: the note ("" when none), when it was last written (None: never), and whether
    the surface offers ``update_short_term_memory`` on this turn (the nudge and the intent wrapper
    ask only then, BC8-12c, BC9-12). ``author_ids``: whose messages the note was written from, who
    become subjects of every record whose prompt holds it (forget-me deletes those records too)."""

    content: str = ""
    updated_at_ms: int | None = None
    tool_offered: bool = False
    author_ids: tuple[str, ...] = ()


@dataclass
class ChatTurn:
    locked_turn: LockedTurn
    persona: PersonaInfo
    all_personas: tuple[PersonaInfo, ...]
    server: ServerConfig
    channel_name: str
    bot_user: Author
    now_ms: int
    user_row: UserRow | None = None
    main_persona: PersonaInfo | None = None
    persona_index: int = 0
    total_personas: int = 1
    channel_description: str | None = None
    thread_parent_id: str | None = None
    triggerer: TriggererName = TriggererName("User", "User")
    should_surface_user_errors: bool = True
    forced_mentions: list[JSONDict] | None = None
    text_credential_source: str = "server"
    is_self_message: bool = False
    # The actions a regenerable reply of this surface offers (chatcontext.core.regeneration, BC9-10);
    # none (a replay, a test) means fast regeneration is never offered.
    fast_regeneration_actions: tuple[str, ...] = ()
    short_term_memory: ShortTermNote | None = None
    # BC2-07a: the first message of this channel's history window at the persona's previous turn,
    # remembered by the caller (bot.conversation.window_memory); None starts afresh.
    history_anchor_id: str | None = None

    @property
    def incoming(self) -> ChatIncoming:
        return self.locked_turn.incoming

    @property
    def is_dm_channel(self) -> bool:
        return self.server.is_dm

    @property
    def user_disc_id(self) -> str:
        return self.incoming.message.author.id


@dataclass
class ChatTurnContext:
    """The per-turn closure the rest of the turn reads (build-context.md §1.7)."""

    turn: ChatTurn
    current_persona: PersonaInfo
    context_items: list[ContextItem]
    simplified_messages: list[SimplifiedMessage]
    streaming_context: StreamingContext
    message_id_map: Any  # chatcontext.core.idmap.MessageIdMap (kept Any to avoid an import cycle)
    # X-06, computed once per turn by the pipeline; the reply's pings and the tools read it here.
    targets: TurnTargets
    emoji_strings: list[str] = field(default_factory=list)
    loaded_emojis: list[EmojiRow] | None = None
    loaded_stickers: list[StickerRow] | None = None
    participant_target_index: JSONDict | None = None
    diagnostics: JSONDict = field(default_factory=dict)
    # Exclusion log: who/what was left out and why, without the excluded text (prompt records).
    exclusions: list[JSONDict] = field(default_factory=list)
    # BC9-10: chatcontext.core.regeneration.FastRegenerationRecorder, or None (Any: import cycle).
    fast_regeneration_recorder: Any = None
    # BC2-07a: the first message of the history window, for the caller to remember for the next turn.
    history_anchor_id: str | None = None
