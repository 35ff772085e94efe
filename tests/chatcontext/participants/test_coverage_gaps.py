"""Rules of participants.md whose behaviour no other test pinned exactly (found while writing
docs/spec-coverage.md): D-14, P-04 for the fields other than memories, and the presence block
layout of R-05/R-09."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.participants.aliases import persona_aliases
from chatcontext.core.participants.render import BOT_STATUS_LINE, PRESENCE_HEADER
from chatcontext.core.types import PrivacyLevel, Role
from chatcontext.participants.discovery import discover_shared_references
from chatcontext.participants.hydration import hydrate_participant_profiles
from chatcontext.participants.scope import freeze_input
from tests.chatcontext.participants.builders import (
    BO,
    NOW_MS,
    A,
    FakeCandidateSource,
    FakeMemberDirectory,
    G,
    lilya,
    msg,
    preparation_input,
    ren,
    tomori,
    world_members,
    world_rows,
)
from tests.chatcontext.participants.hydration_builders import (
    alice_snapshot,
    bot_seed,
    build,
    participant_turn,
    prepared,
    user_seed,
    world_deps,
)


def test_d14_shared_persona_candidates_carry_the_full_catalogue_in_catalog_order() -> None:
    """D-14: one candidate per reasoned persona, catalog order, after the user candidates (D-24),
    aliases = the whole D-06 persona catalogue, display name = nickname. D-26 scoping happens later."""
    personas = [tomori(), lilya(), ren()]
    inp = preparation_input([msg("1", BO, "ren and lil, ask alice_srv")], persona_list=personas, responders=[1])
    shared = discover_shared_references(
        freeze_input(inp),
        candidate_source=FakeCandidateSource(world_rows()),
        member_directory=FakeMemberDirectory.of(world_members()),
        now_ms=NOW_MS,
    )
    seeds = shared.reference_plan.seeds
    assert [s.key.serialized for s in seeds] == [f"discord_user:{A}", "persona:1", "persona:2", "persona:3"]
    for seed, persona in zip(seeds[1:], personas, strict=True):
        assert [(a.source, a.value) for a in seed.aliases] == [(a.source, a.value) for a in persona_aliases(persona)]
        assert seed.source_display_name == persona.persona_nickname
    assert [s.reasons for s in seeds[1:]] == [
        {"co_responder"},
        {"persona_trigger_reference"},
        {"persona_trigger_reference"},
    ]
    # Lilya's catalogue has both triggers; the scoped plan of a turn keeps only the nickname (D-26).
    assert [a.value for a in seeds[2].aliases] == ["Lilya", "lilya", "lil"]


def _reasons(deps, *, impersonated: str | None = None) -> dict[str, dict[str, str | None]]:  # type: ignore[no-untyped-def]
    result = hydrate_participant_profiles(
        prepared([user_seed(A), user_seed(BO)]),
        participant_turn(
            impersonated=impersonated,
            snapshot=alice_snapshot(triggerer_row=deps.rows[A], preloaded_member=deps.members[A]),
        ),
        deps=deps,
    )
    return {p.key.id: {f.kind: (None if f.visible else f.reason) for f in p.fields} for p in result.profiles}


def _rich_deps():  # type: ignore[no-untyped-def]
    deps = world_deps()
    roles = (Role(G, "@everyone", 0), Role("77", "Mod", 5))
    for user in (A, BO):
        deps.rows[user] = replace(
            deps.rows[user], pronouns="they/them", physical_appearance_tags=("tall",), timezone_offset=1
        )
        deps.members[user] = replace(deps.members[user], presence_status="online", roles=roles)
    return deps


def test_p04_hidden_reasons_of_appearance_timezone_presence_roles_and_identity() -> None:
    """P-04: appearance below MINIMAL → `privacy`; presence, roles, identity not exposed → `privacy`;
    appearance and timezone on an impersonation turn → `impersonation`; an allowed field without data
    → `missing_data` (H-11)."""
    deps = _rich_deps()
    deps.rows[BO] = replace(deps.rows[BO], privacy_level=PrivacyLevel.PARTIAL)
    plain = _reasons(deps)
    assert plain[BO] == {
        "physical_appearance": "privacy",
        "naming": "missing_data",
        "identity": "privacy",
        "timezone": None,
        "presence": "privacy",
        "roles": "privacy",
        "personal_memories": "privacy",
        "human_reminders": "missing_data",
    }
    alice = plain[A]
    assert [alice[k] for k in ("physical_appearance", "identity", "timezone", "presence", "roles")] == [None] * 5
    assert alice["personal_memories"] == "missing_data"  # allowed, but Alice has no memories

    impersonating = _reasons(_rich_deps(), impersonated=BO)
    assert impersonating[A]["physical_appearance"] == "impersonation"
    assert impersonating[A]["timezone"] == "impersonation"
    assert impersonating[A]["personal_memories"] == "impersonation"
    assert impersonating[A]["presence"] is None  # presence follows the other columns (P-03)


def test_r05_r09_presence_block_layout() -> None:
    """R-09: `[System: ` + PRESENCE_HEADER + blank line + entries joined by a blank line + `\\n]`;
    the bot's entry carries ` (This is you!)` and BOT_STATUS_LINE (R-05); a MINIMAL member without
    presence data reads "Offline or status unknown" (H-12)."""
    deps = world_deps()
    deps.members[A] = replace(deps.members[A], presence_status="online")
    assert deps.members[BO].presence_status is None
    items = build(prepared([user_seed(A), user_seed(BO), bot_seed()]), deps)
    assert items.presence is not None
    assert items.presence.text == (  # in the stable order of H-22: the bot, then users by id
        f"[System: {PRESENCE_HEADER}\n\n"
        f"Tomori (This is you!)\n{BOT_STATUS_LINE}\n\n"
        "Ally\n- Status: Online\n\n"
        "Bob\n- Status: Offline or status unknown\n]"
    )
    assert BOT_STATUS_LINE == "- Status: Online - present and replying here"
