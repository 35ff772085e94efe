"""Request-scope caching across the persona turns of one locked turn (participants.md C-01..C-09;
§8 T-20..T-24, T-58)."""

from __future__ import annotations

import copy
import gc
import json
import threading
import weakref
from dataclasses import replace

import pytest

from chatcontext.core.participants.model import PreparationInput
from chatcontext.core.types import Author, ChatIncoming, DiscordMessage, LockedTurn
from chatcontext.participants.prepare import prepare_participant_context
from chatcontext.participants.scope import (
    ParticipantRequestScope,
    discovery_cache_key,
    freeze_input,
    request_scope_for,
)
from tests.chatcontext.participants.builders import (
    BO,
    CHANNEL,
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


def locked_turn() -> LockedTurn:
    return LockedTurn(ChatIncoming(DiscordMessage("9", CHANNEL, Author(A), 0)), CHANNEL, triggered_persona_ids=(1, 2))


def history():  # type: ignore[no-untyped-def]
    return [msg("1", A, f"hi <@{E}>"), msg("2", BO, "ren, tea?"), msg("3", A, "lilya too")]


def turn_input(active, entries=None, **kwargs):  # type: ignore[no-untyped-def]
    personas = [tomori(), lilya(public_attribute="Sings"), ren()]
    return preparation_input(
        history() if entries is None else entries, active=active, persona_list=personas, responders=[1, 2], **kwargs
    )


def run(inp, scope, source, directory=None):  # type: ignore[no-untyped-def]
    return prepare_participant_context(
        inp,
        request_scope=scope,
        candidate_source=source,
        member_directory=directory or FakeMemberDirectory.of(world_members()),
        now_ms=NOW_MS,
    )


def seeds(prepared):  # type: ignore[no-untyped-def]
    return [s.key.serialized for s in prepared.discovery_plan.seeds]


def test_t20_c03_c09_d36_second_persona_turn_reuses_discovery_and_recomposes():
    lock = locked_turn()
    source = FakeCandidateSource(world_rows())
    directory = FakeMemberDirectory.of(world_members())
    first = run(turn_input(tomori()), request_scope_for(lock), source, directory)
    lookups = (len(directory.cache_lookups), len(directory.fetches))
    second = run(turn_input(lilya(public_attribute="Sings")), request_scope_for(lock), source, directory)

    assert source.reads == 1
    assert (len(directory.cache_lookups), len(directory.fetches)) == lookups  # no member reads either
    assert first.diagnostics["discovery_cache_hit"] is False
    assert first.diagnostics["external_calls"]["candidate_source_reads"] == 1
    assert second.diagnostics["discovery_cache_hit"] is True
    assert second.diagnostics["external_calls"] == {
        "candidate_source_reads": 0,
        "member_cache_hits": 0,
        "member_fetches": 0,
    }
    # C-08: identity, public profiles and scoping are recomputed per persona.
    assert f"bot:{B}" in seeds(first) and "persona:2" in seeds(first)
    assert f"bot:{B}" not in seeds(second)
    assert next(s for s in second.discovery_plan.seeds if s.key.serialized == "persona:2").reasons == {
        "active_identity"
    }
    assert [p.persona_id for p in first.public_persona_profiles] == [2, 3]
    assert [p.persona_id for p in second.public_persona_profiles] == [3]
    assert first.referenced_user_ids == second.referenced_user_ids == [E]
    assert first.diagnostics["candidate_count"] == second.diagnostics["candidate_count"]


def test_t21_c05_concurrent_callers_share_one_in_flight_discovery():
    scope = ParticipantRequestScope()
    source = FakeCandidateSource(world_rows(), gate=threading.Event())
    results: dict[str, object] = {}

    def call(name: str, active) -> None:  # type: ignore[no-untyped-def]
        results[name] = run(turn_input(active), scope, source)

    first = threading.Thread(target=call, args=("tomori", tomori()))
    first.start()
    assert source.started.wait(5)
    second = threading.Thread(target=call, args=("lilya", lilya(public_attribute="Sings")))
    second.start()
    second.join(0.2)
    assert second.is_alive()  # waiting on the stored future, not reading again
    assert source.reads == 1
    assert source.gate is not None
    source.gate.set()
    first.join(5)
    second.join(5)
    assert source.reads == 1
    assert results["tomori"].diagnostics["discovery_cache_hit"] is False  # type: ignore[attr-defined]
    assert results["lilya"].diagnostics["discovery_cache_hit"] is True  # type: ignore[attr-defined]
    assert results["lilya"].referenced_user_ids == [E]  # type: ignore[attr-defined]


def test_t22_c07_a_different_sanitized_history_misses_the_cache():
    lock = locked_turn()
    source = FakeCandidateSource(world_rows())
    run(turn_input(tomori()), request_scope_for(lock), source)
    # Lilya blocks Bob: his message is replaced by a notice in her history only (U-2).
    blocked = [history()[0], msg("synthetic-user-block-2", BO, "[System: blocked]"), history()[2]]
    lilya_turn = run(turn_input(lilya(public_attribute="Sings"), blocked), request_scope_for(lock), source)
    assert source.reads == 2
    assert lilya_turn.diagnostics["discovery_cache_hit"] is False
    assert lilya_turn.diagnostics["rejection_counts"]["blocked_source"] == 1
    assert len(request_scope_for(lock)) == 2


def test_t23_c06_a_failed_discovery_is_evicted_and_retried_fresh():
    scope = ParticipantRequestScope()
    source = FakeCandidateSource(world_rows(), fail_times=1)
    with pytest.raises(RuntimeError):
        run(turn_input(tomori()), scope, source)
    assert len(scope) == 0
    retry = run(turn_input(tomori()), scope, source)
    assert source.reads == 2
    assert retry.diagnostics["discovery_cache_hit"] is False
    assert retry.referenced_user_ids == [E]


def test_c06_every_waiter_receives_the_error():
    scope = ParticipantRequestScope()
    source = FakeCandidateSource(world_rows(), fail_times=1, gate=threading.Event())
    errors: list[BaseException] = []

    def call() -> None:
        try:
            run(turn_input(tomori()), scope, source)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=call)]
    threads[0].start()
    assert source.started.wait(5)
    threads.append(threading.Thread(target=call))
    threads[1].start()
    threads[1].join(0.2)
    assert source.gate is not None
    source.gate.set()
    for thread in threads:
        thread.join(5)
    assert source.reads == 1
    assert len(errors) == 2 and all(isinstance(e, RuntimeError) for e in errors)
    assert len(scope) == 0


