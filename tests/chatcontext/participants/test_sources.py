"""Per-persona composition: sources, registry and plan building (participants.md D-25..D-34;
§8 T-01, T-02, T-03, T-15, T-17, T-18, T-19)."""

from __future__ import annotations

import threading

import pytest

from botplatform.settings import env_tunable
from chatcontext.core.participants.aliases import UserNames, user_aliases
from chatcontext.core.participants.model import ParticipantKey
from chatcontext.participants.prepare import prepare_participant_context
from chatcontext.participants.sources import (
    ParticipantCandidate,
    ParticipantSourceError,
    RegistryError,
    SourceRegistration,
    build_plan,
    build_source_registry,
    source_timeout_ms,
)
from tests.chatcontext.participants.builders import (
    BO,
    NOW_MS,
    A,
    B,
    E,
    FakeCandidateSource,
    FakeMemberDirectory,
    lilya,
    msg,
    preparation_input,
    ren,
    tomori,
    world_members,
    world_rows,
)


def prepare(inp, *, registry=None):  # type: ignore[no-untyped-def]
    return prepare_participant_context(
        inp,
        candidate_source=FakeCandidateSource(world_rows()),
        member_directory=FakeMemberDirectory.of(world_members()),
        source_registry=registry,
        now_ms=NOW_MS,
    )


def seeds(prepared):  # type: ignore[no-untyped-def]
    return [s.key.serialized for s in prepared.discovery_plan.seeds]


def seed(prepared, serialized):  # type: ignore[no-untyped-def]
    (found,) = [s for s in prepared.discovery_plan.seeds if s.key.serialized == serialized]
    return found


def extension(sid, run, **kwargs):  # type: ignore[no-untyped-def]
    return SourceRegistration(sid, kwargs.pop("order", 10), run, **kwargs)


# --- core sources ------------------------------------------------------------------------------


def test_t01_d28_u5_d34_visible_authors_then_the_bot_as_active_identity():
    history = [msg("1", A, "hi"), msg("2", BO, "yo"), msg("3", A, "ok")]
    prepared = prepare(preparation_input(history, responders=[]))
    assert seeds(prepared) == [f"discord_user:{A}", f"discord_user:{BO}", f"bot:{B}"]
    plan = prepared.discovery_plan
    assert [s.reasons for s in plan.seeds] == [{"visible_author"}, {"visible_author"}, {"active_identity"}]
    assert [s.capabilities for s in plan.seeds] == [{"mentionable"}, {"mentionable"}, set()]
    assert [s.first_seen_order for s in plan.seeds] == [0, 1, 2]


def test_t02_d28_alter_active_maps_the_bot_account_to_the_persona():
    history = [msg("1", B, "earlier", author_type="persona"), msg("2", A, "lilya?")]
    prepared = prepare(preparation_input(history, active=lilya(), responders=[2]))
    assert seeds(prepared)[:2] == ["persona:2", f"discord_user:{A}"]
    assert seed(prepared, "persona:2").reasons == {"active_identity"}
    assert not any(s.key.kind == "bot" for s in prepared.discovery_plan.seeds)
    # With the main persona active the bot id stays a bot key.
    assert seeds(prepare(preparation_input(history, active=tomori())))[0] == f"bot:{B}"


def test_t03_d29_d26_historical_persona_keeps_its_seed_without_aliases():
    synthetic = {"3": {"display_name": "Ren (mad)", "type": "persona"}}
    history = [msg("1", "3", "hmph", author_type="persona"), msg("2", A, "ren, calm down")]
    prepared = prepare(preparation_input(history, synthetic_users=synthetic, responders=[1]))
    ren_seed = seed(prepared, "persona:3")
    assert ren_seed.reasons == {"historical_persona", "persona_trigger_reference"}
    assert ren_seed.aliases == []
    assert ren_seed.capabilities == set()
    assert ren_seed.source_display_name == "Ren (mad)"
    assert [p.persona_id for p in prepared.public_persona_profiles] == [3]


def test_d26_historical_persona_without_public_profile_keeps_its_seed():
    synthetic = {"2": {"display_name": "Lilya", "type": "persona"}}
    prepared = prepare(preparation_input([msg("1", "2", "hey", author_type="persona")], synthetic_users=synthetic))
    assert seed(prepared, "persona:2").reasons == {"historical_persona"}
    assert prepared.public_persona_profiles == []


