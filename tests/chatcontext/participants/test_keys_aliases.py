"""Participant keys and alias catalogues (participants.md D-01..D-09; §8 T-59, T-60)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.participants.aliases import (
    UserNames,
    aliases_for_purpose,
    bridge_alias,
    canonical_trigger,
    clean_triggers,
    collision_index,
    persona_aliases,
    strip_quotes,
    unique_aliases,
    user_aliases,
    webhook_alias,
)
from chatcontext.core.participants.model import ParticipantKey, make_alias, normalize_alias, parse_persona_id
from tests.chatcontext.participants.builders import BO, A, lilya, ren, tomori

ALICE = ParticipantKey.discord_user(A)
BOB = ParticipantKey.discord_user(BO)


def _summary(aliases):  # type: ignore[no-untyped-def]
    return [(a.source, a.value, a.priority, a.exposure, sorted(a.purposes)) for a in aliases]


def test_t59_d01_d02_d03_keys_and_persona_id_parsing():
    assert ParticipantKey.discord_user("7") != ParticipantKey.persona(7)
    assert ParticipantKey.discord_user("7").serialized == "discord_user:7"
    assert ParticipantKey.persona(7).serialized == "persona:7"
    assert ParticipantKey.webhook(" 55 ") == ParticipantKey.webhook("55")
    assert parse_persona_id("persona:7") == 7
    assert parse_persona_id("7") == 7
    assert parse_persona_id("p7") is None
    assert parse_persona_id("persona:-1") is None
    with pytest.raises(ValueError):
        ParticipantKey.webhook("  ")
    with pytest.raises(ValueError):
        ParticipantKey.persona(-1)


def test_t60_d05_normalization():
    assert normalize_alias("  @@Alice   Smith ") == "alice smith"
    assert normalize_alias("@ Bob\t\nJr") == "bob jr"
    assert make_alias(ALICE, "  @@ ", "username", {"output_mention"}, "visible", 40) is None  # D-04


def test_t60_d06_discord_id_fallback_only_when_nothing_has_an_output_purpose():
    alone = user_aliases(ALICE, UserNames(discord_id=A))
    assert _summary(alone) == [
        ("discord_id_fallback", A, 50, "visible", ["copied_identity", "output_mention", "tool_target"])
    ]
    # A hidden saved nickname and a display name are input-only: the fallback is still needed.
    hidden = user_aliases(ALICE, UserNames(saved_nickname="Ally", guild_display_name="Al", discord_id=A))
    assert [a.source for a in hidden] == ["saved_nickname", "guild_display_name", "discord_id_fallback"]
    named = user_aliases(ALICE, UserNames(username="alice01", discord_id=A))
    assert [a.source for a in named] == ["username"]


def test_d06_user_alias_table():
    aliases = user_aliases(
        ALICE,
        UserNames(
            saved_nickname="Ally",
            guild_display_name="alice_srv",
            guild_nickname="alice_srv",
            global_name="Alice",
            username="alice01",
            discord_id=A,
        ),
        impersonated_identity="Alice the Great",
        effective_nickname="Ally",
        formatted_name="Master Ally",
        expose_saved_nickname=True,
    )
    name = ["copied_identity", "input_reference", "output_mention", "tool_target"]
    assert _summary(aliases) == [
        (
            "impersonated_identity",
            "Alice the Great",
            0,
            "visible",
            ["copied_identity", "output_mention", "tool_target"],
        ),
        ("effective_nickname", "Ally", 8, "visible", name),
        ("formatted_name", "Master Ally", 9, "visible", name),
        ("saved_nickname", "Ally", 10, "visible", name),
        ("guild_display_name", "alice_srv", 15, "lookup_only", ["input_reference"]),
        ("guild_nickname", "alice_srv", 20, "visible", name),
        ("global_name", "Alice", 30, "visible", name),
        ("username", "alice01", 40, "visible", name),
    ]


def test_d06_p02_unexposed_saved_nickname_is_a_lookup_only_input_alias():
    (saved,) = [
        a for a in user_aliases(ALICE, UserNames(saved_nickname=" Ally ", username="a")) if a.source == "saved_nickname"
    ]
    assert (saved.value, saved.exposure, saved.purposes) == ("Ally", "lookup_only", frozenset({"input_reference"}))


def test_d06_bridge_and_webhook_aliases():
    (bridge,) = bridge_alias("@m:host", " m ")
    assert (bridge.owner.serialized, bridge.value, bridge.exposure, bridge.priority) == (
        "matrix_user:@m:host",
        "m",
        "lookup_only",
        10,
    )
    assert bridge.purposes == frozenset({"output_mention", "tool_target"})
    (hook,) = webhook_alias("900", "Weather Bot")
    assert (hook.owner.serialized, hook.purposes, hook.exposure) == ("webhook:900", frozenset(), "lookup_only")
    assert bridge_alias("@m:host", "  ") == []


def test_d07_trigger_cleaning_and_canonical_trigger():
    assert strip_quotes(" \"'Ren'\" ") == "Ren"
    assert strip_quotes("「トモリ」") == "トモリ"
    assert strip_quotes("«‹x›»") == "x"
    assert strip_quotes("\"Ren'") == "\"Ren'"  # not a matching pair
    assert clean_triggers(['"Lil"', "lil", "", "  ", "<@123>", "`Lilya`", "LILYA"]) == ["Lil", "Lilya"]
    assert canonical_trigger("Tomori", ["tomo", "TOMORI"]) == "TOMORI"
    assert canonical_trigger("Tomori", ["tomo"]) == "tomo"
    assert canonical_trigger('"Tomori"', []) == "Tomori"
    assert canonical_trigger(None, []) is None


def test_d06_d07_persona_catalogue():
    aliases = persona_aliases(lilya(persona_nickname='"Lilya"', trigger_words=("lilya", "Lil", "lil", "<@5>", "「x」")))
    assert [(a.source, a.value, a.priority, a.canonical_value) for a in aliases] == [
        ("persona_nickname", "Lilya", 10, "lilya"),
        ("persona_trigger", "lilya", 20, "lilya"),
        ("persona_trigger", "Lil", 21, "Lil"),
        ("persona_trigger", "x", 22, "x"),
    ]
    assert aliases[0].purposes == frozenset({"output_mention", "tool_target", "copied_identity"})
    assert aliases[1].purposes == frozenset({"output_mention", "persona_trigger"})
    assert persona_aliases(tomori(persona_id=None)) == []


def test_t60_d08_purpose_view_keeps_the_highest_priority_duplicate():
    effective = make_alias(ALICE, "Ally", "effective_nickname", {"output_mention"}, "visible", 8)
    saved = make_alias(ALICE, "ally", "saved_nickname", {"output_mention"}, "visible", 10)
    assert effective is not None and saved is not None
    assert [a.value for a in aliases_for_purpose([saved, effective], "output_mention")] == ["Ally"]
    # A different owner with the same value is not a duplicate.
    other = make_alias(BOB, "ally", "username", {"output_mention"}, "visible", 40)
    assert other is not None
    assert len(aliases_for_purpose([saved, effective, other], "output_mention")) == 2


def test_d09_collision_index_counts_lookup_only_claims():
    alice = user_aliases(ALICE, UserNames(saved_nickname="Sam", username="alice01"))  # hidden saved nickname
    bob = user_aliases(BOB, UserNames(global_name="Sam", username="bob"))
    index = collision_index([*alice, *bob], "input_reference")
    assert index["sam"] == [ALICE, BOB]
    assert index["bob"] == [BOB]
    assert [a.value for a in unique_aliases([*alice, *bob], "input_reference")] == ["alice01", "bob"]
    # Output view: Alice's hidden nickname does not claim output handles.
    assert "sam" in {a.normalized for a in unique_aliases([*alice, *bob], "output_mention")}


def test_d09_persona_catalogues_collide_on_shared_triggers():
    both = [*persona_aliases(tomori()), *persona_aliases(lilya(trigger_words=("lilya", "tomori")))]
    index = collision_index(both, "output_mention")
    assert len(index["tomori"]) == 2
    assert index["lilya"] == [ParticipantKey.persona(2)]
    assert [a.normalized for a in unique_aliases(both, "persona_trigger")] == ["lilya"]
    assert persona_aliases(ren())[0].canonical_value == "ren"


_NAMES = st.sampled_from(["Sam", "sam", " @Sam ", "Ally", "bob", "Bob", "alice01", "Kai", "kai  x", "KAI X", "ren"])
_OWNER_KEYS = st.sampled_from(
    [ALICE, BOB, ParticipantKey.matrix_user("@m:host"), ParticipantKey.persona(3), ParticipantKey.webhook("9")]
)


@st.composite
def _catalogues(draw):  # type: ignore[no-untyped-def]
    aliases = []
    for _ in range(draw(st.integers(0, 6))):
        key = draw(_OWNER_KEYS)
        if key.kind == "discord_user":
            aliases += user_aliases(
                key,
                UserNames(
                    saved_nickname=draw(st.none() | _NAMES),
                    guild_display_name=draw(st.none() | _NAMES),
                    guild_nickname=draw(st.none() | _NAMES),
                    global_name=draw(st.none() | _NAMES),
                    username=draw(st.none() | _NAMES),
                    discord_id=key.id,
                ),
                expose_saved_nickname=draw(st.booleans()),
                effective_nickname=draw(st.none() | _NAMES),
            )
        elif key.kind == "matrix_user":
            aliases += bridge_alias(key.id, draw(_NAMES))
        elif key.kind == "webhook":
            aliases += webhook_alias(key.id, draw(_NAMES))
        else:
            aliases += persona_aliases(ren(persona_nickname=draw(_NAMES), trigger_words=tuple(draw(st.lists(_NAMES)))))
    return aliases


@given(_catalogues(), st.sampled_from(["output_mention", "tool_target", "input_reference"]))
def test_property_d09_no_offered_unique_alias_is_claimed_by_two_owners(aliases, purpose):  # type: ignore[no-untyped-def]
    offered = unique_aliases(aliases, purpose)
    for alias in offered:
        claimants = {a.owner for a in aliases if purpose in a.purposes and a.normalized == alias.normalized}
        assert claimants == {alias.owner}
    # Nothing unique is lost either: every value with a single claimant is offered.
    single = {
        a.normalized
        for a in aliases
        if purpose in a.purposes
        and len({b.owner for b in aliases if purpose in b.purposes and b.normalized == a.normalized}) == 1
    }
    assert {a.normalized for a in offered} == single
