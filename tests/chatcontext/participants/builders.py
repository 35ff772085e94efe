"""Fixture builders of the participants.md §8 world, shared by the participant tests.

Common fixture: guild ``G``, bot user ``B``, channel ``#general``; personas Tomori (1, main),
Lilya (2, alter), Ren (3, alter, public attribute "Loves tea", appearance "red hair"); users Alice
``A`` (saved nickname "Ally", server nick "alice_srv", global "Alice", username "alice01"), Bob ``BO``
(global "Bob", username "bob"), Erin ``E`` (username "erin"). Pure value builders plus small test
doubles (member directory, candidate source) and optional database rows.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import date

from chatcontext.core.participants.model import PreparationInput
from chatcontext.core.types import MemberInfo, PersonaAttributeInfo, PersonaInfo, SimplifiedMessage, UserRow
from chatcontext.participants.candidates import CandidateEvidence, CandidateQuery, CandidateRow

G = "100000000000000001"
B = "200000000000000001"
CHANNEL = "300000000000000001"
A = "400000000000000001"
BO = "400000000000000002"
E = "400000000000000003"
D = "400000000000000004"  # Dave: a default row, ineligible
F = "400000000000000005"  # Frank (T-61)
NOW_MS = 1_779_355_800_000  # 2026-05-21T09:30:00Z

ACTIVE = CandidateEvidence(has_server_activity=True)
NO_EVIDENCE = CandidateEvidence()


# --- personas ---------------------------------------------------------------------------------


def tomori(**changes: object) -> PersonaInfo:
    base = PersonaInfo(1, "Tomori", 10001, is_alter=False, trigger_words=("tomori",))
    return replace(base, **changes)  # type: ignore[arg-type]


def lilya(*, public_attribute: str | None = None, **changes: object) -> PersonaInfo:
    attributes = (PersonaAttributeInfo(public_attribute, True),) if public_attribute else ()
    base = PersonaInfo(2, "Lilya", 10002, is_alter=True, trigger_words=("lilya", "lil"), attributes=attributes)
    return replace(base, **changes)  # type: ignore[arg-type]


def ren(**changes: object) -> PersonaInfo:
    base = PersonaInfo(
        3,
        "Ren",
        10003,
        is_alter=True,
        trigger_words=("ren",),
        attributes=(PersonaAttributeInfo("Loves tea", True), PersonaAttributeInfo("Secret", False)),
        physical_appearance_tags=("red hair",),
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def personas() -> list[PersonaInfo]:
    return [tomori(), lilya(), ren()]


# --- users, members --------------------------------------------------------------------------


def alice_row(**changes: object) -> UserRow:
    base = UserRow(1, A, username="alice01", global_name="Alice", user_nickname="Ally")
    return replace(base, **changes)  # type: ignore[arg-type]


def bob_row(**changes: object) -> UserRow:
    return replace(UserRow(2, BO, username="bob", global_name="Bob"), **changes)  # type: ignore[arg-type]


def erin_row(**changes: object) -> UserRow:
    return replace(UserRow(3, E, username="erin"), **changes)  # type: ignore[arg-type]


def alice_member(**changes: object) -> MemberInfo:
    base = MemberInfo(A, username="alice01", global_name="Alice", nickname="alice_srv", display_name="alice_srv")
    return replace(base, **changes)  # type: ignore[arg-type]


def bob_member(**changes: object) -> MemberInfo:
    return replace(MemberInfo(BO, username="bob", global_name="Bob", display_name="Bob"), **changes)  # type: ignore[arg-type]


def erin_member(**changes: object) -> MemberInfo:
    return replace(MemberInfo(E, username="erin", display_name="erin"), **changes)  # type: ignore[arg-type]


def bot_member() -> MemberInfo:
    return MemberInfo(B, username="tomori-bot", display_name="Tomori", is_bot=True)


def world_rows() -> list[CandidateRow]:
    """Alice, Bob and Erin: all eligible through server activity (§8)."""
    return [CandidateRow(alice_row(), ACTIVE), CandidateRow(bob_row(), ACTIVE), CandidateRow(erin_row(), ACTIVE)]


def world_members() -> list[MemberInfo]:
    return [alice_member(), bob_member(), erin_member(), bot_member()]


# --- history ------------------------------------------------------------------------------------


def msg(
    message_id: str,
    author_id: str,
    content: str | None,
    *,
    author_name: str = "someone",
    author_type: str = "user",
) -> SimplifiedMessage:
    return SimplifiedMessage(
        id=message_id,
        author_id=author_id,
        author_name=author_name,
        author_type=author_type,  # type: ignore[arg-type]
        content=content,
    )


def block_notice(
    original_id: str, author_id: str, content: str = "[System: a blocked user wrote here]"
) -> SimplifiedMessage:
    """U-2: the notice entry replacing a run of blocked messages."""
    return msg(f"synthetic-user-block-{original_id}", author_id, content)


def visible_ids(history: Iterable[SimplifiedMessage], *, bot_id: str | None = B) -> list[str]:
    """U-5: first-appearance author ids without block notices, then the bot id."""
    ids = [m.author_id for m in history if not m.id.startswith("synthetic-user-block-")]
    ordered = list(dict.fromkeys(ids))
    if bot_id is not None and bot_id not in ordered:
        ordered.append(bot_id)
    return ordered


def preparation_input(
    history: list[SimplifiedMessage],
    *,
    active: PersonaInfo | None = None,
    persona_list: list[PersonaInfo] | None = None,
    synthetic_users: dict[str, dict[str, str]] | None = None,
    matrix_users: dict[str, str] | None = None,
    responders: list[int] | None = None,
    visible: list[str] | None = None,
    server_id: int | None = 1,
    is_user_impersonation: bool = False,
) -> PreparationInput:
    return PreparationInput(
        guild_id=G,
        simplified_history=history,
        personas=persona_list if persona_list is not None else personas(),
        active_persona=active if active is not None else tomori(),
        visible_user_ids=visible if visible is not None else visible_ids(history),
        synthetic_users=synthetic_users or {},
        matrix_users=matrix_users or {},
        responder_persona_ids=responders if responders is not None else [1],
        server_id=server_id,
        bot_user_id=B,
        is_user_impersonation=is_user_impersonation,
    )


# --- test doubles ------------------------------------------------------------------------------


@dataclass
class FakeMemberDirectory:
    """A guild: ``cached`` members answer without I/O, ``fetchable`` ones only by targeted fetch."""

    cached: dict[str, MemberInfo] = field(default_factory=dict)
    fetchable: dict[str, MemberInfo] = field(default_factory=dict)
    guild_available: bool = True
    cache_lookups: list[str] = field(default_factory=list)
    fetches: list[str] = field(default_factory=list)
    full_list_requests: int = 0

    @classmethod
    def of(cls, members: Iterable[MemberInfo], *, cached: bool = True) -> FakeMemberDirectory:
        by_id = {m.user_disc_id: m for m in members}
        return cls(cached=by_id) if cached else cls(fetchable=by_id)

    def cached_member_ids(self) -> list[str]:
        return list(self.cached)

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        self.cache_lookups.append(user_id)
        return self.cached.get(user_id)

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        self.fetches.append(user_id)
        return self.fetchable.get(user_id)

    def fetch_members(self) -> list[MemberInfo]:
        """Present so a regression that lists the whole guild would be counted (D-18 forbids it)."""
        self.full_list_requests += 1
        return [*self.cached.values(), *self.fetchable.values()]


def _normalized_text(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass
class FakeCandidateSource:
    """D-16 semantics over in-memory rows; counts reads, can fail, can block until released."""

    rows: list[CandidateRow] = field(default_factory=list)
    fail_times: int = 0
    gate: threading.Event | None = None
    started: threading.Event = field(default_factory=threading.Event)
    queries: list[CandidateQuery] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def reads(self) -> int:
        return len(self.queries)

    def __call__(self, query: CandidateQuery) -> list[CandidateRow]:
        with self._lock:
            self.queries.append(query)
            fail = self.fail_times > 0
            if fail:
                self.fail_times -= 1
        self.started.set()
        if self.gate is not None:
            assert self.gate.wait(timeout=10), "the test never released the candidate source"
        if fail:
            raise RuntimeError("candidate source unavailable")
        haystack = _normalized_text(query.history_text)
        wanted = set(query.candidate_ids)
        out = []
        for candidate in self.rows:
            nick = _normalized_text((candidate.row.user_nickname or "").lstrip("@"))
            if (
                candidate.row.user_disc_id in wanted
                or candidate.evidence.has_server_activity
                or (nick and nick in haystack)
            ):
                out.append(candidate)
        return out


# --- database rows (for the repository read) -------------------------------------------------


def db_server(disc_id: str = G):  # type: ignore[no-untyped-def]
    from personas import models as m

    server = m.Server.objects.create(server_disc_id=disc_id, name="Guild")
    m.ServerSettings.objects.get_or_create(server=server)
    return server


def db_user(disc_id: str, **fields: object):  # type: ignore[no-untyped-def]
    from personas import models as m

    return m.DiscordUser.objects.create(user_disc_id=disc_id, **fields)


def db_activity(server, user, *, metric: str = "message_sent", count: int = 1):  # type: ignore[no-untyped-def]
    from personas import models as m

    return m.StatCounter.objects.create(server=server, user=user, metric=metric, bucket=date(2026, 5, 1), count=count)
