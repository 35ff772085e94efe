"""Privacy levels, blacklist and impersonation exposure (participants.md §4 P-01..P-07, H-06, H-07;
§8 T-25, T-34..T-37, T-44, T-56)."""

from __future__ import annotations

import re
from dataclasses import replace

from chatcontext.core.participants.render import PING_INSTRUCTION_IMPERSONATION
from chatcontext.core.types import Activity, PrivacyLevel, Role
from chatcontext.participants.hydration import hydrate_participant_profiles
from chatcontext.participants.loaders import BatchRead
from tests.chatcontext.participants.builders import BO, A, E, G, erin_row
from tests.chatcontext.participants.hydration_builders import (
    alice_snapshot,
    all_item_text,
    bot_seed,
    build,
    memory,
    participant_turn,
    prepared,
    reminder,
    server,
    user_seed,
    world_deps,
)

PRONOUNS = "xe/xem-7Q"
TAGS = ("teal-scarf-9Z",)


def field(profile, kind):  # type: ignore[no-untyped-def]
    return next(f for f in profile.fields if f.kind == kind)


def rich_world(**changes: object):  # type: ignore[no-untyped-def]
    """Every user with a saved nickname, identity, appearance, timezone, memories and roles."""
    deps = world_deps(**changes)
    deps.rows[A] = replace(deps.rows[A], pronouns="she/her", physical_appearance_tags=("blue eyes",), timezone_offset=1)
    deps.rows[BO] = replace(
        deps.rows[BO], user_nickname="Bobby", pronouns=PRONOUNS, physical_appearance_tags=TAGS, timezone_offset=-5
    )
    deps.rows[E] = replace(deps.rows[E], user_nickname="Eri", gender_identity="woman", physical_appearance_tags=TAGS)
    roles = (Role(G, "@everyone", 0), Role("77", "Mod", 5))
    online = {"presence_status": "online", "roles": roles}
    deps.members = {k: replace(v, **online) for k, v in deps.members.items()}  # type: ignore[arg-type]
    deps.memories = [
        memory(1, 1, "alice memory one", lineage=10001),
        memory(2, 2, "bob memory two", lineage=10001),
        memory(3, 3, "erin memory three", lineage=0),
    ]
    deps.reminders = [reminder(9, BO, "bob reminder")]
    return deps


def entry(items, heading_start):  # type: ignore[no-untyped-def]
    text = items.profile.text
    start = text.index("\n\n" + heading_start) + 2
    end = text.find("\n\n", start)
    return text[start:end].splitlines() if end != -1 else text[start:].splitlines()


def test_t25_h06_p01_h07_read_errors_fail_closed_for_that_participant_only():
    deps = rich_world(blacklist_failures={BO}, privacy_failures={E})
    items = build(prepared([user_seed(A), user_seed(BO), user_seed(E)]), deps)
    bob = entry(items, "Bob")
    assert bob[0].startswith("Bob (")  # no saved-name use: live name, not "Bobby"
    assert not any(line.startswith(("- Memories", "- Pronouns")) for line in bob)
    assert "- Bob's Physical Appearance: teal-scarf-9Z" in bob  # blacklist keeps appearance (P-06)
    erin = entry(items, "Erin")
    assert erin[0].startswith("Erin (")
    assert not any("Memories" in line or "Appearance" in line for line in erin)
    alice = entry(items, "Ally")
    assert "- Memories: ID:1 alice memory one" in alice
    assert "- Pronouns: she/her" in alice
    text = all_item_text(items)
    assert "bob memory two" not in text and "erin memory three" not in text and PRONOUNS not in text
    failures = items.diagnostics["hydration"]["read_failures"]
    assert failures == {"blacklist_reads": 1, "privacy_reads": 1}


def test_h06_a_raising_batch_fails_every_requested_participant_closed():
    deps = rich_world()

    def broken(disc_ids):  # type: ignore[no-untyped-def]
        raise RuntimeError("database down")

    deps.load_privacy_levels = broken  # type: ignore[method-assign]
    items = build(prepared([user_seed(A), user_seed(BO), user_seed(E)]), deps)
    text = all_item_text(items)
    assert "alice memory one" in text  # the triggerer's privacy comes from the snapshot
    assert "bob memory two" not in text and "Bobby" not in text and PRONOUNS not in text


def test_h06_an_invalid_stored_privacy_level_reads_as_full():
    deps = rich_world()
    deps.load_privacy_levels = lambda ids: BatchRead({BO: 7})  # type: ignore[method-assign]
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert "bob memory two" not in all_item_text(items)
    assert "Bobby" not in all_item_text(items)


def test_t34_p05_h08_h16_impersonation_shows_only_the_impersonated_users_memories():
    deps = rich_world()
    items = build(
        prepared([user_seed(A), user_seed(BO), bot_seed()]),
        deps,
        impersonated=BO,
        impersonated_identity_name="Bob the Builder",
    )
    text = items.profile.text
    assert "bob memory two" in text
    assert "alice memory one" not in text
    assert "Physical Appearance" not in text and "timezone" not in text
    assert "\n\nBob the Builder (" in text
    assert "(This is you!)" not in text
    assert "\n\nTomori\n" in text
    assert PING_INSTRUCTION_IMPERSONATION in text
    assert "Tomori writes" not in text