def test_c06_eviction_leaves_a_newer_entry_alone():
    scope = ParticipantRequestScope()
    newer = {}

    def failing():  # type: ignore[no-untyped-def]
        # While this computation runs, another caller replaces the entry (e.g. after a reset).
        scope._entries["k"] = newer["future"]
        raise RuntimeError("boom")

    from concurrent.futures import Future

    newer["future"] = Future()
    with pytest.raises(RuntimeError):
        scope.get_or_compute("k", failing)
    assert scope._entries["k"] is newer["future"]


def test_t24_c01_scope_dies_with_its_locked_turn():
    source = FakeCandidateSource(world_rows())
    lock = locked_turn()
    scope = request_scope_for(lock)
    assert request_scope_for(lock) is scope
    assert request_scope_for(locked_turn()) is not scope  # identity, not equality
    run(turn_input(tomori()), scope, source)
    scope_ref = weakref.ref(scope)
    del scope, lock
    gc.collect()
    assert scope_ref() is None
    run(turn_input(tomori()), request_scope_for(locked_turn()), source)
    assert source.reads == 2


def test_t58_c02_caller_mutation_does_not_reach_running_or_cached_discovery():
    scope = ParticipantRequestScope()
    source = FakeCandidateSource(world_rows(), gate=threading.Event())
    inp = turn_input(tomori())
    pristine = copy.deepcopy(inp)
    results = []
    worker = threading.Thread(target=lambda: results.append(run(inp, scope, source)))
    worker.start()
    assert source.started.wait(5)
    # Mutate everything the caller still holds while discovery is in flight.
    inp.personas[0] = replace(inp.personas[0], trigger_words=("tomori", "hi"))
    inp.personas.append(replace(ren(), persona_id=4, persona_nickname="Hi", trigger_words=("hi",)))
    inp.simplified_history[1].content = "alice_srv!"
    inp.visible_user_ids.append(E)
    inp.responder_persona_ids.append(3)
    assert source.gate is not None
    source.gate.set()
    worker.join(5)
    (result,) = results
    expected = run(pristine, ParticipantRequestScope(), FakeCandidateSource(world_rows()))
    assert seeds(result) == seeds(expected)
    assert "persona:1" not in seeds(result) and "persona:4" not in seeds(result)
    assert source.queries[0].history_text == "\n".join(m.content for m in pristine.simplified_history)
    # The cached entry is keyed by the snapshot taken at call time.
    again = run(copy.deepcopy(pristine), scope, source)
    assert again.diagnostics["discovery_cache_hit"] is True
    assert source.reads == 1


def test_c03_key_is_exact_order_preserving_json_without_the_active_persona():
    base = turn_input(tomori(), synthetic_users={"900": {"display_name": "W", "type": "webhook"}})
    key = discovery_cache_key(freeze_input(base))
    decoded = json.loads(key)
    assert decoded[0] == base.guild_id
    assert decoded[1][1] == ["2", BO, "user", "ren, tea?"]
    assert decoded[3] == [["900", {"display_name": "W", "type": "webhook"}]]
    assert decoded[5][1] == [2, "Lilya", ["lilya", "lil"], [["Sings", True]], []]
    assert decoded[6] == [1, 2]
    assert discovery_cache_key(freeze_input(replace(base, active_persona=lilya()))) == key
    assert discovery_cache_key(freeze_input(replace(base, server_id=99))) == key

    def variant(**changes: object) -> str:
        return discovery_cache_key(freeze_input(replace(copy.deepcopy(base), **changes)))  # type: ignore[arg-type]

    assert variant(guild_id="other") != key
    assert variant(responder_persona_ids=[2, 1]) != key
    assert variant(visible_user_ids=[BO, A, B]) != key
    assert variant(matrix_users={"@m:h": "m"}) != key
    assert variant(synthetic_users={"900": {"display_name": "W2", "type": "webhook"}}) != key
    assert variant(personas=[tomori(), lilya(public_attribute="Sings", physical_appearance_tags=("x",)), ren()]) != key
    assert variant(simplified_history=[*history()[:2], msg("3", A, "lilya too!")]) != key


def test_c02_freeze_input_is_a_deep_copy_with_plain_collections():
    inp = PreparationInput(
        guild_id="g",
        simplified_history=[msg("1", A, "x")],
        personas=[tomori()],
        responder_persona_ids={2, 1},  # type: ignore[arg-type]
        visible_user_ids=(A,),  # type: ignore[arg-type]
    )
    frozen = freeze_input(inp)
    assert frozen.simplified_history[0] is not inp.simplified_history[0]
    assert sorted(frozen.responder_persona_ids) == [1, 2]
    assert frozen.visible_user_ids == [A]
