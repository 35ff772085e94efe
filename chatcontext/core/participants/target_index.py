"""Participant target index, `conversation_users` and tool-argument resolution (participants.md X-01..X-08).

The index travels as JSON on the profile context item (``ContextItem.participant_target_index``), so
it survives item moves and merges (R-19); ``ParticipantTargetIndex.from_json`` restores the typed form
for tools. Everything here is pure except ``resolve_user_argument``'s injected member lookup.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Any, Literal

from chatcontext.core.participants.aliases import aliases_for_purpose, collision_index, persona_aliases
from chatcontext.core.participants.model import (
    HydratedParticipantProfile,
    ParticipantAlias,
    ParticipantKey,
    Purpose,
    normalize_alias,
)
from chatcontext.core.types import ContextItem, ContextItemTag, MemberInfo, PersonaInfo

JSONDict = dict[str, Any]


@dataclass(frozen=True)
class ParticipantTarget:
    """X-01: one target per final profile."""

    key: ParticipantKey
    display_label: str
    primary_alias: str | None
    target_id: str | None
    mentionable: bool
    in_participant_context: bool
    aliases: tuple[ParticipantAlias, ...]

    @property
    def serialized_key(self) -> str:
        return self.key.serialized

    def aliases_for(self, purpose: Purpose) -> list[ParticipantAlias]:
        """X-02: the D-08 purpose view of this target's aliases."""
        return aliases_for_purpose(self.aliases, purpose)


@dataclass(frozen=True)
class ParticipantTargetIndex:
    """X-01: ``targets`` in profile order; ``persona_catalog_complete`` when the X-05 catalogue was merged."""

    targets: tuple[ParticipantTarget, ...] = ()
    persona_catalog_complete: bool = False

    def to_json(self) -> JSONDict:
        return {
            "targets": [_target_json(t) for t in self.targets],
            "persona_catalog_complete": self.persona_catalog_complete,
        }

    @classmethod
    def from_json(cls, data: JSONDict | None) -> ParticipantTargetIndex:
        if not data:
            return cls()
        return cls(
            tuple(_target_from_json(t) for t in data.get("targets", ())),
            bool(data.get("persona_catalog_complete", False)),
        )


class TargetIndexCodec:
    """JSON and typed forms of the target indexes of one turn's items.

    The index travels on items as JSON (R-19), so every stage that merges indexes (the persona
    catalogue, X-06 at the end of the turn) re-parsed what an earlier stage of the same turn had just
    serialized: a tenth of the stage at 200 participants (issue 9). The codec remembers, by identity,
    the typed index behind each JSON form it produced and the JSON of each target it serialized, so
    an unchanged target is serialized once per turn; JSON it did not produce is parsed as usual. The
    JSON it returns is shared between items and must be treated as read-only.
    """

    def __init__(self) -> None:
        # Values hold the keyed object itself, so an id cannot be reused while it is remembered.
        self._indexes: dict[int, tuple[JSONDict, ParticipantTargetIndex]] = {}
        self._targets: dict[int, tuple[ParticipantTarget, JSONDict]] = {}

    def to_json(self, index: ParticipantTargetIndex) -> JSONDict:
        data = {
            "targets": [self._target_json(t) for t in index.targets],
            "persona_catalog_complete": index.persona_catalog_complete,
        }
        self._indexes[id(data)] = (data, index)
        return data

    def from_json(self, data: JSONDict | None) -> ParticipantTargetIndex:
        known = self._indexes.get(id(data)) if data else None
        if known is not None and known[0] is data:
            return known[1]
        return ParticipantTargetIndex.from_json(data)

    def _target_json(self, target: ParticipantTarget) -> JSONDict:
        known = self._targets.get(id(target))
        if known is None or known[0] is not target:
            known = (target, _target_json(target))
            self._targets[id(target)] = known
        return known[1]


def _alias_json(alias: ParticipantAlias) -> JSONDict:
    return {
        "owner": alias.owner.serialized,
        "value": alias.value,
        "normalized": alias.normalized,
        "source": alias.source,
        "purposes": list(_sorted_purposes(alias.purposes)),
        "exposure": alias.exposure,
        "priority": alias.priority,
        "canonical_value": alias.canonical_value,
    }


@functools.lru_cache(maxsize=64)
def _sorted_purposes(purposes: frozenset[Purpose]) -> tuple[Purpose, ...]:
    return tuple(sorted(purposes))


# Cached (keys are immutable): an index is re-read from JSON on every turn.
@functools.lru_cache(maxsize=16384)
def _parse_key(serialized: str) -> ParticipantKey:
    kind, _, ident = serialized.partition(":")
    return ParticipantKey(kind, ident)  # type: ignore[arg-type]


def _alias_from_json(data: JSONDict) -> ParticipantAlias:
    return ParticipantAlias(
        owner=_parse_key(data["owner"]),
        value=data["value"],
        normalized=data["normalized"],
        source=data["source"],
        purposes=frozenset(data["purposes"]),
        exposure=data["exposure"],
        priority=int(data["priority"]),
        canonical_value=data.get("canonical_value"),
    )