def test_t35_p03_partial_user_keeps_saved_name_but_loses_enrichments():
    deps = rich_world()
    deps.rows[BO] = replace(deps.rows[BO], privacy_level=PrivacyLevel.PARTIAL)
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    bob = entry(items, "Bobby")
    assert bob[0].startswith("Bobby (")
    assert not any(
        line.startswith(("- Bobby's Physical", "- Pronouns", "- Memories", "- Server Roles")) for line in bob
    )
    assert "- Bobby's timezone: UTC-5" in bob
    assert "- Reminders:" in bob
    assert items.presence is not None and "Bobby" not in items.presence.text
    assert "Ally\n- Status: Online" in items.presence.text


def test_t36_p02_p07_r14_h10_full_user_has_no_saved_name_anywhere():
    deps = rich_world()
    erin_full = replace(deps.rows[E], privacy_level=PrivacyLevel.FULL)
    deps.rows[E] = erin_full
    deps.memories.append(memory(4, 1, "{user} met <@" + E + "> at the fair", lineage=10001))
    prep = prepared([user_seed(A), user_seed(E, "real_mention")], referenced_rows={E: erin_full})
    items = build(prep, deps)
    assert "\n\nErin (Mention: @{erin})" in items.profile.text
    assert "Ally met erin at the fair" in items.profile.text
    text = all_item_text(items)
    assert re.search(r"\bEri\b", text) is None
    assert "erin memory three" not in text and "woman" not in text and TAGS[0] not in text
    erin_user = next(u for u in items.conversation_users if u["target_id"] == E)
    assert "Eri" not in erin_user["aliases"]


def test_t37_p06_h09_h10_blacklisted_user_keeps_presence_roles_appearance_and_reminders():
    deps = rich_world(blacklisted={A})
    deps.reminders.append(reminder(8, A, "alice reminder"))
    bob_trigger = alice_snapshot(triggerer_id=BO, triggerer_row=deps.rows[BO], preloaded_member=deps.members[BO])
    prep = prepared([user_seed(A), user_seed(BO)])
    items = build(prep, deps, snapshot=bob_trigger)
    alice = entry(items, "Alice_srv")
    # effective "alice_srv" and formatted "Alice_srv" share a normalization: the first one is kept (D-08).
    assert alice[0] == "Alice_srv (Mention: @{alice_srv}; Aliases: @{Alice}, @{alice01})"
    assert "- Alice_srv's Physical Appearance: blue eyes" in alice
    assert "- Server Roles: Mod" in alice
    assert "- Reminders:" in alice
    assert not any(line.startswith(("- Memories", "- Pronouns", "- Gender")) for line in alice)
    assert "Alice_srv\n- Status: Online" in items.presence.text
    result = hydrate_participant_profiles(
        prep,
        participant_turn(snapshot=bob_trigger),
        deps=deps,
    )
    ally = next(a for a in result.profiles[0].aliases if a.value == "Ally")
    assert ally.exposure == "lookup_only" and ally.purposes == {"input_reference"}


def test_p03_personalization_off_keeps_appearance_and_presence_only():
    deps = rich_world()
    items = build(prepared([user_seed(A), user_seed(BO)]), deps, srv=server(personal_memories_enabled=False))
    bob = entry(items, "Bob")
    assert "- Bob's Physical Appearance: teal-scarf-9Z" in bob
    assert not any(line.startswith(("- Memories", "- Pronouns")) for line in bob)
    assert "Bobby" not in all_item_text(items)
    assert "Bob\n- Status: Online" in items.presence.text


def test_t44_r01_no_presence_item_when_no_status_is_visible():
    deps = rich_world()
    deps.rows = {k: replace(v, privacy_level=PrivacyLevel.PARTIAL) for k, v in deps.rows.items()}
    snapshot = alice_snapshot(triggerer_privacy_level=PrivacyLevel.PARTIAL)
    items = build(prepared([user_seed(A), user_seed(BO)]), deps, impersonated=BO, snapshot=snapshot)
    assert items.presence is None
    assert items.profile is not None and items.current_context is not None
    assert [i.metadata_tag for i in items.items] == ["knowledge_users_in_conversation", "knowledge_current_context"]


def test_t56_p04_memory_hidden_reasons():
    def reason(deps, **kwargs):  # type: ignore[no-untyped-def]
        result = hydrate_participant_profiles(
            prepared([user_seed(A), user_seed(BO)]),
            participant_turn(impersonated=kwargs.get("impersonated"), snapshot=alice_snapshot()),
            deps=deps,
        )
        bob = next(p for p in result.profiles if p.key.id == BO)
        memories = field(bob, "personal_memories")
        assert not memories.visible
        return memories.reason

    partial = rich_world()
    partial.rows[BO] = replace(partial.rows[BO], privacy_level=PrivacyLevel.PARTIAL)
    assert reason(partial) == "privacy"
    partial.blacklisted = {BO}
    assert reason(partial) == "blacklist"
    assert reason(rich_world(), impersonated=A) == "impersonation"


def test_p01_absent_privacy_row_reads_as_minimal():
    deps = rich_world()
    deps.load_privacy_levels = lambda ids: BatchRead({})  # type: ignore[method-assign]
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert "bob memory two" in items.profile.text


def test_p02_erin_row_default_is_personalized():
    assert erin_row().privacy_level == PrivacyLevel.MINIMAL
    deps = rich_world()
    items = build(prepared([user_seed(A), user_seed(E)]), deps)
    assert "\n\nEri (" in items.profile.text


def test_h12_presence_activity_hidden_below_minimal():
    deps = rich_world()
    deps.members[BO] = replace(deps.members[BO], activities=(Activity("playing", "SecretGame-4K"),))
    deps.rows[BO] = replace(deps.rows[BO], privacy_level=PrivacyLevel.PARTIAL)
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert "SecretGame-4K" not in all_item_text(items)
