"""Value objects of the participant contributor (participants.md §1.3–§1.6, §3, data-model.md §2.21).

Shared by discovery (phase 1) and hydration/rendering (phase 2). Plain data, no I/O.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Literal

from chatcontext.core.types import PersonaInfo, SimplifiedMessage

KeyKind = Literal["discord_user", "persona", "webhook", "matrix_user", "bot"]

Purpose = Literal["input_reference", "output_mention", "tool_target", "copied_identity", "persona_trigger"]
Exposure = Literal["visible", "lookup_only"]

INCLUSION_REASONS = (
    "visible_author",
    "active_identity",
    "real_mention",
    "unique_text_alias",
    "historical_persona",
    "co_responder",
    "persona_trigger_reference",
    "bridge_presence",
    "reminder_target",
)
REJECTION_REASONS = (
    "ineligible_state",
    "bot",
    "non_member",
    "ambiguous_alias",
    "existing_participant",
    "blocked_source",
    "missing_guild",
)

_WS = re.compile(r"\s+")


@functools.lru_cache(maxsize=16384)
def normalize_alias(value: str) -> str:
    """D-05: trim → drop all leading `@` → trim → lower-case → collapse whitespace runs.

    Cached: a turn normalizes every alias of every member it considers, mostly the same names as
    the turn before."""
    return _WS.sub(" ", value.strip().lstrip("@").strip().lower())


@dataclass(frozen=True, order=True)
class ParticipantKey:
    """D-01: equal iff the serializations are equal, so `discord_user:7` ≠ `persona:7`."""

    kind: KeyKind
    id: str

    def __post_init__(self) -> None:
        # D-02: ids are trimmed, never empty; persona ids are non-negative integers.
        trimmed = str(self.id).strip()
        if not trimmed:
            raise ValueError(f"a {self.kind} key needs a non-empty id")
        if self.kind == "persona" and not trimmed.isdigit():
            raise ValueError("a persona key needs a non-negative integer id")
        object.__setattr__(self, "id", trimmed)

    @property
    def serialized(self) -> str:
        return f"{self.kind}:{self.id}"

    def __str__(self) -> str:
        return self.serialized

    @classmethod
    def discord_user(cls, discord_id: str) -> ParticipantKey:
        return cls("discord_user", discord_id)

    @classmethod
    def persona(cls, persona_id: int) -> ParticipantKey:
        if int(persona_id) < 0:
            raise ValueError("a persona key needs a non-negative integer id")
        return cls("persona", str(int(persona_id)))

    @classmethod
    def webhook(cls, webhook_id: str) -> ParticipantKey:
        return cls("webhook", webhook_id)

    @classmethod
    def matrix_user(cls, matrix_id: str) -> ParticipantKey:
        return cls("matrix_user", matrix_id)

    @classmethod
    def bot(cls, discord_id: str) -> ParticipantKey:
        return cls("bot", discord_id)


def typed_persona_id(value: str) -> int | None:
    """N of the typed form `persona:N` only. Bare digits in a list of participant ids are a Discord
    id (U-4): a persona's internal id shares its digits with short Discord ids."""
    text = value.strip()
    return parse_persona_id(text) if text.startswith("persona:") else None


def parse_persona_id(value: str) -> int | None:
    """D-03: `persona:N` or bare `N` (digits only); anything else → None."""
    text = value.strip()
    if text.startswith("persona:"):
        text = text[len("persona:") :]
    return int(text) if text.isdigit() else None


@dataclass(frozen=True)
class ParticipantAlias:
    """D-04. Build through ``make_alias`` so empty values are never created."""

    owner: ParticipantKey
    value: str
    normalized: str
    source: str
    purposes: frozenset[Purpose]
    exposure: Exposure
    priority: int
    canonical_value: str | None = None


def make_alias(
    owner: ParticipantKey,
    value: str | None,
    source: str,
    purposes: set[Purpose] | frozenset[Purpose],
    exposure: Exposure,
    priority: int,
    canonical_value: str | None = None,
) -> ParticipantAlias | None:
    return _make_alias(owner, value, source, frozenset(purposes), exposure, priority, canonical_value)