def _target_json(target: ParticipantTarget) -> JSONDict:
    return {
        "key": {"kind": target.key.kind, "id": target.key.id},
        "serialized_key": target.serialized_key,
        "display_label": target.display_label,
        "primary_alias": target.primary_alias,
        "target_id": target.target_id,
        "mentionable": target.mentionable,
        "in_participant_context": target.in_participant_context,
        "aliases": [_alias_json(a) for a in target.aliases],
    }


def _target_from_json(data: JSONDict) -> ParticipantTarget:
    return ParticipantTarget(
        key=_parse_key(data["serialized_key"]),
        display_label=data["display_label"],
        primary_alias=data.get("primary_alias"),
        target_id=data.get("target_id"),
        mentionable=bool(data.get("mentionable", False)),
        in_participant_context=bool(data.get("in_participant_context", False)),
        aliases=tuple(_alias_from_json(a) for a in data.get("aliases", ())),
    )


def _index_aliases(aliases: Iterable[ParticipantAlias]) -> tuple[ParticipantAlias, ...]:
    """Aliases the index carries: those with a purpose beyond `input_reference`.

    Input-only aliases serve discovery and no X-02 view reads them; leaving them out keeps a hidden
    saved nickname (P-02: lookup-only for FULL or blacklisted users) inside hydration, so it never
    travels with the item to tools, prompt records or API responses.
    """
    return tuple(a for a in aliases if a.purposes - {"input_reference"})


def build_target_index(profiles: Sequence[HydratedParticipantProfile]) -> ParticipantTargetIndex:
    """X-01: one target per final profile, in profile order."""
    return ParticipantTargetIndex(
        tuple(
            ParticipantTarget(
                key=p.key,
                display_label=p.display_name,
                primary_alias=p.primary_alias,
                target_id=p.resolvable_target_id,
                mentionable=p.mentionable,
                in_participant_context=True,
                aliases=_index_aliases(p.aliases),
            )
            for p in profiles
        )
    )


def conversation_users(index: ParticipantTargetIndex) -> list[JSONDict]:
    """X-03 compatibility projection: in-context targets with a target id and ≥1 `tool_target` alias."""
    users: list[JSONDict] = []
    for target in index.targets:
        tool_aliases = target.aliases_for("tool_target")
        if target.in_participant_context and target.target_id and tool_aliases:
            users.append(
                {
                    "target_id": target.target_id,
                    "display_label": target.display_label,
                    "aliases": [a.value for a in tool_aliases],
                    "mentionable": target.mentionable,
                }
            )
    return users


def _merge_targets(earlier: ParticipantTarget, later: ParticipantTarget) -> ParticipantTarget:
    seen = {(a.normalized, tuple(sorted(a.purposes))) for a in earlier.aliases}
    aliases = list(earlier.aliases)
    for alias in later.aliases:
        signature = (alias.normalized, tuple(sorted(alias.purposes)))
        if signature not in seen:
            seen.add(signature)
            aliases.append(alias)
    return replace(
        later,
        display_label=later.display_label or earlier.display_label,
        primary_alias=later.primary_alias if later.primary_alias is not None else earlier.primary_alias,
        target_id=later.target_id if later.target_id is not None else earlier.target_id,
        in_participant_context=earlier.in_participant_context or later.in_participant_context,
        aliases=tuple(aliases),
    )


def merge_target_indexes(indexes: Iterable[ParticipantTargetIndex]) -> ParticipantTargetIndex:
    """X-04: merge by serialized key keeping first-seen order; later fields override (absent values
    do not erase earlier ones), `target_id` falls back to the earlier one, `in_participant_context`
    is OR-ed, aliases are unioned by `(normalized, sorted purposes)`."""
    merged: dict[str, ParticipantTarget] = {}
    complete = False
    for index in indexes:
        complete = complete or index.persona_catalog_complete
        for target in index.targets:
            current = merged.get(target.serialized_key)
            merged[target.serialized_key] = target if current is None else _merge_targets(current, target)
    return ParticipantTargetIndex(tuple(merged.values()), complete)


@dataclass(frozen=True)
class PersonaMentionCatalogue:
    """X-05: every persona as an out-of-context target, plus normalized alias → canonical trigger."""

    index: ParticipantTargetIndex
    mention_map: dict[str, str]


def persona_mention_catalogue(personas: Iterable[PersonaInfo]) -> PersonaMentionCatalogue:
    """X-05: full persona alias catalogues; the map keeps output aliases claimed by exactly one persona."""
    targets: list[ParticipantTarget] = []
    for persona in personas:
        if persona.persona_id is None:
            continue
        targets.append(
            ParticipantTarget(
                key=ParticipantKey.persona(persona.persona_id),
                display_label=persona.persona_nickname,
                primary_alias=None,
                target_id=None,
                mentionable=False,
                in_participant_context=False,
                aliases=tuple(persona_aliases(persona)),
            )
        )
    all_aliases = [a for t in targets for a in t.aliases]
    claims = collision_index(all_aliases, "output_mention")
    mention_map: dict[str, str] = {}
    for alias in aliases_for_purpose(all_aliases, "output_mention"):
        if len(claims.get(alias.normalized, ())) == 1 and alias.canonical_value and alias.normalized not in mention_map:
            mention_map[alias.normalized] = alias.canonical_value
    return PersonaMentionCatalogue(ParticipantTargetIndex(tuple(targets), True), mention_map)