def test_t15_d13_d25_co_responder_with_public_profile_is_included_and_excluded_when_active():
    history = [msg("1", A, "hello both")]
    tomori_turn = prepare(preparation_input(history, responders=[1, 3]))
    ren_seed = seed(tomori_turn, "persona:3")
    assert ren_seed.reasons == {"co_responder"}
    assert [(a.source, a.value) for a in ren_seed.aliases] == [("persona_nickname", "Ren")]
    assert seeds(tomori_turn)[-1] == "persona:3"
    assert [p.persona_id for p in tomori_turn.public_persona_profiles] == [3]
    assert "persona:1" not in seeds(tomori_turn)  # Tomori has no public profile and is active
    ren_turn = prepare(preparation_input(history, active=ren(), responders=[1, 3]))
    assert ren_turn.public_persona_profiles == []
    # Ren is now the active identity (the bot account under an alter), never a co-responder seed.
    assert seed(ren_turn, "persona:3").reasons == {"active_identity"}
    assert seed(ren_turn, "persona:3").aliases == []


def test_d28_visible_synthetic_entries_and_active_persona_ids():
    synthetic = {
        "900": {"display_name": "Weather", "type": "webhook"},
        "2": {"display_name": "Lilya (sprite)", "type": "persona"},
    }
    inp = preparation_input(
        [msg("1", "900", "rain"), msg("2", "2", "hi", author_type="persona"), msg("3", A, "ok")],
        active=lilya(),
        synthetic_users=synthetic,
        visible=["900", "2", A, B],
        responders=[2],
    )
    prepared = prepare(inp)
    assert seeds(prepared) == ["webhook:900", "persona:2", f"discord_user:{A}"]
    hook = seed(prepared, "webhook:900")
    assert (hook.reasons, hook.source_display_name) == ({"visible_author"}, "Weather")
    assert [a.source for a in hook.aliases] == ["webhook_display_name", "webhook_display_name"]
    # D-28 (b) makes it the active identity; D-29 still records it as historical.
    assert seed(prepared, "persona:2").reasons == {"active_identity", "historical_persona"}
    evidence = [(k.serialized, s) for k, s, _ in prepared.discovery_plan.evidence]
    assert ("webhook:900", "visible_author") in evidence
    assert ("webhook:900", "historical_synthetic") in evidence
    assert ("persona:2", "historical_persona") in evidence


def test_d28_u4_bare_digits_are_a_discord_user_whatever_persona_id_they_spell():
    """A user whose Discord id is "1" while Tomori (persona 1) is active stays a user; only the typed
    `persona:1` is the active identity."""
    prepared = prepare(preparation_input([msg("1", "1", "hi")], visible=["1", "persona:1", B]))
    assert seeds(prepared) == ["discord_user:1", "persona:1", f"bot:{B}"]
    assert seed(prepared, "discord_user:1").reasons == {"visible_author"}
    assert seed(prepared, "persona:1").reasons == {"active_identity"}


@pytest.mark.parametrize(
    ("visible", "synthetic"),
    [
        ([" "], {}),
        ([B], {B: {"display_name": "x", "type": "webhook"}}),
        (["p9"], {"p9": {"display_name": "x", "type": "persona"}}),
        # A typed persona id of another persona needs its synthetic entry (b).
        (["persona:3"], {}),
    ],
)
def test_d28_invalid_visible_identities_raise(visible, synthetic):  # type: ignore[no-untyped-def]
    with pytest.raises(ParticipantSourceError):
        prepare(preparation_input([msg("1", A, "hi")], visible=visible, synthetic_users=synthetic))


def test_t17_d30_an_id_both_synthetic_and_matrix_raises():
    inp = preparation_input(
        [msg("1", A, "hi")],
        synthetic_users={"X": {"display_name": "x", "type": "webhook"}},
        matrix_users={"X": "x"},
    )
    with pytest.raises(ParticipantSourceError):
        prepare(inp)


def test_d30_matrix_users_become_bridge_seeds():
    prepared = prepare(preparation_input([msg("1", A, "hi")], matrix_users={"@m:host": "m"}))
    matrix = seed(prepared, "matrix_user:@m:host")
    assert (matrix.reasons, matrix.source_display_name, matrix.capabilities) == ({"bridge_presence"}, "m", set())
    assert [(a.source, a.exposure) for a in matrix.aliases] == [("bridge_display_name", "lookup_only")]


