"""Shared reference discovery (participants.md D-10..D-24, D-35; §8 T-04..T-14, T-57, T-61) and the
candidate read (D-16, D-17)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.types import Author, ChatIncoming, DiscordMessage, LockedTurn, MemberInfo, UserRow
from chatcontext.participants.candidates import (
    CandidateEvidence,
    CandidateQuery,
    CandidateRow,
    is_eligible,
    load_candidate_rows,
)
from chatcontext.participants.discovery import history_text, real_mentions, standalone_position
from chatcontext.participants.prepare import prepare_participant_context
from chatcontext.participants.scope import request_scope_for
from tests.chatcontext.participants.builders import (
    ACTIVE,
    BO,
    CHANNEL,
    NO_EVIDENCE,
    NOW_MS,
    A,
    B,
    D,
    E,
    F,
    FakeCandidateSource,
    FakeMemberDirectory,
    block_notice,
    db_activity,
    db_server,
    db_user,
    lilya,
    msg,
    preparation_input,
    tomori,
    world_members,
    world_rows,
)
from tests.chatcontext.participants.builders import (
    personas as world_personas,
)


def prepare(history, *, rows=None, members=None, directory=None, **kwargs):  # type: ignore[no-untyped-def]
    source = FakeCandidateSource(world_rows() if rows is None else rows)
    if directory is None:
        directory = FakeMemberDirectory.of(world_members() if members is None else members)
    prepared = prepare_participant_context(
        preparation_input(history, **kwargs),
        candidate_source=source,
        member_directory=directory,
        now_ms=NOW_MS,
    )
    return prepared, source, directory


def seeds(prepared):  # type: ignore[no-untyped-def]
    return [s.key.serialized for s in prepared.discovery_plan.seeds]


def seed(prepared, serialized):  # type: ignore[no-untyped-def]
    (found,) = [s for s in prepared.discovery_plan.seeds if s.key.serialized == serialized]
    return found


def rejections(prepared):  # type: ignore[no-untyped-def]
    return prepared.diagnostics["rejection_counts"]


# --- D-10 / D-16 helpers ----------------------------------------------------------------------


def test_d10_history_text_skips_block_notices_and_empty_entries():
    history = [
        msg("1", A, "one"),
        block_notice("2", E, "@Ally"),
        msg("3", BO, None),
        msg("4", BO, ""),
        msg("5", A, "two"),
    ]
    assert history_text(history) == "one\ntwo"


def test_d16_real_mentions_keep_first_positions():
    assert real_mentions(f"x <@{E}> y <@!{A}> <@{E}> <@&55> <#66>") == {E: 2, A: 26}


def test_d20_standalone_rule_details():
    assert standalone_position("alice smith", "hi Alice\n  Smith!") == 3
    assert standalone_position("kai", "@@kai") == 2
    assert standalone_position("kai", "kai_") is None
    assert standalone_position("kai", "ékai") is None


# --- §8 scenarios -------------------------------------------------------------------------------


def test_t04_d21_d23_mention_of_a_non_author_adds_a_mentionable_seed_after_visible_authors():
    prepared, _, _ = prepare([msg("1", A, f"have you seen <@{E}>?"), msg("2", BO, "no")])
    assert seeds(prepared) == [f"discord_user:{A}", f"discord_user:{BO}", f"bot:{B}", f"discord_user:{E}"]
    erin = seed(prepared, f"discord_user:{E}")
    assert erin.reasons == {"real_mention"}
    assert erin.capabilities == {"mentionable"}
    assert prepared.referenced_user_ids == [E]
    assert prepared.referenced_user_rows[E].user_disc_id == E


def test_t05_d17_d21_d36_mention_of_an_ineligible_default_row_adds_nobody():
    dave = CandidateRow(UserRow(4, D, username="dave"), NO_EVIDENCE)
    members = [*world_members(), MemberInfo(D, username="dave", display_name="dave")]
    prepared, _, _ = prepare([msg("1", A, f"<@{D}> hi")], rows=[*world_rows(), dave], members=members)
    assert f"discord_user:{D}" not in seeds(prepared)
    assert rejections(prepared)["ineligible_state"] == 1


def test_t06_d20_unique_text_alias_references_a_non_author():
    prepared, _, _ = prepare([msg("1", BO, "ask alice_srv about it")])
    alice = seed(prepared, f"discord_user:{A}")
    assert alice.reasons == {"unique_text_alias"}
    assert alice.capabilities == {"mentionable"}
    assert alice.source_display_name == "Ally"


def test_t07_d20_an_alias_shared_by_two_members_adds_nobody():
    sam1 = CandidateRow(UserRow(11, "400000000000000011", username="sam_a", global_name="Sam"), ACTIVE)
    sam2 = CandidateRow(UserRow(12, "400000000000000012", username="sam_b", global_name="Sam"), ACTIVE)
    members = [
        *world_members(),
        MemberInfo("400000000000000011", username="sam_a", global_name="Sam"),
        MemberInfo("400000000000000012", username="sam_b", global_name="Sam"),
    ]
    prepared, _, _ = prepare([msg("1", BO, "Sam said hi")], rows=[*world_rows(), sam1, sam2], members=members)
    assert seeds(prepared) == [f"discord_user:{BO}", f"bot:{B}"]
    assert rejections(prepared)["ambiguous_alias"] == 1
    assert prepared.diagnostics["alias_reference_diagnostics"]["ambiguous"] == 1


@pytest.mark.parametrize(
    ("text", "referenced"), [("kaiser", False), ("hey @kai!", True), ("x@kai", False), ("KAI.", True)]
)
def test_t08_d20_standalone_alias_boundaries(text, referenced):  # type: ignore[no-untyped-def]
    kai_id = "400000000000000021"
    kai = CandidateRow(UserRow(21, kai_id, username="kai"), ACTIVE)
    members = [*world_members(), MemberInfo(kai_id, username="kai")]
    prepared, _, _ = prepare([msg("1", BO, text)], rows=[*world_rows(), kai], members=members)
    assert (f"discord_user:{kai_id}" in seeds(prepared)) is referenced


def test_t09_d18_bot_and_non_member_rows_are_rejected_with_targeted_lookups_only():
    helper_bot = "400000000000000031"
    ghost = "400000000000000032"
    rows = [
        *world_rows(),
        CandidateRow(UserRow(31, helper_bot, username="helperbot"), ACTIVE),
        CandidateRow(UserRow(32, ghost, username="ghost"), ACTIVE),
    ]
    directory = FakeMemberDirectory.of(world_members())
    directory.fetchable[helper_bot] = MemberInfo(helper_bot, username="helperbot", is_bot=True)
    prepared, _, _ = prepare(
        [msg("1", A, f"<@{helper_bot}> and <@{ghost}>, helperbot ghost")], rows=rows, directory=directory
    )
    assert rejections(prepared)["bot"] == 1
    assert rejections(prepared)["non_member"] == 1
    assert f"discord_user:{helper_bot}" not in seeds(prepared)
    assert f"discord_user:{ghost}" not in seeds(prepared)
    assert directory.full_list_requests == 0
    assert sorted(directory.fetches) == sorted([helper_bot, ghost])  # one targeted fetch each
    assert prepared.diagnostics["external_calls"]["member_fetches"] == 2


def test_t10_d22_existing_participant_rejection():
    prepared, _, _ = prepare([msg("1", A, "hi"), msg("2", BO, f"<@{A}> look")])
    assert seeds(prepared).count(f"discord_user:{A}") == 1
    assert seed(prepared, f"discord_user:{A}").reasons == {"visible_author"}
    assert rejections(prepared)["existing_participant"] == 1
    assert prepared.referenced_user_ids == []


def test_t11_d10_d15_u2_block_notice_text_is_never_scanned():
    history = [msg("1", BO, "hello"), block_notice("2", E, "@Ally and <@400000000000000001> said tomori")]
    prepared, source, _ = prepare(history, visible=[BO, B], responders=[])
    assert f"discord_user:{A}" not in seeds(prepared)
    assert rejections(prepared)["blocked_source"] == 1
    assert "Ally" not in source.queries[0].history_text
    assert "persona:1" not in seeds(prepared)


def test_t12_d15_unavailable_guild_yields_persona_candidates_only():
    directory = FakeMemberDirectory.of(world_members())
    directory.guild_available = False
    prepared, source, _ = prepare(
        [msg("1", A, f"<@{E}> alice_srv ren")], directory=directory, responders=[1, 3], visible=[A, B]
    )
    assert seeds(prepared) == [f"discord_user:{A}", f"bot:{B}", "persona:3"]
    assert rejections(prepared)["missing_guild"] == 1
    assert source.reads == 0
    assert prepared.diagnostics["candidate_count"] == 2  # Tomori (co-responder) and Ren


def test_d15_no_text_means_no_candidate_read_and_no_missing_guild():
    prepared, source, _ = prepare([msg("1", A, None)], directory=None)
    assert source.reads == 0
    assert rejections(prepared)["missing_guild"] == 0
    prepared, source, _ = prepare([msg("1", A, "")], directory=FakeMemberDirectory(guild_available=False))
    assert rejections(prepared)["missing_guild"] == 0


def test_t13_d11_d12_d35_d14_trigger_reference_under_deliberate_mode_never_changes_responders():
    locked = LockedTurn(
        ChatIncoming(DiscordMessage("9", CHANNEL, author=Author(A), created_timestamp=0)),
        CHANNEL,
        triggered_persona_ids=(1,),
    )
    inp = preparation_input(
        [msg("1", A, "LIIILYAAA look")],
        persona_list=[tomori(), lilya(public_attribute="Sings off-key")],
        responders=list(locked.triggered_persona_ids),
    )
    prepared = prepare_participant_context(
        inp,
        request_scope=request_scope_for(locked),
        candidate_source=FakeCandidateSource(world_rows()),
        member_directory=FakeMemberDirectory.of(world_members()),
        now_ms=NOW_MS,
    )
    lilya_seed = seed(prepared, "persona:2")
    assert lilya_seed.reasons == {"persona_trigger_reference"}
    assert [a.source for a in lilya_seed.aliases] == ["persona_nickname"]
    assert lilya_seed.capabilities == set()
    # D-35: context only — the turn plan and the responder input are untouched.
    assert locked.triggered_persona_ids == (1,)
    assert inp.responder_persona_ids == [1]
    assert not {"responder_persona_ids", "turn_plan"} & set(vars(prepared))


def test_t14_d26_triggered_persona_without_public_profile_is_not_a_seed():
    prepared, _, _ = prepare([msg("1", A, "lilya")], responders=[1])
    assert "persona:2" not in seeds(prepared)


def test_t57_d23_d27_referenced_users_order_by_earliest_evidence():
    history = [msg("1", BO, f"<@{E}> then later alice_srv")]
    prepared, _, _ = prepare(history, matrix_users={"@m:host": "m"})
    assert seeds(prepared) == [
        f"discord_user:{BO}",
        f"bot:{B}",
        f"discord_user:{E}",
        f"discord_user:{A}",
        "matrix_user:@m:host",
    ]
    assert prepared.referenced_user_ids == [E, A]


def test_d23_ties_are_broken_by_snowflake_ascending():
    # "Kai" and "Kai Lee" are distinct unique aliases whose standalone matches both start at 0.
    kai, kai_lee = "400000000000000051", "400000000000000052"
    rows = [
        CandidateRow(UserRow(52, kai_lee, username="kl", global_name="Kai Lee"), ACTIVE),
        CandidateRow(UserRow(51, kai, username="k", global_name="Kai"), ACTIVE),
    ]
    members = [
        MemberInfo(kai_lee, username="kl", global_name="Kai Lee"),
        MemberInfo(kai, username="k", global_name="Kai"),
    ]
    prepared, _, _ = prepare([msg("1", BO, "Kai Lee here")], rows=rows, members=members)
    assert prepared.referenced_user_ids == [kai, kai_lee]


def test_d23_order_does_not_depend_on_candidate_row_order():
    history = [msg("1", BO, "erin and alice_srv and <@400000000000000001>")]
    forward, _, _ = prepare(history, rows=world_rows())
    backward, _, _ = prepare(history, rows=list(reversed(world_rows())))
    assert seeds(forward) == seeds(backward)
    assert forward.referenced_user_ids == [E, A]


def test_d13_d14_persona_reasons_and_public_profiles_keep_catalog_order():
    history = [msg("1", A, "ren and lilya and tomori")]
    prepared, _, _ = prepare(
        history,
        persona_list=[*world_personas()[:1], lilya(public_attribute="Sings"), world_personas()[2]],
        active=tomori(),
        synthetic_users={"2": {"display_name": "Lilya (sprite)", "type": "persona"}},
        responders=[1, 3],
    )
    assert [p.persona_id for p in prepared.public_persona_profiles] == [2, 3]  # Tomori (active) excluded
    ren_profile = prepared.public_persona_profiles[1]
    assert (ren_profile.persona_name, ren_profile.attributes, ren_profile.image_appearance_tags) == (
        "Ren",
        ("Loves tea",),
        ("red hair",),
    )
    assert seed(prepared, "persona:3").reasons == {"persona_trigger_reference", "co_responder"}
    assert seed(prepared, "persona:2").reasons == {"persona_trigger_reference", "historical_persona"}


# --- the candidate read (D-16, D-17) -------------------------------------------------------------


@pytest.mark.parametrize(
    "changes",
    [
        {"shortterm_cache_crossserver_opt_in": True},
        {"physical_appearance_tags": ("tall",)},
        {"nai_char_ref_url": "https://x"},
        {"impersonation_prompt": "be me"},
        {"personal_dtm": "on"},
        {"personal_deliberate_tool_mode": "off"},
        {"timezone_offset": 0},
        {"privacy_level": 1},
    ],
)
def test_d17_each_personal_state_makes_a_row_eligible(changes):  # type: ignore[no-untyped-def]
    from dataclasses import replace

    base = UserRow(1, D, username="dave", language_pref="ja")
    assert not is_eligible(CandidateRow(base, NO_EVIDENCE))
    assert is_eligible(CandidateRow(replace(base, **changes), NO_EVIDENCE))


def test_d17_blank_values_and_language_never_qualify():
    blank = UserRow(
        1, D, language_pref="fr", physical_appearance_tags=(" ",), nai_char_ref_url=" ", impersonation_prompt=""
    )
    assert not is_eligible(CandidateRow(blank, NO_EVIDENCE))
    for flag in ("has_server_activity", "has_personal_memories", "has_pending_tasks"):
        assert is_eligible(CandidateRow(blank, CandidateEvidence(**{flag: True})))


def test_d16_candidate_ids_are_mentions_and_cached_members():
    directory = FakeMemberDirectory.of([*world_members()[:2]])
    _, source, _ = prepare([msg("1", A, f"<@{E}> <@!{F}>")], directory=directory)
    (query,) = source.queries
    assert query.candidate_ids == (E, F, A, BO)
    assert query.server_id == 1
    assert query.now_ms == NOW_MS


@pytest.mark.django_db
def test_d16_repository_read_selects_by_id_activity_or_saved_nickname_with_evidence():
    """A saved nickname selects a user the server knows; one of another server only is never read."""
    from personas import models as m

    server = db_server()
    other = db_server("100000000000000002")
    now = datetime.fromtimestamp(NOW_MS / 1000, tz=UTC)
    by_id = db_user(E, username="erin")
    active = db_user(A, username="alice01")
    db_activity(server, active)
    zero = db_user("400000000000000041", username="zero")
    db_activity(server, zero, count=0)
    elsewhere = db_user("400000000000000042", username="elsewhere")
    db_activity(other, elsewhere)
    wrong_metric = db_user("400000000000000043", username="wm")
    db_activity(server, wrong_metric, metric="reaction_added")
    nick = db_user(F, username="frank", user_nickname="@Frankie   Jr")
    accent = db_user("400000000000000044", username="em", user_nickname="ÉMILE")
    db_user("400000000000000045", username="blank", user_nickname="  ")
    # Saved nicknames count among the users the server knows (issue 29): its members and authors.
    m.ServerMember.objects.create(server=server, user_disc_id=F)
    db_activity(server, accent, metric="reaction_added")
    far = db_user("400000000000000046", username="far", user_nickname="Frankie")
    db_activity(other, far)
    m.PersonalMemory.objects.create(user=by_id, persona_lineage_id=77, content="x")
    m.Reminder.objects.create(
        server=other,
        channel_disc_id=CHANNEL,
        user_discord_id=A,
        reminder_purpose="p",
        reminder_time=now + timedelta(hours=1),
    )
    m.Reminder.objects.create(
        server=server,
        channel_disc_id=CHANNEL,
        user_discord_id="400000000000000099",
        created_by_user=nick,
        reminder_purpose="p",
        reminder_time=now + timedelta(hours=1),
    )
    m.Reminder.objects.create(
        server=server,
        channel_disc_id=CHANNEL,
        user_discord_id=E,
        reminder_purpose="p",
        reminder_time=now - timedelta(hours=1),
    )

    query = CandidateQuery(server.server_id, (E,), "Thanks FRANKIE\n jr and émile!", NOW_MS)
    rows = {c.row.user_disc_id: c for c in load_candidate_rows(query)}
    assert set(rows) == {E, A, F, accent.user_disc_id}
    assert rows[E].evidence == CandidateEvidence(has_personal_memories=True)
    assert rows[A].evidence == CandidateEvidence(has_server_activity=True, has_pending_tasks=True)
    assert rows[F].evidence == CandidateEvidence(has_pending_tasks=True)
    assert rows[accent.user_disc_id].evidence == NO_EVIDENCE
    assert rows[F].row.user_nickname == "@Frankie   Jr"
    # Without history text the nickname clause is off; without a server, activity is.
    assert {c.row.user_disc_id for c in load_candidate_rows(CandidateQuery(server.server_id, (), "", NOW_MS))} == {A}
    assert {c.row.user_disc_id for c in load_candidate_rows(CandidateQuery(None, (E,), "", NOW_MS))} == {E}


@pytest.mark.django_db
def test_t61_d16_d17_d19_d24_saved_nickname_reference_via_repository(django_assert_max_num_queries):
    server = db_server()
    frank = db_user(F, username="frank_real", global_name="Frank", user_nickname="Frankie", timezone_offset=2)
    alice = db_user(A, username="alice01", global_name="Alice", user_nickname="Ally")
    db_activity(server, alice)
    db_activity(server, frank, metric="reaction_added")  # an author seen in the server, not in the member cache
    directory = FakeMemberDirectory(
        cached={A: MemberInfo(A, username="alice01", global_name="Alice", display_name="Alice")},
        fetchable={F: MemberInfo(F, username="frank_real", global_name="Frank", display_name="Frank")},
    )
    with django_assert_max_num_queries(1):
        prepared = prepare_participant_context(
            preparation_input([msg("1", A, "thanks frankie!")], server_id=server.server_id, responders=[1]),
            member_directory=directory,
            now_ms=NOW_MS,
        )
    assert directory.fetches == [F]
    frank_seed = seed(prepared, f"discord_user:{F}")
    assert frank_seed.reasons == {"unique_text_alias"}
    saved = [a for a in frank_seed.aliases if a.source == "saved_nickname"]
    assert [(a.value, a.exposure, a.purposes) for a in saved] == [
        ("Frankie", "lookup_only", frozenset({"input_reference"}))
    ]
    assert prepared.referenced_user_rows[F].user_id == frank.user_id
    assert prepared.diagnostics["candidate_count"] == 1 + 2  # Tomori (co-responder) + Alice and Frank rows


def _bulk_world(server, count: int) -> FakeMemberDirectory:  # type: ignore[no-untyped-def]
    from personas import models as m

    users = m.DiscordUser.objects.bulk_create(
        [m.DiscordUser(user_disc_id=str(500000000000000000 + i), username=f"user{i}") for i in range(count)]
    )
    m.StatCounter.objects.bulk_create(
        [
            m.StatCounter(server=server, user=u, metric="message_sent", bucket=datetime(2026, 5, 1).date(), count=1)
            for u in users[::2]
        ]
    )
    return FakeMemberDirectory.of([MemberInfo(u.user_disc_id, username=u.username) for u in users])


@pytest.mark.django_db
@pytest.mark.parametrize("count", [2, 200])
def test_d16_candidate_read_costs_the_same_queries_for_2_and_200_members(count, django_assert_max_num_queries):
    server = db_server()
    directory = _bulk_world(server, count)
    mentions = " ".join(f"<@{uid}>" for uid in directory.cached_member_ids())
    inp = preparation_input([msg("1", A, f"{mentions} user1 user0")], server_id=server.server_id)
    with CaptureQueriesContext(connection) as ctx, django_assert_max_num_queries(1):
        prepared = prepare_participant_context(inp, member_directory=directory, now_ms=NOW_MS)
    assert len(ctx.captured_queries) == 1
    assert prepared.diagnostics["external_calls"]["candidate_source_reads"] == 1
    assert prepared.diagnostics["external_calls"]["member_cache_hits"] == (count + 1) // 2
    assert len(prepared.referenced_user_ids) == (count + 1) // 2


# --- property: block notices never contribute references ---------------------------------------

_WORDS = st.sampled_from(
    ["hi", "alice_srv", "@Ally", "ally", "erin", "bob", f"<@{E}>", f"<@!{A}>", "LIIILYAAA", "ren", "tomori", "x@kai"]
)
_TEXT = st.lists(_WORDS, min_size=0, max_size=6).map(" ".join)


@st.composite
def _histories(draw):  # type: ignore[no-untyped-def]
    history = []
    for index in range(draw(st.integers(1, 6))):
        author = draw(st.sampled_from([A, BO, E]))
        if draw(st.booleans()):
            history.append(block_notice(str(index), author, draw(_TEXT)))
        else:
            history.append(msg(str(index), author, draw(_TEXT)))
    return history


@given(_histories(), _TEXT)
def test_property_d10_block_notices_never_contribute_references(history, replacement):  # type: ignore[no-untyped-def]
    personas_ = [tomori(), lilya(public_attribute="Sings"), world_personas()[2]]
    scrubbed = [msg(e.id, e.author_id, replacement) if e.id.startswith("synthetic-user-block-") else e for e in history]
    first, _, _ = prepare(history, persona_list=personas_, responders=[])
    second, _, _ = prepare(scrubbed, persona_list=personas_, responders=[])
    assert seeds(first) == seeds(second)
    assert [sorted(s.reasons) for s in first.discovery_plan.seeds] == [
        sorted(s.reasons) for s in second.discovery_plan.seeds
    ]
    assert first.diagnostics["rejection_counts"] == second.diagnostics["rejection_counts"]
