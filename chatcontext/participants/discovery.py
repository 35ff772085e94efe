"""Shared reference discovery (participants.md D-10..D-24): independent of the active persona, so
one result serves every persona turn of a locked turn (§2).

I/O happens only through the two injected seams: the ``CandidateSource`` (one repository read,
D-16) and the ``MemberDirectory`` (targeted member lookups, D-18). Everything else is pure.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Protocol

import regex

from chatcontext.core.participants.aliases import UserNames, collision_index, persona_aliases, user_aliases
from chatcontext.core.participants.model import (
    REJECTION_REASONS,
    ParticipantAlias,
    ParticipantDiscoveryPlan,
    ParticipantKey,
    PreparationInput,
    PublicPersonaProfile,
)
from chatcontext.core.participants.triggers import WORD_CLASS, persona_triggered
from chatcontext.core.transport import ChatTransport
from chatcontext.core.types import MemberInfo, PersonaInfo, SimplifiedMessage, UserRow
from chatcontext.participants.candidates import CandidateQuery, CandidateRow, CandidateSource, is_eligible
from chatcontext.participants.sources import ParticipantCandidate, build_plan, synthetic_persona_ids

BLOCK_NOTICE_PREFIX = "synthetic-user-block-"
_REAL_MENTION = regex.compile(r"<@!?([0-9]+)>")


class MemberDirectory(Protocol):
    """The member reads discovery needs (D-15, D-16, D-18). ``ChatTransport`` satisfies it."""

    @property
    def guild_available(self) -> bool: ...

    def cached_member_ids(self) -> list[str]: ...

    def get_cached_member(self, user_id: str) -> MemberInfo | None: ...

    def fetch_member(self, user_id: str) -> MemberInfo | None: ...


def member_directory_for(transport: ChatTransport | None) -> MemberDirectory | None:
    """The transport as a member directory, or None when the guild is not available (DMs, uncached
    guilds): D-15 then yields persona candidates only."""
    if transport is None or not transport.guild_available:
        return None
    return transport


@dataclass
class ExternalCalls:
    """D-36 external-call counters of one discovery run (all zero on a cache hit, C-09)."""

    candidate_source_reads: int = 0
    member_cache_hits: int = 0
    member_fetches: int = 0

    def as_dict(self) -> dict[str, int]:
        return {
            "candidate_source_reads": self.candidate_source_reads,
            "member_cache_hits": self.member_cache_hits,
            "member_fetches": self.member_fetches,
        }


@dataclass(frozen=True)
class SharedDiscovery:
    """D-24 shared result. Cached per request scope and shared between threads: never mutate it;
    composition copies what it changes (D-26)."""

    reference_plan: ParticipantDiscoveryPlan
    referenced_user_rows: dict[str, UserRow]
    referenced_user_ids: tuple[str, ...]
    public_persona_profiles: tuple[PublicPersonaProfile, ...]
    persona_reasons: dict[int, frozenset[str]]
    candidate_count: int
    external_calls: ExternalCalls = field(default_factory=ExternalCalls)


def is_block_notice(entry: SimplifiedMessage) -> bool:
    """U-2: the notice that replaces a run of blocked messages."""
    return entry.id.startswith(BLOCK_NOTICE_PREFIX)


def scannable_entries(history: Sequence[SimplifiedMessage]) -> list[SimplifiedMessage]:
    """D-10/D-11: entries that are not block notices and have content."""
    return [entry for entry in history if not is_block_notice(entry) and entry.content]


def history_text(history: Sequence[SimplifiedMessage]) -> str:
    """D-10: the scanned text; blocked-author content and block notices are never part of it."""
    return "\n".join(entry.content or "" for entry in scannable_entries(history))


def real_mentions(text: str) -> dict[str, int]:
    """Real mention ids (`<@id>`, `<@!id>`) → position of their first occurrence."""
    found: dict[str, int] = {}
    for match in _REAL_MENTION.finditer(text):
        found.setdefault(match.group(1), match.start())
    return found


@lru_cache(maxsize=4096)
def _standalone_pattern(normalized: str) -> regex.Pattern[str]:
    body = r"\s+".join(regex.escape(token) for token in normalized.split(" "))
    return regex.compile(
        rf"(?:(?<![\p{{L}}\p{{N}}\p{{M}}_@])|(?<=(?<!{WORD_CLASS})@)){body}(?!{WORD_CLASS})", regex.IGNORECASE
    )


# The non-ASCII characters `regex`'s IGNORECASE (simple case folding) matches to an ASCII letter,
# mapped to that letter (tests/chatcontext/participants/test_discovery_prefilter.py checks every code point).
_ASCII_FOLDED = "\u0130\u0131\u017f\u212a"
_ASCII_FOLDS = str.maketrans(dict(zip(_ASCII_FOLDED, "iisk", strict=True)))
_WORD_RUN = regex.compile(rf"{WORD_CLASS}+")
_ASCII_WORD = regex.compile(r"[0-9A-Za-z_]+")


def fold_ascii(text: str) -> str:
    """Lower-cased, with every character the case-insensitive match pairs with an ASCII character
    replaced by that character (one character for one)."""
    if any(char in text for char in _ASCII_FOLDED):  # rare: the scans are cheaper than translating
        text = text.translate(_ASCII_FOLDS)
    return text.lower()


@dataclass(frozen=True)
class AliasPrefilter:
    """Necessary conditions for an ASCII alias to occur standalone in one text (D-20), so discovery
    runs the alias regex only for aliases that may occur. Every word of a match is a case-folded
    equal of a piece of the text; a word made only of word characters is moreover a whole run of
    word characters there (standalone boundaries and the whitespace between words are non-word)."""

    folded: str
    word_runs: frozenset[str]

    @classmethod
    def of(cls, text: str) -> AliasPrefilter:
        folded = fold_ascii(text)
        # Folding maps one character to one and keeps word characters word characters (tested over
        # every code point), so the runs of the folded text are the folded runs of the text.
        return cls(folded, frozenset(_WORD_RUN.findall(folded)))

    def may_occur(self, normalized: str) -> bool:
        if not normalized.isascii():
            return True
        for word in normalized.split(" "):
            found = word in self.word_runs if _ASCII_WORD.fullmatch(word) else word in self.folded
            if not found:
                return False
        return True


def standalone_position(normalized: str, text: str, *, prefilter: AliasPrefilter | None = None) -> int | None:
    """D-20: position of the first *standalone* occurrence of a normalized alias, or None.

    Case-insensitive; each internal space matches any whitespace run; not followed by a word
    character; preceded either by an `@` that is itself not preceded by a word character, or by
    neither a word character nor `@` (start of text counts as not preceded).

    ``prefilter`` (``AliasPrefilter.of(text)``) gives the same answer without a regex search over
    the whole history (discovery evaluates every eligible member's aliases): an alias that cannot
    occur is not searched at all, and an ASCII one is tried only where its first word is.
    """
    if prefilter is not None and not prefilter.may_occur(normalized):
        return None
    pattern = _standalone_pattern(normalized)
    if prefilter is None or not normalized.isascii():
        match = pattern.search(text)
        return match.start() if match else None
    # A match of an ASCII alias starts where the folded text (one character for one) holds its first
    # word, so the pattern is tried only there, in order, instead of searched for over the whole text.
    first = normalized.split(" ", 1)[0]
    start = prefilter.folded.find(first)
    while start != -1:
        if pattern.match(text, start):
            return start
        start = prefilter.folded.find(first, start + 1)
    return None


def public_persona_profile(persona: PersonaInfo) -> PublicPersonaProfile | None:
    """D-13: public attribute texts (order kept) and trimmed appearance tags; nothing → None.
    Blank attribute texts are left out: they could never render (H-19) yet would keep the seed."""
    if persona.persona_id is None:
        return None
    attributes = tuple(a.text for a in persona.attributes if a.is_public and a.text.strip())
    tags = tuple(t.strip() for t in persona.physical_appearance_tags if str(t).strip())
    if not attributes and not tags:
        return None
    return PublicPersonaProfile(persona.persona_id, persona.persona_nickname, attributes, tags)


def persona_reasons(inp: PreparationInput) -> dict[int, set[str]]:
    """D-11/D-13: trigger references over each scannable entry, historical personas, co-responders.
    The active persona is not excluded here (D-25/D-26 do it)."""
    reasons: dict[int, set[str]] = {}
    entries = scannable_entries(inp.simplified_history)
    historical = synthetic_persona_ids(inp.synthetic_users)
    responders = set(inp.responder_persona_ids)
    for persona in inp.personas:
        pid = persona.persona_id
        if pid is None:
            continue
        found: set[str] = set()
        if any(persona_triggered(persona, entry.content or "") for entry in entries):
            found.add("persona_trigger_reference")
        if pid in historical:
            found.add("historical_persona")
        if pid in responders:
            found.add("co_responder")
        if found:
            reasons[pid] = found
    return reasons


def _reference_aliases(row: UserRow, member: MemberInfo) -> list[ParticipantAlias]:
    """D-19: the reference catalogue, saved nickname lookup-only."""
    return user_aliases(
        ParticipantKey.discord_user(row.user_disc_id),
        UserNames(
            saved_nickname=row.user_nickname,
            guild_display_name=member.display_name,
            guild_nickname=member.nickname,
            global_name=member.global_name or row.global_name,
            username=member.username or row.username,
            discord_id=row.user_disc_id,
        ),
        expose_saved_nickname=False,
    )


def _snowflake_order(user_id: str) -> tuple[int, str]:
    return (int(user_id), user_id) if user_id.isdigit() else (-1, user_id)


def discover_shared_references(
    inp: PreparationInput,
    *,
    candidate_source: CandidateSource,
    member_directory: MemberDirectory | None,
    now_ms: int,
) -> SharedDiscovery:
    """D-10..D-24 over an already frozen input (C-02)."""
    calls = ExternalCalls()
    rejections = dict.fromkeys(REJECTION_REASONS, 0)
    alias_stats = {"evaluated": 0, "accepted": 0, "ambiguous": 0, "unmatched": 0}

    reasons = persona_reasons(inp)
    profiles = tuple(
        profile
        for persona in inp.personas
        if persona.persona_id in reasons and (profile := public_persona_profile(persona)) is not None
    )
    persona_candidates = [
        ParticipantCandidate(
            ParticipantKey.persona(persona.persona_id),
            set(reasons[persona.persona_id]),
            persona_aliases(persona),
            persona.persona_nickname or None,
        )
        for persona in inp.personas
        if persona.persona_id is not None and persona.persona_id in reasons
    ]

    def finish(user_candidates: list[ParticipantCandidate], rows: dict[str, UserRow], loaded: int) -> SharedDiscovery:
        plan = build_plan([*user_candidates, *persona_candidates], rejections=rejections, alias_diagnostics=alias_stats)
        return SharedDiscovery(
            reference_plan=plan,
            referenced_user_rows=rows,
            referenced_user_ids=tuple(c.key.id for c in user_candidates),
            public_persona_profiles=profiles,
            persona_reasons={pid: frozenset(r) for pid, r in reasons.items()},
            candidate_count=len(persona_candidates) + loaded,
            external_calls=calls,
        )

    # D-15
    rejections["blocked_source"] += sum(1 for entry in inp.simplified_history if is_block_notice(entry))
    text = history_text(inp.simplified_history)
    if member_directory is None or not member_directory.guild_available or not text:
        if text:
            rejections["missing_guild"] += 1
        return finish([], {}, 0)

    # D-16
    mentions = real_mentions(text)
    candidate_ids = tuple(dict.fromkeys([*mentions, *member_directory.cached_member_ids()]))
    calls.candidate_source_reads += 1
    loaded_rows: list[CandidateRow] = candidate_source(CandidateQuery(inp.server_id, candidate_ids, text, now_ms))

    # D-17
    eligible: dict[str, UserRow] = {}
    for candidate in loaded_rows:
        if is_eligible(candidate):
            eligible.setdefault(candidate.row.user_disc_id, candidate.row)
        else:
            rejections["ineligible_state"] += 1

    # D-18 / D-19: one targeted lookup per eligible row, never the full member list.
    members: dict[str, MemberInfo] = {}
    catalogue: list[ParticipantAlias] = []
    for user_id in sorted(eligible, key=_snowflake_order):
        member = member_directory.get_cached_member(user_id)
        if member is not None:
            calls.member_cache_hits += 1
        else:
            calls.member_fetches += 1
            member = member_directory.fetch_member(user_id)
        if member is None:
            rejections["non_member"] += 1
        elif member.is_bot:
            rejections["bot"] += 1
        else:
            members[user_id] = member
            catalogue.extend(_reference_aliases(eligible[user_id], member))

    # D-20: earliest accepted evidence position per referenced user, with its reasons.
    referenced: dict[str, tuple[int, set[str]]] = {}

    def reference(user_id: str, reason: str, position: int) -> None:
        earliest, found = referenced.get(user_id, (position, set()))
        found.add(reason)
        referenced[user_id] = (min(earliest, position), found)

    prefilter = AliasPrefilter.of(text)
    for normalized, owners in collision_index(catalogue, "input_reference").items():
        alias_stats["evaluated"] += 1
        position = standalone_position(normalized, text, prefilter=prefilter)
        if position is None:
            alias_stats["unmatched"] += 1
        elif len(owners) > 1:
            alias_stats["ambiguous"] += 1
            rejections["ambiguous_alias"] += 1
        else:
            alias_stats["accepted"] += 1
            reference(owners[0].id, "unique_text_alias", position)

    # D-21
    for user_id, position in mentions.items():
        if user_id in members:
            reference(user_id, "real_mention", position)

    # D-22
    for user_id in dict.fromkeys(str(v).strip() for v in inp.visible_user_ids):
        if referenced.pop(user_id, None) is not None:
            rejections["existing_participant"] += 1

    # D-23 [DES]: earliest evidence position, ties by snowflake — database row order is not stable.
    ordered = sorted(referenced, key=lambda uid: (referenced[uid][0], _snowflake_order(uid)))
    user_candidates = [
        ParticipantCandidate(
            ParticipantKey.discord_user(user_id),
            set(referenced[user_id][1]),
            _reference_aliases(eligible[user_id], members[user_id]),
            (eligible[user_id].user_nickname or "").strip() or None,
            capabilities={"mentionable"},
        )
        for user_id in ordered
    ]
    return finish(user_candidates, {uid: eligible[uid] for uid in ordered}, len(loaded_rows))