# --- extension sources (D-31, D-32) ------------------------------------------------------------


def test_t18_d32_extension_emitting_a_bot_key_fails():
    def rogue(ctx):  # type: ignore[no-untyped-def]
        return [ParticipantCandidate(ParticipantKey.bot(B), {"visible_author"})]

    inp = preparation_input([msg("1", A, "hi")])
    with pytest.raises(ParticipantSourceError):
        prepare(inp, registry=build_source_registry([extension("ex.rogue", rogue, critical=True)]))
    prepared = prepare(inp, registry=build_source_registry([extension("ex.rogue", rogue)]))
    assert prepared.diagnostics["sources"]["ex.rogue"] == {"outcome": "failed", "contributed": 0}
    assert seeds(prepared) == [f"discord_user:{A}", f"bot:{B}"]


@pytest.mark.parametrize(
    "candidate",
    [
        ParticipantCandidate(ParticipantKey.discord_user(E), {"active_identity"}),
        ParticipantCandidate(
            ParticipantKey.discord_user(E),
            {"visible_author"},
            user_aliases(ParticipantKey.discord_user(A), UserNames(username="x")),
        ),
    ],
)
def test_d32_extension_rule_violations_fail_the_contribution(candidate):  # type: ignore[no-untyped-def]
    registry = build_source_registry([extension("ex.bad", lambda ctx: [candidate])])
    prepared = prepare(preparation_input([msg("1", A, "hi")]), registry=registry)
    assert prepared.diagnostics["sources"]["ex.bad"]["outcome"] == "failed"
    assert f"discord_user:{E}" not in seeds(prepared)


def test_t18_d31_extension_user_without_granted_capability_is_not_mentionable():
    def erin(ctx):  # type: ignore[no-untyped-def]
        return [ParticipantCandidate(ParticipantKey.discord_user(E), {"real_mention"}, capabilities={"mentionable"})]

    prepared = prepare(
        preparation_input([msg("1", A, "hi")]), registry=build_source_registry([extension("ex.erin", erin)])
    )
    assert seed(prepared, f"discord_user:{E}").capabilities == set()
    granted = prepare(
        preparation_input([msg("1", A, "hi")]),
        registry=build_source_registry([extension("ex.erin", erin, grants_mentionable=True)]),
    )
    assert seed(granted, f"discord_user:{E}").capabilities == {"mentionable"}
    assert granted.diagnostics["sources"]["ex.erin"] == {"outcome": "ok", "contributed": 1}


def test_t19_d33_merge_keeps_the_earliest_order_and_unions_reasons():
    def again(ctx):  # type: ignore[no-untyped-def]
        return [ParticipantCandidate(ParticipantKey.discord_user(A), {"real_mention"}, source_display_name="Al")]

    history = [msg(str(i), uid, "hi") for i, uid in enumerate([A, BO, E])]
    prepared = prepare(
        preparation_input(history, matrix_users={"@m:host": "m", "@n:host": "n", "@o:host": "o"}),
        registry=build_source_registry([extension("ex.again", again)]),
    )
    alice = prepared.discovery_plan.seeds[0]
    assert alice.key == ParticipantKey.discord_user(A)
    assert alice.first_seen_order == 0
    assert alice.reasons == {"visible_author", "real_mention"}
    assert alice.source_display_name == "Al"
    evidence = [(k.serialized, s, o) for k, s, o in prepared.discovery_plan.evidence]
    assert (f"discord_user:{A}", "real_mention", 7) in evidence  # 3 visible + bot + 3 Matrix users
    assert [o for _, _, o in evidence] == sorted(o for _, _, o in evidence)


def test_d32_optional_timeout_contributes_nothing_and_critical_timeout_raises():
    release = threading.Event()
    aborted: list[bool] = []

    def slow(ctx):  # type: ignore[no-untyped-def]
        release.wait(5)
        aborted.append(ctx.abort.is_set())
        return [ParticipantCandidate(ParticipantKey.discord_user(E), {"real_mention"})]

    inp = preparation_input([msg("1", A, "hi")])
    try:
        prepared = prepare(inp, registry=build_source_registry([extension("ex.slow", slow)], timeout_ms=20))
        assert prepared.diagnostics["sources"]["ex.slow"] == {"outcome": "timeout", "contributed": 0}
        assert f"discord_user:{E}" not in seeds(prepared)
        with pytest.raises(ParticipantSourceError):
            prepare(inp, registry=build_source_registry([extension("ex.slow", slow, critical=True)], timeout_ms=20))
    finally:
        release.set()


