"""``prepare_participant_context``: output shape and diagnostics (participants.md D-36, D-37;
build-context.md BC10-04) and the transport adapter of the member directory."""

from __future__ import annotations

import itertools
import json

from chatcontext.core.participants.model import ParticipantKey
from chatcontext.core.types import MemberInfo, UserRow
from chatcontext.participants.candidates import CandidateRow
from chatcontext.participants.discovery import member_directory_for
from chatcontext.participants.prepare import prepare_participant_context
from chatcontext.participants.scope import ParticipantRequestScope
from chatcontext.participants.sources import ParticipantCandidate, SourceRegistration, build_source_registry
from tests.chatcontext.participants.builders import (
    ACTIVE,
    BO,
    NOW_MS,
    A,
    B,
    D,
    E,
    FakeCandidateSource,
    FakeMemberDirectory,
    block_notice,
    lilya,
    msg,
    preparation_input,
    world_members,
    world_rows,
)

# D-34: the rejection reasons, written out (not imported) so a renamed or dropped reason fails here;
# D-36: the diagnostics count every one, present even at zero, in this order.
SPEC_REJECTION_REASONS = [
    "ineligible_state",
    "bot",
    "non_member",
    "ambiguous_alias",
    "existing_participant",
    "blocked_source",
    "missing_guild",
]


class FakeTransport:
    """The member part of ``ChatTransport`` (the rest of the protocol is irrelevant here)."""

    def __init__(self, available: bool) -> None:
        self.guild_available = available
        self.directory = FakeMemberDirectory.of(world_members())

    def cached_member_ids(self) -> list[str]:
        return self.directory.cached_member_ids()

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        return self.directory.get_cached_member(user_id)

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        return self.directory.fetch_member(user_id)


def test_d15_member_directory_adapter_over_a_transport():
    available = FakeTransport(True)
    assert member_directory_for(available) is available  # type: ignore[arg-type]
    assert member_directory_for(FakeTransport(False)) is None  # type: ignore[arg-type]
    assert member_directory_for(None) is None
    prepared = prepare_participant_context(
        preparation_input([msg("1", A, f"<@{E}>")]),
        candidate_source=FakeCandidateSource(world_rows()),
        member_directory=member_directory_for(available),  # type: ignore[arg-type]
        now_ms=NOW_MS,
    )
    assert prepared.referenced_user_ids == [E]
    assert available.directory.cache_lookups  # lookups went through the transport


def test_d36_d37_prepared_context_shape_and_diagnostics_on_a_miss():
    history = [msg("1", A, f"<@{E}> <@{D}> alice_srv"), block_notice("2", BO), msg("3", A, "lilya")]
    prepared = prepare_participant_context(
        preparation_input(
            history,
            synthetic_users={"900": {"display_name": "Weather", "type": "webhook"}},
            matrix_users={"@m:host": "m"},
            persona_list=[lilya(public_attribute="Sings")],
            responders=[],
            visible=[A, B],
        ),
        candidate_source=FakeCandidateSource(world_rows()),
        member_directory=FakeMemberDirectory.of(world_members()),
        now_ms=NOW_MS,
    )
    diagnostics = prepared.diagnostics
    assert set(diagnostics) == {
        "discovery_cache_hit",
        "discovery_duration_ms",
        "candidate_count",
        "included_count",
        "rejection_counts",
        "alias_reference_diagnostics",
        "external_calls",
        "sources",
    }
    assert diagnostics["discovery_cache_hit"] is False
    assert list(diagnostics["rejection_counts"]) == SPEC_REJECTION_REASONS
    assert diagnostics["rejection_counts"]["blocked_source"] == 1
    assert diagnostics["rejection_counts"]["existing_participant"] == 1  # Alice wrote and is named
    assert diagnostics["included_count"] == len(prepared.discovery_plan.seeds) == 6
    assert diagnostics["candidate_count"] == 1 + 3  # Lilya + the three world rows
    assert diagnostics["external_calls"] == {"candidate_source_reads": 1, "member_cache_hits": 3, "member_fetches": 0}
    assert diagnostics["sources"] == {
        "core.visible": {"outcome": "ok", "contributed": 2},
        "core.synthetic": {"outcome": "ok", "contributed": 1},
        "core.referenced-users": {"outcome": "ok", "contributed": 1},
        "core.matrix": {"outcome": "ok", "contributed": 1},
        "core.referenced-personas": {"outcome": "ok", "contributed": 1},
    }
    assert prepared.matrix_users == {"@m:host": "m"}
    assert prepared.synthetic_users == {"900": {"display_name": "Weather", "type": "webhook"}}
    assert [p.persona_id for p in prepared.public_persona_profiles] == [2]
    assert prepared.referenced_user_ids == [E]
    assert set(prepared.referenced_user_rows) == {E}


def test_c09_hit_duration_is_the_time_spent_waiting():
    ticks = itertools.count(0.0, 0.004)  # every clock read advances 4 ms
    scope = ParticipantRequestScope()

    def call():  # type: ignore[no-untyped-def]
        return prepare_participant_context(
            preparation_input([msg("1", A, "hi")]),
            request_scope=scope,
            candidate_source=FakeCandidateSource(world_rows()),
            member_directory=FakeMemberDirectory.of(world_members()),
            now_ms=NOW_MS,
            clock=lambda: next(ticks),
        )

    miss, hit = call(), call()
    assert miss.diagnostics["discovery_duration_ms"] == 4.0  # discovery start → end
    assert hit.diagnostics["discovery_duration_ms"] == 4.0  # wait start → value available
    assert hit.diagnostics["discovery_cache_hit"] is True


def test_bc10_04_d36_diagnostics_contain_no_ids_names_aliases_or_text():
    secret_text = "Ann told Ally the launch code"
    ann = "400000000000000077"
    members = [*world_members(), MemberInfo(ann, username="ann_u", global_name="Ann", display_name="Ann")]
    rows = [*world_rows(), CandidateRow(UserRow(77, ann, "ann_u", "Ann", user_nickname="Annie"), ACTIVE)]
    hook = "777000000000000123"

    def extra(ctx):  # type: ignore[no-untyped-def]
        return [ParticipantCandidate(ParticipantKey.discord_user(D), {"real_mention"})]

    prepared = prepare_participant_context(
        preparation_input(
            [
                msg("1", A, f"{secret_text} <@{E}> @alice_srv"),
                msg("2", BO, "Sam? lilya"),
                block_notice("3", E, "hidden"),
            ],
            matrix_users={"@m:host": "Matrix Mia"},
            synthetic_users={"900": {"display_name": "Weather Hook", "type": "webhook"}},
            persona_list=[lilya(public_attribute="Sings")],
        ),
        candidate_source=FakeCandidateSource(rows),
        member_directory=FakeMemberDirectory.of(members),
        source_registry=build_source_registry([SourceRegistration("ex.extra", 1, extra)]),
        now_ms=NOW_MS,
    )
    serialized = json.dumps(prepared.diagnostics)
    assert prepared.referenced_user_ids  # the history did reference people
    forbidden = [A, BO, B, E, D, ann, "@m:host", hook, "Ann", "Annie", "Ally", "alice", "Alice", "Sam", "Mia"]
    forbidden += ["Weather", "Lilya", "lilya", "launch", "hidden", "Sings", "Tomori", "erin", "bob"]
    for value in forbidden:
        assert value.lower() not in serialized.lower(), value
    assert list(json.loads(serialized)["rejection_counts"]) == SPEC_REJECTION_REASONS
