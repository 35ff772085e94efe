"""Message kinds: joins and `$:` debug messages (BC3-01, BC3-10, BC3-21; scenarios 16–17)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.types import MemberInfo
from tests.chatcontext.builders import ANN, BOB, TOMORI, U1, U2, msg, run_history

MANAGER = MemberInfo(user_disc_id=U1, username="ann_u", can_manage_server=True)
DEBUG_TOMORI = replace(TOMORI, self_debug_enabled=True)


def test_s16_bc3_01_21_join_message() -> None:
    run = run_history([msg("j1", ANN, type="user_join")])
    entry = run.entries[0]
    assert entry.content == f"[System: <@{U1}> has just joined Cafe]"
    assert (entry.author_id, entry.author_name, entry.author_type) == ("system-user-join:j1", "System", "user")


def test_bc4_03_two_joins_never_merge() -> None:
    run = run_history([msg("j1", ANN, type="user_join"), msg("j2", BOB, type="user_join")])
    assert [e.id for e in run.entries] == ["j1", "j2"]


def test_s17_bc3_01_10_bc4_01_debug_message_speaks_as_the_main_persona_and_does_not_merge() -> None:
    run = run_history(
        [msg("m1", ANN, "$: hi"), msg("m2", ANN, "hello")],
        persona=DEBUG_TOMORI,
        personas=(DEBUG_TOMORI,),
        members=(MANAGER,),
    )
    first, second = run.entries
    assert first.content == " hi"
    assert (first.author_type, first.author_name, first.persona_name, first.author_id) == (
        "persona",
        "Tomori",
        "Tomori",
        U1,
    )
    assert (first.author_persona_id, first.author_persona_lineage_id) == (1, 10)
    assert second.content == "hello"
    assert second.author_type == "user"


def test_bc3_01_debug_ignored_when_self_debug_is_off() -> None:
    run = run_history([msg("m1", ANN, "$: hi"), msg("m2", ANN, "hello")], members=(MANAGER,))
    assert [e.content for e in run.entries] == ["$: hi\nhello"]
    assert run.entries[0].author_type == "user"


def test_bc3_01_debug_ignored_for_an_author_who_cannot_manage_the_server() -> None:
    member = MemberInfo(user_disc_id=U2, username="bob_u", can_manage_server=False)
    run = run_history(
        [msg("m1", BOB, "$: pretend to be tomori")],
        persona=DEBUG_TOMORI,
        personas=(DEBUG_TOMORI,),
        members=(member,),
    )
    assert run.entries[0].content == "$: pretend to be tomori"
    assert (run.entries[0].author_type, run.entries[0].author_name) == ("user", "Bob")