def test_d32_critical_extension_error_raises_without_leaking_its_message():
    def broken(ctx):  # type: ignore[no-untyped-def]
        raise RuntimeError(f"user {A} said secret text")

    with pytest.raises(ParticipantSourceError) as info:
        prepare(
            preparation_input([msg("1", A, "hi")]),
            registry=build_source_registry([extension("ex.broken", broken, critical=True)]),
        )
    assert A not in str(info.value)
    assert "secret" not in str(info.value)


def test_d32_source_timeout_setting(settings, monkeypatch):  # type: ignore[no-untyped-def]
    assert source_timeout_ms() == 1500
    for raw, expected in [("250", 250), ("0", 1500), ("-5", 1500)]:
        monkeypatch.setenv("PARTICIPANT_SOURCE_TIMEOUT_MS", raw)
        # As botplatform/settings.py reads it at start-up.
        settings.TOMORI = {
            **settings.TOMORI,
            "PARTICIPANT_SOURCE_TIMEOUT_MS": env_tunable("PARTICIPANT_SOURCE_TIMEOUT_MS", 1500),
        }
        assert source_timeout_ms() == expected
        assert build_source_registry().timeout_ms == expected


def test_d27_d32_registry_order_ids_dependencies_and_cycles():
    def noop(ctx):  # type: ignore[no-untyped-def]
        return []

    registry = build_source_registry(
        [
            extension("Ex.B", noop, order=1, depends_on=("ex.c",)),
            extension("ex.a", noop, order=5),
            extension("ex.c", noop, order=9, depends_on=("core.matrix",)),
            extension("ex.d", noop, order=5),
        ]
    )
    assert [s.id for s in registry.sources] == [
        "core.visible",
        "core.synthetic",
        "core.referenced-users",
        "core.matrix",
        "core.referenced-personas",
        "ex.a",
        "ex.d",
        "ex.c",
        "ex.b",
    ]
    assert all(s.critical for s in registry.sources[:5])
    with pytest.raises(RegistryError):
        build_source_registry([extension("ex.a", noop), extension("EX.A", noop)])
    with pytest.raises(RegistryError):
        build_source_registry([extension("core.visible", noop)])
    with pytest.raises(RegistryError):
        build_source_registry([extension("ex.a", noop, depends_on=("ex.missing",))])
    with pytest.raises(RegistryError):
        build_source_registry(
            [extension("ex.a", noop, depends_on=("ex.b",)), extension("ex.b", noop, depends_on=("ex.a",))]
        )


def test_d33_build_plan_merges_aliases_and_copies_counts():
    key = ParticipantKey.discord_user(A)
    first = user_aliases(key, UserNames(username="alice01"))
    second = user_aliases(key, UserNames(global_name="Alice"))
    plan = build_plan(
        [
            ParticipantCandidate(ParticipantKey.matrix_user("@m:h"), {"bridge_presence"}),
            ParticipantCandidate(key, {"visible_author"}, first),
            ParticipantCandidate(key, {"real_mention"}, second, "Ally"),
        ],
        rejections={"bot": 2},
        alias_diagnostics={"evaluated": 3, "accepted": 1, "ambiguous": 0, "unmatched": 2},
    )
    assert [s.key for s in plan.seeds] == [ParticipantKey.matrix_user("@m:h"), key]
    merged = plan.seeds[1]
    assert ([a.value for a in merged.aliases], merged.first_seen_order, merged.source_display_name) == (
        ["alice01", "Alice"],
        1,
        "Ally",
    )
    assert plan.rejections == {
        "ineligible_state": 0,
        "bot": 2,
        "non_member": 0,
        "ambiguous_alias": 0,
        "existing_participant": 0,
        "blocked_source": 0,
        "missing_guild": 0,
    }
    assert plan.alias_reference_diagnostics["unmatched"] == 2