@functools.lru_cache(maxsize=16384)
def _make_alias(
    owner: ParticipantKey,
    value: str | None,
    source: str,
    purposes: frozenset[Purpose],
    exposure: Exposure,
    priority: int,
    canonical_value: str | None,
) -> ParticipantAlias | None:
    # Cached: aliases are immutable values, and every turn builds the catalogues of the same members.
    trimmed = (value or "").strip()
    normalized = normalize_alias(trimmed)
    if not trimmed or not normalized:
        return None
    return ParticipantAlias(owner, trimmed, normalized, source, purposes, exposure, priority, canonical_value)


@dataclass
class ParticipantSeed:
    """D-34."""

    key: ParticipantKey
    reasons: set[str] = field(default_factory=set)
    aliases: list[ParticipantAlias] = field(default_factory=list)
    capabilities: set[str] = field(default_factory=set)
    first_seen_order: int = 0
    source_display_name: str | None = None


@dataclass
class ParticipantDiscoveryPlan:
    seeds: list[ParticipantSeed] = field(default_factory=list)
    evidence: list[tuple[ParticipantKey, str, int]] = field(default_factory=list)  # (key, source, order)
    rejections: dict[str, int] = field(default_factory=lambda: dict.fromkeys(REJECTION_REASONS, 0))
    alias_reference_diagnostics: dict[str, int] = field(
        default_factory=lambda: {"evaluated": 0, "accepted": 0, "ambiguous": 0, "unmatched": 0}
    )


@dataclass(frozen=True)
class PublicPersonaProfile:
    """D-13."""

    persona_id: int
    persona_name: str
    attributes: tuple[str, ...]
    image_appearance_tags: tuple[str, ...]


SyntheticUser = dict[str, str]  # U-4: {"display_name": label, "type": "persona" | "webhook"}


@dataclass
class PreparationInput:
    """§1.1: everything discovery reads. Deep-copied before use (C-02); no routing state (D-35)."""

    guild_id: str
    simplified_history: list[SimplifiedMessage] = field(default_factory=list)
    personas: list[PersonaInfo] = field(default_factory=list)
    active_persona: PersonaInfo | None = None
    visible_user_ids: list[str] = field(default_factory=list)
    synthetic_users: dict[str, SyntheticUser] = field(default_factory=dict)
    matrix_users: dict[str, str] = field(default_factory=dict)
    responder_persona_ids: list[int] = field(default_factory=list)
    server_id: int | None = None  # database id of the server, for the D-16 candidate read
    bot_user_id: str | None = None
    is_user_impersonation: bool = False


@dataclass
class PreparedParticipantContext:
    """D-37: the only participant input of context building."""

    discovery_plan: ParticipantDiscoveryPlan
    matrix_users: dict[str, str]
    synthetic_users: dict[str, dict[str, str]]
    public_persona_profiles: list[PublicPersonaProfile]
    referenced_user_rows: dict[str, Any]  # snowflake → chatcontext.core.types.UserRow
    referenced_user_ids: list[str]
    diagnostics: dict[str, Any]


@dataclass(frozen=True)
class ActivePersonaScope:
    """H-01."""

    persona_id: int | None
    lineage_id: int | None
    is_main_persona: bool
    is_user_impersonation: bool = False
    impersonated_user_id: str | None = None


HiddenReason = Literal[
    "visible", "privacy", "blacklist", "personalization_disabled", "impersonation", "missing_data", "optional_failure"
]


@dataclass(frozen=True)
class ParticipantProfileField:
    """H-11. A field with lines is visible; otherwise ``reason`` says why it is hidden."""

    owner: ParticipantKey
    kind: str
    order: int
    visible: bool
    reason: HiddenReason
    lines: tuple[str, ...] = ()


@dataclass
class HydratedParticipantProfile:
    """H-22."""

    key: ParticipantKey
    reasons: set[str]
    display_name: str
    aliases: list[ParticipantAlias]
    primary_alias: str | None
    mentionable: bool
    is_bot: bool
    resolvable_target_id: str | None
    fields: list[ParticipantProfileField] = field(default_factory=list)
    # Values the pure renderer needs that are not text of the profile block.
    timezone_offset: float | None = None
