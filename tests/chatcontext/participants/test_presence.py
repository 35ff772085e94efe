"""Presence and roles (participants.md H-12, H-13; §8 T-54)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chatcontext.core.participants.presence import describe_activity, format_duration, member_presence
from chatcontext.core.types import Activity, MemberInfo, Role
from chatcontext.participants.hydration import hydrate_participant_profiles
from tests.chatcontext.participants.builders import BO, NOW_MS, A, G
from tests.chatcontext.participants.hydration_builders import (
    build,
    ms,
    participant_turn,
    prepared,
    server,
    user_seed,
    world_deps,
)

MINUTE = 60_000
HOUR = 60 * MINUTE


def bob_playing_chess(deps):  # type: ignore[no-untyped-def]
    deps.members[BO] = replace(
        deps.members[BO],
        presence_status="online",
        activities=(Activity("playing", "Chess", details="Rated", started_at_ms=NOW_MS - (2 * HOUR + 5 * MINUTE)),),
        roles=(Role(G, "@everyone", 0), Role("11", "Member", 1), Role("12", "Mod", 5)),
    )


def test_t54_h12_h13_presence_and_roles():
    deps = world_deps()
    bob_playing_chess(deps)
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert "Bob\n- Status: Online - Playing Chess: Rated for 2 hours, 5 minutes" in items.presence.text
    assert "\n- Server Roles: Mod, Member\n" in items.profile.text + "\n"
    no_intent = world_deps(presence_intent=False)
    bob_playing_chess(no_intent)
    without = build(prepared([user_seed(A), user_seed(BO)]), no_intent)
    assert without.presence is None
    dm = build(prepared([user_seed(A), user_seed(BO)]), deps, srv=server(is_dm=True))
    assert "Bob\n- Status: Online (Direct Message)" in dm.presence.text


def test_h12_unknown_guild_and_missing_member():
    assert member_presence(None, is_dm=False, guild_available=False, presence_intent=True, now_ms=0).text == (
        "Status unknown"
    )
    assert member_presence(None, is_dm=False, guild_available=True, presence_intent=True, now_ms=0).text == (
        "Offline or status unknown"
    )
    no_intent = member_presence(None, is_dm=False, guild_available=True, presence_intent=False, now_ms=0)
    assert no_intent.text is None and no_intent.reason == "missing_data"


def test_h12_presence_error_hides_the_field_as_optional_failure():
    deps = world_deps()
    broken = Activity("playing", "Chess", started_at_ms="not a time")  # type: ignore[arg-type]
    deps.members[BO] = replace(deps.members[BO], presence_status="online", activities=(broken,))
    result = hydrate_participant_profiles(
        prepared([user_seed(BO)]),
        participant_turn(),
        deps=deps,
    )
    presence = next(f for f in result.profiles[0].fields if f.kind == "presence")
    assert not presence.visible and presence.reason == "optional_failure"
    assert result.diagnostics["read_failures"] == {"presence_reads": 1}


@pytest.mark.parametrize(
    ("activity", "expected"),
    [
        (
            Activity("streaming", "Art stream", started_at_ms=NOW_MS - 30 * MINUTE),
            "Streaming Art stream for 30 minutes",
        ),
        (
            Activity("listening", "Spotify", details="Song", state="Artist", started_at_ms=NOW_MS - 61_000),
            "Listening to Song by Artist on Spotify for 1 minute, 1 second",
        ),
        (Activity("listening", "Radio", details="Show", state="Host"), "Listening to Host - Show on Radio"),
        (Activity("listening", "Podcasts"), "Listening to Podcasts"),
        (Activity("watching", "a film", started_at_ms=NOW_MS - HOUR), "Watching a film for 1 hour"),
        (Activity("competing", "Finals", started_at_ms=NOW_MS - 26 * HOUR), "Competing in Finals for 1 day, 2 hours"),
        (
            Activity("custom", "Custom Status", state="busy", emoji_name="🔥", large_image_text="busy"),
            "Custom status: 🔥: busy",
        ),
        (Activity("custom", "Custom Status"), "Custom status"),
        (Activity("other", "Something", started_at_ms=NOW_MS - HOUR), "Something"),
        (
            Activity("playing", "Chess", large_image_text="Board", small_image_text="Chess"),
            "Playing Chess [Board]",
        ),
        (
            Activity("playing", "Game", state="Lobby", started_at_ms=NOW_MS - 10 * HOUR, ended_at_ms=NOW_MS - 9 * HOUR),
            "Playing Game: Lobby for 1 hour",
        ),
    ],
)
def test_h12_activity_texts(activity, expected):  # type: ignore[no-untyped-def]
    assert describe_activity(activity, NOW_MS) == expected


def test_h12_durations_and_status_words():
    assert format_duration(2 * HOUR + 5 * MINUTE + 9_000) == "2 hours, 5 minutes"
    assert format_duration(59 * MINUTE + 1_000) == "59 minutes, 1 second"
    assert format_duration(500) == ""
    member = MemberInfo(BO, presence_status="dnd", activities=(Activity("watching", "TV"), Activity("custom", "x")))
    text = member_presence(
        member, is_dm=False, guild_available=True, presence_intent=True, now_ms=ms("2026-05-21T09:00")
    )
    assert text.text == "Do Not Disturb - Watching TV, Custom status"
    idle = MemberInfo(BO, presence_status="idle")
    assert member_presence(idle, is_dm=False, guild_available=True, presence_intent=True, now_ms=0).text == "Away/Idle"