def collect_target_index(
    items: Iterable[ContextItem], codec: TargetIndexCodec | None = None
) -> tuple[ParticipantTargetIndex, list[JSONDict]]:
    """X-06: merge the indexes of all items; `conversation_users` of profile items is the fallback
    the tools use when the merged index has no targets."""
    materialized = list(items)
    codec = codec or TargetIndexCodec()
    index = merge_target_indexes(
        codec.from_json(item.participant_target_index) for item in materialized if item.participant_target_index
    )
    fallback = [
        user
        for item in materialized
        if item.metadata_tag == ContextItemTag.KNOWLEDGE_USERS_IN_CONVERSATION and item.conversation_users
        for user in item.conversation_users
    ]
    return index, fallback


@dataclass(frozen=True)
class TurnTargets:
    """X-06 for one turn, computed once (``collect_target_index`` over the turn's final items): the
    merged index, and the profile items' `conversation_users`, which the tools fall back on when
    the index has no targets."""

    index: ParticipantTargetIndex
    fallback_users: tuple[JSONDict, ...] = ()

    def references(self) -> list[TargetReference]:
        """The references X-07 resolves a tool's user argument against."""
        if self.index.targets:
            return references_from_index(self.index)
        return references_from_conversation_users(self.fallback_users)


def can_ping(target: ParticipantTarget) -> bool:
    """X-08: a Discord ping only for a mentionable target whose id is a snowflake."""
    return target.mentionable and is_snowflake(target.target_id)


def is_snowflake(value: str | None) -> bool:
    return value is not None and value.isascii() and value.isdigit() and 17 <= len(value) <= 20


def _is_bridge_id(value: str) -> bool:
    local, sep, host = value[1:].partition(":")
    return value.startswith("@") and bool(sep) and bool(local) and bool(host)


@dataclass(frozen=True)
class TargetReference:
    """A resolvable reference of X-07 (built from targets or from `conversation_users`)."""

    target_id: str
    display_label: str
    aliases: tuple[str, ...]
    mentionable: bool
    is_matrix: bool = False


def references_from_index(index: ParticipantTargetIndex) -> list[TargetReference]:
    return [
        TargetReference(
            target_id=t.target_id,
            display_label=t.display_label,
            aliases=tuple(a.value for a in t.aliases_for("tool_target")),
            mentionable=t.mentionable,
            is_matrix=t.key.kind == "matrix_user",
        )
        for t in index.targets
        if t.target_id
    ]


def references_from_conversation_users(users: Iterable[JSONDict]) -> list[TargetReference]:
    return [
        TargetReference(
            target_id=str(u["target_id"]),
            display_label=str(u.get("display_label", "")),
            aliases=tuple(str(a) for a in u.get("aliases", ())),
            mentionable=bool(u.get("mentionable", False)),
            is_matrix=_is_bridge_id(str(u["target_id"])),
        )
        for u in users
        if u.get("target_id")
    ]


ResolutionStatus = Literal["resolved", "ambiguous", "not_found", "continue"]


@dataclass(frozen=True)
class TargetResolution:
    """X-07 outcome. ``continue`` hands over to the tool layer's guild-wide stages."""

    status: ResolutionStatus
    target_id: str | None = None
    candidates: tuple[str, ...] = ()


def resolve_user_argument(
    value: str,
    references: Sequence[TargetReference],
    *,
    load_member: Callable[[str], MemberInfo | None] | None = None,
) -> TargetResolution:
    """X-07 conversation-stage resolution of a tool's user argument."""
    text = value.strip()
    if _is_bridge_id(text):
        match = next((r for r in references if r.target_id == text), None)
        if match is not None:
            return TargetResolution("resolved", match.target_id)
    if text.isascii() and text.isdigit():
        member = load_member(text) if load_member else None
        if member is not None and not member.is_bot:
            return TargetResolution("resolved", text)
        match = next((r for r in references if r.target_id == text), None)
        return TargetResolution("resolved", match.target_id) if match else TargetResolution("not_found")
    wanted = normalize_alias(text)
    selected = [r for r in references if wanted and any(normalize_alias(a) == wanted for a in r.aliases)]
    if not selected:
        return TargetResolution("continue")
    by_label = [r for r in selected if normalize_alias(r.display_label) == wanted]
    if len(by_label) == 1:
        return TargetResolution("resolved", by_label[0].target_id)
    if len(selected) == 1:
        return TargetResolution("resolved", selected[0].target_id)
    labels = tuple(r.display_label + (" (Matrix)" if r.is_matrix else "") for r in selected[:3])
    return TargetResolution("ambiguous", candidates=labels)
