"""Participant target index (participants.md §6 X-01..X-08; §8 T-48, T-49, T-52, T-53)."""

from __future__ import annotations

import json
from dataclasses import replace

from chatcontext.core.participants.model import ParticipantKey, ParticipantSeed
from chatcontext.core.participants.target_index import (
    ParticipantTargetIndex,
    TargetReference,
    can_ping,
    collect_target_index,
    conversation_users,
    merge_target_indexes,
    persona_mention_catalogue,
    references_from_conversation_users,
    references_from_index,
    resolve_user_argument,
)
from chatcontext.core.types import ContextItem, ContextItemTag, MemberInfo, TextPart
from chatcontext.repository import resolve_single_owner_triggers
from tests.chatcontext.participants.builders import BO, A, B, lilya, ren, tomori
from tests.chatcontext.participants.hydration_builders import (
    alice_snapshot,
    bot_seed,
    build,
    matrix_seed,
    prepared,
    public_profile,
    user_seed,
    world_deps,
)


def t48_items():  # type: ignore[no-untyped-def]
    seeds = [
        user_seed(A),
        bot_seed(),
        matrix_seed("@m:host"),
        ParticipantSeed(ParticipantKey.webhook("9100"), {"visible_author"}, source_display_name="Hooky"),
        ParticipantSeed(ParticipantKey.persona(4), {"historical_persona"}, source_display_name="Pip"),
        ParticipantSeed(ParticipantKey.persona(3), {"co_responder"}),
    ]
    prep = prepared(seeds, matrix_users={"@m:host": "m"}, public=[public_profile(ren())])
    return build(prep, world_deps())


def test_t48_x01_x03_x02_x08_h17_conversation_users_projection():
    items = t48_items()
    assert items.conversation_users == [
        {
            "target_id": A,
            "display_label": "Ally",
            "aliases": ["Ally", "alice_srv", "Alice", "alice01"],
            "mentionable": True,
        },
        {"target_id": "@m:host", "display_label": "m", "aliases": ["m"], "mentionable": False},
        {"target_id": "persona:3", "display_label": "Ren", "aliases": ["Ren"], "mentionable": False},
    ]
    index = ParticipantTargetIndex.from_json(items.target_index)
    assert [t.serialized_key for t in index.targets] == [  # the stable profile order of H-22
        f"bot:{B}",
        "persona:4",
        f"discord_user:{A}",
        "matrix_user:@m:host",
        "webhook:9100",
        "persona:3",
    ]
    assert [t.target_id for t in index.targets] == [None, None, A, "@m:host", None, "persona:3"]
    assert all(t.in_participant_context for t in index.targets)
    assert [can_ping(t) for t in index.targets] == [False, False, True, False, False, False]


def test_x01_index_leaves_out_input_only_aliases():
    items = build(prepared([user_seed(A)]), world_deps(), snapshot=alice_snapshot(is_triggerer_blacklisted=True))
    index = ParticipantTargetIndex.from_json(items.target_index)
    values = [a.value for a in index.targets[0].aliases]
    assert "Ally" not in values  # the hidden saved nickname stays inside hydration
    assert "Ally" not in json.dumps(items.target_index)


def test_t49_x07_x06_display_label_breaks_ties_and_equal_labels_are_ambiguous():
    deps = world_deps()
    deps.members[A] = replace(deps.members[A], global_name="Sam")
    deps.members[BO] = replace(deps.members[BO], global_name="Sam", display_name="Sam")
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    index, fallback = collect_target_index([items.profile])
    references = references_from_index(index)
    assert resolve_user_argument("@sam", references).target_id == BO
    assert resolve_user_argument("  @SAM ", references).status == "resolved"
    twins = [
        TargetReference("1" * 18, "Sam", ("Sam",), True),
        TargetReference("@sam:host", "Sam", ("Sam",), False, is_matrix=True),
    ]
    outcome = resolve_user_argument("sam", twins)
    assert outcome.status == "ambiguous"
    assert outcome.candidates == ("Sam", "Sam (Matrix)")
    assert references_from_conversation_users(fallback) == references


def test_x07_snowflake_bridge_and_unknown_inputs():
    references = [
        TargetReference("@al:mx.org", "al", ("al",), False, is_matrix=True),
        TargetReference(A, "Ally", ("Ally",), True),
    ]
    assert resolve_user_argument("@al:mx.org", references).target_id == "@al:mx.org"
    members = {BO: MemberInfo(BO, username="bob"), B: MemberInfo(B, username="bot", is_bot=True)}
    assert resolve_user_argument(BO, references, load_member=members.get).target_id == BO
    assert resolve_user_argument(A, references, load_member=members.get).target_id == A
    assert resolve_user_argument(B, references, load_member=members.get).status == "not_found"
    assert resolve_user_argument("Nobody", references).status == "continue"
    assert resolve_user_argument("ally", references).target_id == A


def test_x06_fallback_to_conversation_users_when_no_index():
    item = ContextItem(
        "user",
        [TextPart("x")],
        metadata_tag=ContextItemTag.KNOWLEDGE_USERS_IN_CONVERSATION,
        conversation_users=[{"target_id": A, "display_label": "Ally", "aliases": ["Ally"], "mentionable": True}],
    )
    index, fallback = collect_target_index([item])
    assert index.targets == ()
    assert resolve_user_argument("ally", references_from_conversation_users(fallback)).target_id == A


def test_t52_r19_metadata_round_trips_by_value():
    items = t48_items()
    restored = ParticipantTargetIndex.from_json(json.loads(json.dumps(items.target_index)))
    assert restored.to_json() == items.target_index
    assert conversation_users(restored) == items.conversation_users
    assert items.profile.participant_target_index == items.target_index


def test_t53_x05_d07_x04_persona_catalogue_and_merge():
    resolved = resolve_single_owner_triggers([tomori(), lilya(trigger_words=("lilya", "tomori"))])
    catalogue = persona_mention_catalogue(resolved)
    assert catalogue.mention_map == {"tomori": "tomori", "lilya": "lilya"}
    clashing = persona_mention_catalogue([tomori(), lilya(trigger_words=("lilya", "tomori"))])
    assert "tomori" not in clashing.mention_map
    assert clashing.mention_map["lilya"] == "lilya"

    participant = ParticipantTargetIndex.from_json(t48_items().target_index)
    full = persona_mention_catalogue([tomori(), lilya(), ren()])
    merged = merge_target_indexes([participant, full.index])
    assert merged.persona_catalog_complete
    by_key = {t.serialized_key: t for t in merged.targets}
    assert by_key["persona:3"].in_participant_context is True
    assert by_key["persona:3"].target_id == "persona:3"
    assert by_key["persona:1"].in_participant_context is False
    assert by_key["persona:2"].in_participant_context is False
    assert list(by_key)[:6] == [t.serialized_key for t in participant.targets]
    ren_values = [a.value for a in by_key["persona:3"].aliases]
    assert ren_values.count("Ren") == 1 and "ren" in ren_values  # the trigger alias joins, no duplicate nickname
