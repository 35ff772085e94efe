"""Rendering (participants.md §5 R-01..R-13; §8 T-39..T-43, T-45, T-46 item shape, T-51, T-62)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from chatcontext.core.participants.render import (
    PROFILE_HEADER,
    RenderClock,
    render_participant_prompt,
)
from chatcontext.core.participants.timefmt import (
    format_clock,
    format_reminder,
    format_schedule_time,
    time_of_day_phrase,
    utc_label,
)
from chatcontext.core.types import Activity, MemberInfo, UserRow
from chatcontext.participants.items import render_clock
from tests.chatcontext.participants.builders import BO, CHANNEL, NOW_MS, A, msg
from tests.chatcontext.participants.hydration_builders import (
    bot_seed,
    build,
    discover,
    matrix_seed,
    ms,
    participant_turn,
    prepared,
    server,
    user_seed,
    world_deps,
)

KIM_X = "400000000000000021"
KIM_Y = "400000000000000022"


def headings(items):  # type: ignore[no-untyped-def]
    """Entry headings of the profile block (the first line of every entry)."""
    body = items.profile.text.split("\n\n")[2:]
    return [chunk.splitlines()[0] for chunk in body]


# --- headings ------------------------------------------------------------------------


def test_t51_r06_r07_d08_r05_fixture_world_profile_block():
    prep = discover([msg("1", A, "hello"), msg("2", BO, "hi there")])
    items = build(prep, world_deps())
    text = items.profile.text
    assert text.startswith("[System: " + PROFILE_HEADER + "\n\n")
    assert headings(items)[:3] == [  # H-22: the bot first, then users by id, whoever spoke first
        "Tomori (This is you!)",
        "Ally (Mention: @{alice_srv}; Aliases: @{Ally}, @{Alice}, @{alice01})",
        "Bob (Mention: @{Bob})",
    ]
    assert text.endswith("\n]")
    assert "- Status:" not in text


def test_t39_r07_colliding_primary_alias_promotes_the_first_unique_alias():
    deps = world_deps()
    deps.members[A] = replace(deps.members[A], global_name="Sam")
    deps.members[BO] = replace(deps.members[BO], global_name="Sam", display_name="Sam")
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert headings(items) == [
        "Ally (Mention: @{alice_srv}; Aliases: @{Ally}, @{alice01})",
        "Sam (Mention: @{bob})",
    ]


def test_t40_r07_all_colliding_aliases_need_clarification():
    deps = world_deps()
    deps.rows[KIM_X] = UserRow(21, KIM_X, username="kim")
    deps.rows[KIM_Y] = UserRow(22, KIM_Y, username="kim_")
    deps.members[KIM_X] = MemberInfo(KIM_X, username="kim", display_name="kim")
    deps.members[KIM_Y] = MemberInfo(KIM_Y, username="kim_", global_name="Kim", display_name="Kim")
    items = build(prepared([user_seed(KIM_X), user_seed(KIM_Y)]), deps)
    assert headings(items) == ["Kim (Mention requires clarification)", "Kim (Mention: @{kim_})"]


def test_t41_r07_d09_h17_matrix_name_claims_a_value_without_being_offered():
    items = build(
        prepared([user_seed(BO), matrix_seed("@bob:matrix.org")], matrix_users={"@bob:matrix.org": "bob"}), world_deps()
    )
    assert headings(items) == ["Bob (Mention requires clarification)", "bob"]


def test_r08_non_mentionable_user_shows_no_mention_but_unique_aliases():
    items = build(prepared([user_seed(A, "visible_author", mentionable=False)]), world_deps())
    assert headings(items) == ["Ally (Aliases: @{Ally}, @{Alice}, @{alice01})"]


def test_r07_bot_heading_has_no_suffix_on_impersonation():
    items = build(prepared([user_seed(A), bot_seed()]), world_deps(), impersonated=A)
    assert headings(items)[0] == "Tomori"  # H-22: the bot profile comes first


# --- ..R-12 ----------------------------------------------------------------------


def test_t42_r03_r09_r12_r02_profile_text_ignores_clock_and_presence():
    deps = world_deps()
    deps.rows[A] = replace(deps.rows[A], timezone_offset=1)
    started = ms("2026-05-21T09:55")
    deps.members[BO] = replace(
        deps.members[BO], presence_status="online", activities=(Activity("playing", "Chess", started_at_ms=started),)
    )
    prep = prepared([user_seed(A), user_seed(BO), bot_seed()])
    at_10 = build(prep, deps, now_ms=ms("2026-05-21T10:00"))
    at_1005 = build(prep, deps, now_ms=ms("2026-05-21T10:05"))
    assert at_10.profile.text == at_1005.profile.text
    assert "Bob\n- Status: Online - Playing Chess for 5 minutes" in at_10.presence.text
    assert "Bob\n- Status: Online - Playing Chess for 10 minutes" in at_1005.presence.text
    assert at_10.current_context.text != at_1005.current_context.text
    assert "- Ally: May 21, 2026 | 11:00 AM | Thursday (UTC+1)" in at_10.current_context.text
    deps.members[BO] = replace(deps.members[BO], presence_status="dnd", activities=())
    assert build(prep, deps, now_ms=ms("2026-05-21T10:00")).profile.text == at_10.profile.text


def test_r02_renderer_reads_only_its_inputs():
    deps = world_deps()
    items = build(prepared([user_seed(A), bot_seed()]), deps)
    assert items.profile is not None
    from chatcontext.participants.hydration import hydrate_participant_profiles

    hydrated = hydrate_participant_profiles(
        prepared([user_seed(A), bot_seed()]),
        participant_turn(),
        deps=deps,
    )
    clock_a = RenderClock("A-time", "UTC+9", "phrase-a")
    clock_b = RenderClock("B-time", "UTC+9", "phrase-b")
    kwargs = {"bot_name": "Tomori", "is_impersonation": False, "is_dm": False, "channel_name": "general"}
    first = render_participant_prompt(hydrated.profiles, [], clock_a, channel_id=CHANNEL, **kwargs)  # type: ignore[arg-type]
    second = render_participant_prompt(hydrated.profiles, [], clock_b, channel_id=CHANNEL, **kwargs)  # type: ignore[arg-type]
    assert first.profile_text == second.profile_text
    assert "A-time" in first.current_context_text and "B-time" in second.current_context_text


def test_t62_r10_r11_current_context_block():
    items = build(prepared([user_seed(A)]), world_deps())
    assert items.current_context.text == (
        "[System: Conversation context: #general (ID: 300000000000000001).\n"
        "Current time: May 21, 2026 | 6:30 PM | Thursday (UTC+9), It's evening.\n]"
    )
    west = build(prepared([user_seed(A)]), world_deps(), srv=server(timezone_offset=-5.0))
    assert "Current time: May 21, 2026 | 4:30 AM | Thursday (UTC-5), It's early in the morning." in (
        west.current_context.text
    )


def test_t43_r10_dm_context_line():
    items = build(prepared([user_seed(A)]), world_deps(), srv=server(is_dm=True))
    assert items.current_context.text.startswith("[System: Conversation context: Direct Message.\nCurrent time: ")


def test_r12_local_times_listed_once_for_visible_timezones():
    deps = world_deps()
    deps.rows[A] = replace(deps.rows[A], timezone_offset=1)
    deps.rows[BO] = replace(deps.rows[BO], timezone_offset=-5)
    items = build(prepared([user_seed(A), user_seed(BO)]), deps)
    assert items.current_context.text.endswith(
        "It's evening.\nParticipant local times:\n"
        "- Ally: May 21, 2026 | 10:30 AM | Thursday (UTC+1)\n"
        "- Bob: May 21, 2026 | 4:30 AM | Thursday (UTC-5)\n]"
    )
    assert "- Ally's timezone: UTC+1" in items.profile.text


@pytest.mark.parametrize(
    ("hour", "phrase"),
    [
        (0, "It's very late at night"),
        (3, "It's very late at night"),
        (4, "It's early in the morning"),
        (6, "It's early in the morning"),
        (7, "It's morning"),
        (11, "It's morning"),
        (12, "It's around midday"),
        (13, "It's afternoon"),
        (16, "It's afternoon"),
        (17, "It's evening"),
        (19, "It's evening"),
        (20, "It's late at night"),
        (23, "It's late at night"),
    ],
)
def test_r11_time_of_day_phrases(hour, phrase):  # type: ignore[no-untyped-def]
    assert time_of_day_phrase(ms(f"2026-05-21T{hour:02d}:15"), 0) == phrase


def test_r11_clock_and_utc_labels():
    assert format_clock(ms("2026-05-21T00:05"), 0) == "May 21, 2026 | 12:05 AM | Thursday"
    assert format_clock(ms("2026-05-21T12:00"), 0) == "May 21, 2026 | 12:00 PM | Thursday"
    assert format_clock(ms("2026-05-21T20:00"), 5.5) == "May 22, 2026 | 1:30 AM | Friday"
    assert [utc_label(o) for o in (9, -5, 0, 5.5, -3.5)] == ["UTC+9", "UTC-5", "UTC+0", "UTC+5.5", "UTC-3.5"]


# --- R-13 ---------------------------------------------------------------------------------------------


def test_t45_r13_reminder_line():
    line = format_reminder(
        reminder_id=7,
        purpose="Take meds",
        reminder_time_ms=ms("2026-05-21T09:00"),
        repetition_interval_hours=24,
        server_offset_hours=9,
    )
    assert line == 'ID:7 "Take meds" (scheduled for Thu, May 21, 2026, 06:00 PM (UTC+9), repeats every 24 hour(s))'


def test_r13_without_id_or_repeat_and_single_digit_day():
    line = format_reminder(
        reminder_id=None,
        purpose="Walk",
        reminder_time_ms=ms("2026-06-05T03:04"),
        repetition_interval_hours=None,
        server_offset_hours=-5,
    )
    assert line == '"Walk" (scheduled for Thu, Jun 4, 2026, 10:04 PM (UTC-5))'
    assert format_schedule_time(ms("2026-05-21T12:00"), 0) == "Thu, May 21, 2026, 12:00 PM"


# --- R-01 item shape (placement itself is the builder's, R-16..R-18) ---------------------------------


def test_t46_r01_r18_items_carry_tags_roles_and_tail_placement():
    deps = world_deps()
    deps.members[A] = replace(deps.members[A], presence_status="online")
    items = build(prepared([user_seed(A), bot_seed()]), deps)
    assert [(i.role, i.metadata_tag, i.placement) for i in items.items] == [
        ("user", "knowledge_users_in_conversation", "inline"),
        ("user", "knowledge_user_status", "tail"),
        ("user", "knowledge_current_context", "tail"),
    ]
    assert items.profile.participant_target_index == items.target_index
    assert items.profile.conversation_users == items.conversation_users
    assert items.presence.participant_target_index is None


def test_render_clock_only_for_visible_timezones():
    deps = world_deps()
    deps.rows[A] = replace(deps.rows[A], timezone_offset=2)
    from chatcontext.participants.hydration import hydrate_participant_profiles

    hydrated = hydrate_participant_profiles(
        prepared([user_seed(A), user_seed(BO)]),
        participant_turn(impersonated=BO),
        deps=deps,
    )
    assert render_clock(hydrated.profiles, now_ms=NOW_MS, server_offset=9).local_times == {}
