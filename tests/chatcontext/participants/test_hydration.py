"""Hydration (participants.md §3 H-01..H-22; §8 T-02, T-03, T-15, T-26..T-33, T-38, T-47)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chatcontext.core.participants.model import ParticipantKey
from chatcontext.core.participants.naming import NamingPreference, format_name
from chatcontext.core.participants.render import TASKS_HEADER
from chatcontext.core.types import ServerMemoryRow
from chatcontext.participants.hydration import build_conversation_corpus, hydrate_participant_profiles
from tests.chatcontext.participants.builders import BO, CHANNEL, NOW_MS, A, B, E, lilya, msg, ren, tomori
from tests.chatcontext.participants.hydration_builders import (
    HOUR_MS,
    alice_snapshot,
    bot_seed,
    build,
    discover,
    memory,
    participant_turn,
    prepared,
    reminder,
    server,
    user_seed,
    world_deps,
)


def profile_of(items, name):  # type: ignore[no-untyped-def]
    """The lines of the profile entry whose heading starts with ``name``."""
    text = items.profile.text
    start = text.index("\n\n" + name) + 2
    end = text.find("\n\n", start)
    return text[start : end if end != -1 else len(text)].splitlines()


def hydrate(prep, deps, persona=None, **kwargs):  # type: ignore[no-untyped-def]
    turn = participant_turn(
        persona,
        impersonated=kwargs.pop("impersonated", None),
        snapshot=kwargs.pop("snapshot", alice_snapshot()),
        srv=kwargs.pop("srv", None),
    )
    return hydrate_participant_profiles(prep, turn, deps=deps, **kwargs)


# --- identity profiles (H-16..H-19) -------------------------------------------------------------


def test_t02_d28_h16_alter_active_identity_renders_once_as_you():
    history = [msg("1", B, "earlier words", author_type="persona"), msg("2", A, "hi lilya")]
    prep = discover(history, active=lilya())
    bot_seeds = [s for s in prep.discovery_plan.seeds if "active_identity" in s.reasons]
    assert [s.key.serialized for s in bot_seeds] == ["persona:2"]
    items = build(prep, world_deps(), persona=lilya())
    assert items.profile is not None
    assert items.profile.text.count("(This is you!)") == 1
    assert "\n\nLilya (This is you!)\n" in items.profile.text
    assert "Tomori (This is you!)" not in items.profile.text


def test_t03_d29_h18_h19_historical_persona_gets_public_fields_under_its_history_label():
    history = [msg("1", "3", "I am furious", author_type="persona"), msg("2", A, "calm down")]
    prep = discover(history, synthetic_users={"3": {"display_name": "Ren (mad)", "type": "persona"}})
    (ren_seed,) = [s for s in prep.discovery_plan.seeds if s.key == ParticipantKey.persona(3)]
    assert ren_seed.reasons == {"historical_persona"}
    assert ren_seed.aliases == []
    items = build(prep, world_deps())
    assert profile_of(items, "Ren (mad)") == [
        "Ren (mad)",
        "- Ren (mad)'s Physical Appearance: red hair",
        "- Known Information about Ren (mad):",
        "  - Loves tea",
    ]
    assert items.presence is not None and "Ren (mad)" not in items.presence.text
    assert all(u["target_id"] != "persona:3" for u in items.conversation_users)


def test_t15_h19_h22_r08_co_responder_rendered_last_without_handle_and_not_when_active():
    prep = discover([msg("1", A, "hello both")], responders=[1, 3])
    items = build(prep, world_deps())
    text = items.profile.text
    last_entry = "Ren\n- Ren's Physical Appearance: red hair\n- Known Information about Ren:\n  - Loves tea"
    assert text.endswith(last_entry + "\n]")
    assert "Ren (" not in text
    assert items.presence is not None
    assert items.presence.text.endswith("Ren\n- Status: Unknown (possibly online)\n]")
    prep_next = discover([msg("1", A, "hello both")], responders=[1, 3], active=ren())
    assert all(p.persona_id != 3 for p in prep_next.public_persona_profiles)
    next_items = build(prep_next, world_deps(), persona=ren())
    assert "Known Information about Ren" not in next_items.profile.text
    assert "Ren (This is you!)" in next_items.profile.text


def test_h17_matrix_user_gets_unknown_status_and_bridge_alias():
    result = hydrate(prepared([matrix_seed_plain()], matrix_users={"@m:host": "m"}), world_deps())
    (matrix,) = result.profiles
    assert matrix.display_name == "m"
    assert matrix.resolvable_target_id == "@m:host"
    assert [a.source for a in matrix.aliases] == ["bridge_display_name"]
    assert [f.lines for f in matrix.fields] == [("- Status: Unknown (possibly online)",)]


def matrix_seed_plain():  # type: ignore[no-untyped-def]
    from tests.chatcontext.participants.hydration_builders import matrix_seed

    return matrix_seed("@m:host")


# --- H-03 / H-04 / H-05 -------------------------------------------------------------------------


def test_t47_h03_empty_plan_gives_no_items_and_duplicate_keys_raise():
    items = build(prepared([]), world_deps())
    assert items.items == []
    assert items.profile is None and items.presence is None and items.current_context is None
    with pytest.raises(ValueError, match="unique keys"):
        build(prepared([user_seed(A), user_seed(A)]), world_deps())


def test_t26_h05_triggerer_fast_path_reads_no_privacy_or_blacklist():
    deps = world_deps()
    result = hydrate(prepared([user_seed(A), user_seed(BO)]), deps)
    assert deps.asked["load_privacy_levels"] == [BO]
    assert deps.asked["load_blacklisted"] == [BO]
    assert result.diagnostics["external_calls"]["privacy_reads"] == 1
    assert result.diagnostics["external_calls"]["blacklist_reads"] == 1
    # The snapshot's preloaded member serves the triggerer: only Bob's member is read.
    assert deps.asked["load_member"] == [BO]


def test_t26_h05_snapshot_blacklist_applies_to_the_triggerer_without_reads():
    deps = world_deps()
    deps.memories = [memory(1, 1, "alice secret", lineage=10001)]
    result = hydrate(prepared([user_seed(A)]), deps, snapshot=alice_snapshot(is_triggerer_blacklisted=True))
    (alice,) = result.profiles
    assert alice.display_name == "Alice_srv"
    assert "load_blacklisted" not in deps.asked
    assert "load_memories" not in deps.asked


def test_t27_h04_unknown_member_is_registered_and_unknown_non_member_is_skipped():
    newcomer = "400000000000000009"
    ghost = "400000000000000010"
    deps = world_deps()
    deps.members[newcomer] = type(deps.members[BO])(newcomer, username="newbie", display_name="Newbie")
    result = hydrate(prepared([user_seed(A), user_seed(newcomer), user_seed(ghost)]), deps)
    assert deps.registered == [newcomer]
    assert [p.display_name for p in result.profiles] == ["Ally", "Newbie"]
    assert result.diagnostics["external_calls"]["registrations"] == 1


def test_h04_referenced_ids_are_never_registered():
    outsider = "400000000000000011"
    deps = world_deps()
    deps.members[outsider] = type(deps.members[BO])(outsider, username="outsider")
    prep = prepared([user_seed(outsider, "real_mention")])
    prep.referenced_user_ids.append(outsider)
    result = hydrate(prep, deps)
    assert deps.registered == []
    assert result.profiles == []


def test_h04_without_member_the_plain_user_names_the_participant():
    from chatcontext.core.types import Author

    deps = world_deps()
    del deps.members[BO]
    deps.plain_users[BO] = Author(BO, username="bob", global_name="Bobbert")
    result = hydrate(prepared([user_seed(BO)]), deps)
    (bob,) = result.profiles
    assert bob.display_name == "Bobbert"
    assert bob.primary_alias == "Bobbert"


# --- H-09 naming ------------------------------------------------------------------------------


def test_t38_h09_h11_persona_prefix_and_lineage_suppression():
    persona = tomori(naming_prefixes={"neutral": "Master"})
    deps = world_deps()
    items = build(prepared([user_seed(A)]), deps, persona=persona)
    assert profile_of(items, "Master Ally")[:2] == [
        "Master Ally (Mention: @{alice_srv}; Aliases: @{Ally}, @{Master Ally}, @{Alice}, @{alice01})",
        '- Tomori calls Ally "Master Ally" (prefix "Master")',
    ]
    deps.naming[(1, 10001)] = NamingPreference(1, 10001, prefix_override="")
    items = build(prepared([user_seed(A)]), deps, persona=persona)
    assert "calls Ally" not in items.profile.text
    assert "\n\nAlly (Mention" in items.profile.text


def test_h09_addressing_style_suffix_and_lineage_nickname():
    persona = tomori(naming_suffixes={"feminine": "-chan", "neutral": "-san"})
    deps = world_deps()
    deps.rows[A] = deps.rows[A].__class__(**{**deps.rows[A].__dict__, "addressing_style": "feminine"})
    deps.naming[(1, 10001)] = NamingPreference(1, 10001, nickname_override="Allie")
    snapshot = alice_snapshot(triggerer_row=deps.rows[A])
    result = hydrate(prepared([user_seed(A)]), deps, persona=persona, snapshot=snapshot)
    (alice,) = result.profiles
    assert alice.display_name == "Allie-chan"
    naming = next(f for f in alice.fields if f.kind == "naming")
    assert naming.lines == ('- Tomori calls Allie "Allie-chan" (suffix "-chan")',)
    assert {a.source: a.value for a in alice.aliases}["effective_nickname"] == "Allie"


@pytest.mark.parametrize(
    ("prefix", "nickname", "suffix", "expected"),
    [
        ("Master", "Ally", "", "Master Ally"),
        ("Dr.", "ally", "", "Dr. ally"),
        ("~", "ally", "", "~ally"),
        ("お", "ally", "", "おally"),
        ("Master ", "Ally", "", "Master Ally"),
        ("", "erin", "", "Erin"),
        ("", "Ally", "さん", "Allyさん"),
        ("", "Ally", "!", "Ally!"),
        ("", "Ally", " the Great", "Ally the Great"),
        ("sir", "Ally", "", "Sir Ally"),
    ],
)
def test_h09_formatted_name_joining_rules(prefix, nickname, suffix, expected):  # type: ignore[no-untyped-def]
    assert format_name(prefix, nickname, suffix) == expected


# --- H-14 memories -------------------------------------------------------------------------------


def memory_line(items, name="Ally"):  # type: ignore[no-untyped-def]
    return [line for line in profile_of(items, name) if line.startswith("- Memories:")]


def test_t28_h14_h01_memories_by_lineage():
    deps = world_deps(leak_all_lineages=True)
    deps.memories = [
        memory(2, 1, "global fact", lineage=0, created=100),
        memory(3, 1, "lilya fact", lineage=10002, created=200),
        memory(1, 1, "tomori fact", lineage=10001, created=300),
    ]
    tomori_items = build(prepared([user_seed(A)]), deps)
    assert memory_line(tomori_items) == ["- Memories: ID:1 tomori fact; ID:2 global fact"]
    lilya_items = build(prepared([user_seed(A)]), deps, persona=lilya())
    assert memory_line(lilya_items) == ["- Memories: ID:3 lilya fact; ID:2 global fact"]


def test_h14_server_memories_come_with_the_personal_memory_read_and_keep_to_the_lineage():
    """The lineage's server memories ride along the H-14 read (one statement); another lineage's
    never passes, whatever the loader returns. Without that read — no memory wanted, or the read
    failed (fail closed: no personal memories) — there are none, and the caller reads them itself."""
    deps = world_deps(leak_all_lineages=True)
    deps.memories = [memory(1, 1, "tomori fact", lineage=10001)]
    deps.server_memories = [
        ServerMemoryRow(10001, "tomori server fact"),
        ServerMemoryRow(10002, "lilya server fact"),
        ServerMemoryRow(0, "global server fact"),
    ]
    items = build(prepared([user_seed(A)]), deps)
    assert memory_line(items) == ["- Memories: ID:1 tomori fact"]
    assert items.server_memories == [deps.server_memories[0], deps.server_memories[2]]
    assert deps.calls["load_memories"] == 1

    hidden = build(prepared([user_seed(A)]), deps, srv=server(personal_memories_enabled=False))
    assert hidden.server_memories is None and deps.calls["load_memories"] == 1

    deps.memory_read_fails = True
    failed = build(prepared([user_seed(A)]), deps)
    assert memory_line(failed) == [] and failed.server_memories is None
    assert failed.diagnostics["hydration"]["read_failures"] == {"personal_memory_reads": 1}


def test_t29_h14_content_tags_against_the_corpus():
    deps = world_deps()
    deps.memories = [
        memory(1, 1, "cats", tags=["cats"], created=4),
        memory(2, 1, "dogs", tags=["dogs"], created=3),
        memory(3, 1, "untagged", created=2),
        memory(4, 1, "quoted", tags=["'cat'"], created=1),
    ]
    corpus = build_conversation_corpus([msg("1", A, "I love CATS")], memory_tagging_enabled=True)
    assert corpus == "i love cats"
    tagged = build(prepared([user_seed(A)]), deps, srv=server(memory_tagging_enabled=True), conversation_corpus=corpus)
    assert memory_line(tagged) == ["- Memories: ID:1 [tags: cats] cats; ID:3 untagged; ID:4 [tags: 'cat'] quoted"]
    untagged = build(prepared([user_seed(A)]), deps, conversation_corpus=corpus)
    assert memory_line(untagged) == [
        "- Memories: ID:1 [tags: cats] cats; ID:2 [tags: dogs] dogs; ID:3 untagged; ID:4 [tags: 'cat'] quoted"
    ]


def test_t30_h14_channel_tags_and_content_tags_combine():
    deps = world_deps()
    deps.memories = [
        memory(1, 1, "art", tags=["#art"], created=3),
        memory(2, 1, "general", tags=["#General"], created=2),
        memory(3, 1, "both", tags=["#general", "dogs"], created=1),
    ]
    srv = server(channel_memory_enabled=True, memory_tagging_enabled=True)
    items = build(prepared([user_seed(A)]), deps, srv=srv, conversation_corpus="we talk about cats")
    assert memory_line(items) == ["- Memories: ID:2 [tags: #General] general"]


def test_t31_h14_r15_memory_rendering_with_tags_and_user_binding():
    deps = world_deps()
    deps.memories = [memory(42, 1, "{user} likes cats", tags=["pets", "cats"])]
    items = build(prepared([user_seed(A)]), deps, triggerer_name="Someone else")
    assert memory_line(items) == ["- Memories: ID:42 [tags: pets, cats] Ally likes cats"]


def test_h14_bot_placeholder_uses_the_active_persona():
    deps = world_deps()
    deps.memories = [memory(5, 1, "{bot} promised {user} a song", lineage=10002)]
    items = build(prepared([user_seed(A)]), deps, persona=lilya())
    assert memory_line(items) == ["- Memories: ID:5 Lilya promised Ally a song"]


# --- H-15 / H-21 reminders and tasks --------------------------------------------------------------


def reminder_lines(items, name="Ally"):  # type: ignore[no-untyped-def]
    return [line.strip() for line in profile_of(items, name) if line.startswith("  - ")]


def test_t32_h15_reminders_follow_the_active_persona():
    deps = world_deps()
    deps.reminders = [
        reminder(1, A, "R1", persona_id=1),
        reminder(2, A, "R2", persona_id=None, at_ms=NOW_MS + 2 * HOUR_MS),
        reminder(3, A, "R3", persona_id=2),
        reminder(4, A, "R4", persona_id=1, at_ms=NOW_MS - HOUR_MS),
    ]
    tomori_lines = reminder_lines(build(prepared([user_seed(A)]), deps))
    assert [line.split('"')[1] for line in tomori_lines] == ["R1", "R2"]
    lilya_lines = reminder_lines(build(prepared([user_seed(A)]), deps, persona=lilya()))
    assert [line.split('"')[1] for line in lilya_lines] == ["R3"]


def test_h15_des_no_persona_id_loads_no_reminder():
    deps = world_deps()
    deps.reminders = [reminder(1, A, "R1", persona_id=None)]
    result = hydrate(prepared([user_seed(A)]), deps, persona=tomori(persona_id=None))
    assert "load_reminders" not in deps.asked
    assert all(f.kind != "human_reminders" or not f.visible for f in result.profiles[0].fields)


def test_t33_h21_persona_self_tasks_exact_persona_and_destination():
    deps = world_deps(channels={"300000000000000555": "#tasks"})
    deps.reminders = [
        reminder(11, B, "S1", persona_id=1, self_reminder=True, channel="300000000000000555"),
        reminder(12, B, "S2", persona_id=None, self_reminder=True),
        reminder(13, B, "S3", persona_id=1, self_reminder=False),
    ]
    items = build(prepared([bot_seed()]), deps)
    text = items.profile.text
    task = '- ID:11 "S1" (scheduled for Thu, May 21, 2026, 07:30 PM (UTC+9)) (destination: #tasks)'
    assert text.endswith(f"{TASKS_HEADER}\n{task}\n]")
    assert "S2" not in text and "S3" not in text
    imp = build(prepared([bot_seed()]), deps, impersonated=BO)
    assert TASKS_HEADER not in imp.profile.text and "S1" not in imp.profile.text


def test_h21_no_self_tasks_without_bot_id():
    deps = world_deps()
    deps.reminders = [reminder(11, B, "S1", persona_id=1, self_reminder=True)]
    result = hydrate_participant_profiles(
        prepared([user_seed(A)]),
        replace(participant_turn(), bot_user_id=None),
        deps=deps,
    )
    assert result.persona_task_lines == []


def test_h22_diagnostics_hold_counts_only():
    deps = world_deps()
    deps.memories = [memory(1, 1, "Ally secret")]
    result = hydrate(prepared([user_seed(A), user_seed(BO), user_seed(E), bot_seed()]), deps)
    flat = repr(result.diagnostics)
    for forbidden in (A, BO, E, "Ally", "alice", "secret", CHANNEL):
        assert forbidden not in flat
    assert result.diagnostics["profile_count"] == 4


# --- BC7-07 history naming projection ------------------------------------------------------------


def test_bc7_07_history_user_labels_follow_persona_naming_and_p02():
    from chatcontext.core.participants.naming import history_persona_mention_labels, history_user_labels
    from tests.chatcontext.participants.builders import alice_row, bob_row, erin_row

    persona = tomori(naming_prefixes={"neutral": "Master"})
    rows = [alice_row(), bob_row(user_nickname="Bobby"), erin_row(user_nickname="Eri", privacy_level=2)]
    labels = history_user_labels(
        rows,
        persona=persona,
        personalization_enabled=True,
        blacklisted={BO},
        naming_preferences={(1, 10001): NamingPreference(1, 10001, nickname_override="Allie")},
        live_names={A: "alice_srv"},
    )
    assert labels == {A: "Master Allie"}
    assert history_user_labels(rows, persona=persona, personalization_enabled=False) == {}
    by_lineage = history_persona_mention_labels(
        [alice_row()], personas=[tomori(), lilya(naming_suffixes={"neutral": "-san"})], personalization_enabled=True
    )
    assert by_lineage == {f"10001:{A}": "Ally", f"10002:{A}": "Ally-san"}


# --- C-08: hydration runs for every persona turn ----------------------------------------------------


def test_t20_c08_hydration_reads_happen_for_every_persona_turn():
    prep = discover([msg("1", A, "hi"), msg("2", BO, "yo")], responders=[1, 2])
    deps = world_deps()
    first = build(prep, deps)
    second = build(prep, deps, persona=lilya())
    for items in (first, second):
        calls = items.diagnostics["hydration"]["external_calls"]
        assert calls["privacy_reads"] == 1 and calls["blacklist_reads"] == 1
        assert calls["member_reads"] == 1 and calls["personal_memory_reads"] == 2 and calls["reminder_reads"] >= 2
    assert deps.calls["load_reminders"] == 2 and deps.calls["load_memories"] == 2
