"""What one hydration run reads from and writes to: its inputs, the per-user state of the Discord
users of participants.md §3.2, and the result (H-22)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from chatcontext.core.participants.mentions import MentionDirectory
from chatcontext.core.participants.model import (
    ActivePersonaScope,
    HydratedParticipantProfile,
    ParticipantKey,
    ParticipantSeed,
    PreparedParticipantContext,
)
from chatcontext.core.participants.naming import NamingPreference, PersonaRelativeName
from chatcontext.core.types import (
    Author,
    MemberInfo,
    PersonaInfo,
    PrivacyLevel,
    ServerConfig,
    ServerMemoryRow,
    TriggererName,
    UserRow,
)
from chatcontext.participants.hydration.calls import DependencyCalls
from chatcontext.participants.loaders import HydrationDeps


@dataclass(frozen=True)
class TurnUserReads:
    """Rows the turn already read before hydration (step 10's naming reads, BC7-07), so H-04, H-06
    and H-09 do not read them again: the user rows and blacklist entries of ``read_ids`` (an id
    without a row read as absent) and the naming preferences of ``preference_pairs``. Read in the
    same turn, so they are as fresh as a second read would be."""

    read_ids: frozenset[str] = frozenset()
    rows: Mapping[str, UserRow] = field(default_factory=dict)
    blacklisted: frozenset[str] = frozenset()
    preference_pairs: frozenset[tuple[int, int]] = frozenset()
    preferences: Mapping[tuple[int, int], NamingPreference] = field(default_factory=dict)


@dataclass(frozen=True)
class RequestSnapshot:
    """Per-request triggerer state (data-model.md §2.20) used by the H-05 fast path and R-14, and
    the turn's earlier user reads."""

    triggerer_id: str | None = None
    triggerer_row: UserRow | None = None
    is_triggerer_blacklisted: bool = False
    triggerer_privacy_level: int = PrivacyLevel.MINIMAL
    preloaded_member: MemberInfo | None = None
    turn_reads: TurnUserReads = field(default_factory=TurnUserReads)


@dataclass(frozen=True)
class ParticipantTurn:
    """The persona turn as hydration and the participant items see it: the active persona's scope
    (H-01), the server and channel, the bot's id, the clock, the triggerer's request snapshot (H-05)
    and names (R-14), and the impersonated identity's name. ``bot_name`` defaults to the active
    persona's nickname (``persona_name``)."""

    scope: ActivePersonaScope
    server: ServerConfig
    channel_name: str
    bot_user_id: str | None
    now_ms: int
    channel_id: str | None = None
    active_persona: PersonaInfo | None = None
    bot_name: str | None = None
    request_snapshot: RequestSnapshot = field(default_factory=RequestSnapshot)
    impersonated_identity_name: str | None = None
    triggerer: TriggererName | None = None

    @property
    def persona_name(self) -> str:
        """The name the participant texts give the bot: ``bot_name``, else the active persona's
        nickname, else Tomori."""
        nickname = self.active_persona.persona_nickname if self.active_persona else ""
        return (self.bot_name or nickname or "").strip() or "Tomori"


@dataclass(frozen=True)
class MemoryEntry:
    """N-02: one visible personal memory (content already converted, H-14 step 5)."""

    memory_id: int
    owner_key: ParticipantKey
    content: str
    created_at_ms: int


@dataclass
class HydrationResult:
    """H-22 output, plus what the item builder needs to convert and project without reading again."""

    profiles: list[HydratedParticipantProfile]
    persona_task_lines: list[str]
    diagnostics: dict[str, Any]
    memory_entries: list[MemoryEntry] = field(default_factory=list)
    mention_directory: MentionDirectory = field(default_factory=MentionDirectory)
    # The lineage's server memories when the personal-memory read brought them along, else None.
    server_memories: list[ServerMemoryRow] | None = None


@dataclass
class UserState:
    """One Discord user being hydrated: what was read for them and what P-01/P-02 decided."""

    seed: ParticipantSeed
    disc_id: str
    row: UserRow
    member: MemberInfo | None
    fallback: Author | None
    privacy: int = PrivacyLevel.MINIMAL
    blacklisted: bool = False
    is_triggerer: bool = False
    is_impersonated: bool = False
    display_name: str = ""
    saved_name_use: bool = False
    naming: PersonaRelativeName | None = None  # set when H-09 ran

    @property
    def key(self) -> ParticipantKey:
        return self.seed.key

    @property
    def minimal(self) -> bool:
        return self.privacy == PrivacyLevel.MINIMAL


class HydrationRun:
    """The inputs of one run, normalised once, with its counters, its mention directory and the
    memory entries it has shown so far."""

    def __init__(
        self,
        prepared: PreparedParticipantContext,
        turn: ParticipantTurn,
        *,
        deps: HydrationDeps,
        corpus: str | None,
        expand_attribute_macros: Callable[[str], str] | None,
        mention_directory: MentionDirectory | None,
    ) -> None:
        self.prepared = prepared
        self.scope = turn.scope
        self.deps = deps
        self.server = turn.server
        self.persona = turn.active_persona
        self.bot_name = turn.persona_name
        self.channel_name = turn.channel_name
        self.bot_user_id = (turn.bot_user_id or "").strip() or None
        self.now_ms = turn.now_ms
        self.snapshot = turn.request_snapshot
        self.corpus = corpus
        self.impersonated_name = (turn.impersonated_identity_name or "").strip() or None
        self.expand = expand_attribute_macros
        self.personalization = turn.server.personal_memories_enabled
        self.lineage = turn.scope.lineage_id or 0
        self.calls = DependencyCalls()
        self.directory = mention_directory if mention_directory is not None else MentionDirectory(self.bot_user_id)
        self.memory_entries: list[MemoryEntry] = []
