"""Forget-me leaves no trace (issue 5 acceptance): after ``community.forget.forget_user``, a search of
every text and JSON column of every model finds none of the user's message text or memories,
although before it they were in live rows and in the stored snapshots and prompt records of two
servers."""

from __future__ import annotations

import copy
import importlib
import json

import pytest
from django.apps import apps
from django.test import Client
from django.urls import reverse
from django.utils import timezone

from chatcontext.models import PromptRecord, VoiceTranscript
from chatcontext.records.store import TurnRecord, record_turn
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import load_snapshot_json
from chatcontext.voice.cache import shared_cache
from community.forget import forget_user
from personas.models import ApiToken, DiscordUser, ServerMember
from tests.actors import TEST_ACTOR
from tests.chatcontext.records.conftest import World, example_doc
from tests.chatcontext.records.traces import traces

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

DOC = example_doc()
PRIYA = next(u["disc_id"] for u in DOC["users"] if u["username"] == "priya.k")
TOBIAS = next(u["disc_id"] for u in DOC["users"] if u["username"] == "tobias.r")
VOICE = DOC["messages"][8]  # Priya's voice message
FIRST_PRINT = DOC["messages"][7]["id"]  # Priya's image
TOBIAS_REPLY = DOC["messages"][6]["id"]  # Tobias answers Sprocket
# Priya's own words (her image caption and her mention of the bot, the transcript of her voice
# message), her memories (personal, including another lineage's), her reminder, her saved nickname
# and her member display name.
PRIYA_TRACES = (
    "first test print off the new printer",
    "is the workshop open on Sunday",
    "do we still have the blue filament",
    "building a fume extractor",
    "prefers metric screws",
    "to wave hello",
    "Remind Priya to order",
    "Pree",
    "Priya K",
)
UNRELATED = "a turn where only Tobias speaks"


def test_forget_user_leaves_no_trace_in_any_text_column(world: World) -> None:
    VoiceTranscript.objects.create(
        message_disc_id=VOICE["id"],
        attachment_disc_id=VOICE["attachments"][0]["id"],
        transcript="tomori, do we still have the blue filament from last week",
        cached_at=timezone.now(),
    )
    unrelated = PromptRecord.objects.create(
        server=world.server_b,
        channel_disc_id="4400",
        persona_nickname="Tomori",
        created_at=timezone.now(),
        context_items=[{"role": "user", "tag": "dialogue_history", "text": UNRELATED}],
        subject_user_ids=[TOBIAS],
    )
    before = {needle: traces(needle) for needle in PRIYA_TRACES}
    # The search can see them: in live rows, and in the records and snapshots of both servers.
    caption = "first test print off the new printer"
    assert {"chatcontext.PromptRecord.snapshot", "chatcontext.PromptRecord.context_items"} <= before[caption]
    assert "chatcontext.VoiceTranscript.transcript" in before["do we still have the blue filament"]
    assert "personas.PersonalMemory.content" in before["prefers metric screws"]
    assert "personas.Reminder.reminder_purpose" in before["Remind Priya to order"]
    assert "personas.DiscordUser.user_nickname" in before["Pree"]
    assert "personas.ServerMember.display_name" in before["Priya K"]
    servers = set(PromptRecord.objects.filter(snapshot__icontains=caption).values_list("server", flat=True))
    assert servers == {world.server_a.pk, world.server_b.pk}

    forget_user(PRIYA, actor=TEST_ACTOR)

    assert {needle: traces(needle) for needle in PRIYA_TRACES} == {needle: set() for needle in PRIYA_TRACES}
    # The user row stays (with its privacy level) and unrelated records are kept.
    assert DiscordUser.objects.filter(user_disc_id=PRIYA).exists()
    assert list(PromptRecord.objects.values_list("pk", flat=True)) == [unrelated.pk]
    assert traces(UNRELATED) == {"chatcontext.PromptRecord.context_items"}


# --- issue 13 item 5: forget-me deletes the records about the user, and only those ------------

SORA = "915530273388740608"  # a member of Tidepool Makerspace who never posted in #workbench


def with_silent_member(doc: dict) -> dict:
    """The snapshot as a capture that stored every member held it: Sora's user row (no profile)
    and member row (no server nickname), though Sora never posted and is in no prompt."""
    doc = copy.deepcopy(doc)
    doc["users"].append({"disc_id": SORA, "username": "sora", "global_name": "Sora", "privacy_level": 0})
    doc["members"].append(
        {
            "user_disc_id": SORA,
            "username": "sora",
            "global_name": "Sora",
            "nickname": None,
            "is_bot": False,
            "roles": [{"id": "837991740211331073", "name": "Regular", "position": 2}],
            "presence_status": "online",
            "activities": [],
        }
    )
    return load_snapshot_json(json.dumps(doc))


def without_priya(doc: dict) -> dict:
    """A turn of the same channel in which Priya neither speaks nor is remembered: Tobias triggers it."""
    doc = copy.deepcopy(doc)
    doc["messages"] = [m for m in doc["messages"] if m["author"]["id"] != PRIYA and int(m["id"]) < int(FIRST_PRINT)]
    for message in doc["messages"]:
        message["reactions"] = []
    doc["users"] = [u for u in doc["users"] if u["disc_id"] != PRIYA]
    doc["members"] = [u for u in doc["members"] if u["user_disc_id"] != PRIYA]
    doc["personal_memories"] = [p for p in doc["personal_memories"] if p["user_disc_id"] != PRIYA]
    doc["reminders"] = [r for r in doc["reminders"] if r["user_disc_id"] != PRIYA]
    doc["voice_transcripts"] = []
    doc["turn"] = {**doc["turn"], "trigger_message_id": TOBIAS_REPLY}
    return load_snapshot_json(json.dumps(doc))


def replayed(doc: dict) -> PromptRecord:
    return record_turn(
        TurnRecord(replay_snapshot(doc, transcriber=None), snapshot=doc, source=PromptRecord.Source.REPLAY)
    )


def stored_records() -> dict[int, tuple]:
    fields = ("snapshot", "context_items", "subject_user_ids", "reply_text", "exclusions")
    return {pk: rest for pk, *rest in PromptRecord.objects.values_list("pk", *fields)}


@pytest.fixture
def forget_world(world: World) -> dict[str, PromptRecord]:
    """The world's three Priya records, one more of the same turn that also lists the silent Sora,
    and one turn without Priya; Sora is a live member of server A (the API forgets members only)."""
    DiscordUser.objects.create(user_disc_id=SORA, username="sora", global_name="Sora")
    ServerMember.objects.create(server=world.server_a, user_disc_id=SORA, username="sora")
    return {"with_sora": replayed(with_silent_member(world.doc_a)), "no_priya": replayed(without_priya(world.doc_a))}


def test_forgetting_a_member_who_never_posted_leaves_every_record_untouched(
    world: World, forget_world: dict[str, PromptRecord]
) -> None:
    before = stored_records()
    assert len(before) == 5

    result = forget_user(SORA, actor=TEST_ACTOR)

    assert result.prompt_records == 0
    assert stored_records() == before


def test_forgetting_a_poster_deletes_their_records_and_keeps_the_rest(
    world: World, forget_world: dict[str, PromptRecord]
) -> None:
    kept = forget_world["no_priya"]
    assert PRIYA not in kept.subject_user_ids and TOBIAS in kept.subject_user_ids
    untouched = stored_records()[kept.pk]

    result = forget_user(PRIYA, actor=TEST_ACTOR)

    assert result.prompt_records == 4
    assert stored_records() == {kept.pk: untouched}


def test_the_admin_confirmation_and_result_say_how_many_records_go(
    world: World, forget_world: dict[str, PromptRecord]
) -> None:
    root = world.client("root")
    url = reverse("admin:personas_discorduser_changelist")
    users = DiscordUser.objects.filter(user_disc_id__in=[PRIYA, SORA])
    data = {"action": "forget_users", "_selected_action": [u.pk for u in users]}

    confirmation = root.post(url, data)

    counts = {str(user): dict(kinds) for user, kinds in confirmation.context["users"]}
    assert {name: kinds["prompt records"] for name, kinds in counts.items()} == {"Priya": 4, "Sora": 0}
    assert dict(confirmation.context["totals"])["prompt records"] == 4
    assert "Prompt records: 4" in confirmation.content.decode()
    assert PromptRecord.objects.count() == 5
    done = root.post(url, {**data, "confirm": "yes"}, follow=True).content.decode()
    assert "4 prompt records" in done
    assert list(PromptRecord.objects.values_list("pk", flat=True)) == [forget_world["no_priya"].pk]


def test_the_api_forget_preview_and_response_count_the_deleted_records(
    world: World, forget_world: dict[str, PromptRecord]
) -> None:
    _, raw = ApiToken.issue(world.server_a, "forget", scope=ApiToken.Scope.READ_WRITE)
    client = Client()
    headers = {"Authorization": f"Bearer {raw}"}
    before = stored_records()
    sora, priya = (f"/api/v1/servers/{world.server_a.pk}/users/{uid}/forget" for uid in (SORA, PRIYA))

    preview = client.get(priya, headers=headers).json()["would_delete"]
    assert preview["prompt_records"] == 4 and preview["personal_memories"] > 0
    assert client.get(sora, headers=headers).json()["would_delete"]["prompt_records"] == 0
    assert stored_records() == before
    silent = client.post(sora, headers=headers)

    assert silent.status_code == 200 and silent.json()["deleted"]["prompt_records"] == 0
    assert stored_records() == before
    poster = client.post(priya, headers=headers)
    assert poster.status_code == 200 and poster.json()["deleted"] == preview
    assert set(stored_records()) == {forget_world["no_priya"].pk}


def test_migration_recomputes_the_subjects_of_records_stored_under_the_old_rule(
    world: World, forget_world: dict[str, PromptRecord]
) -> None:
    """A record stored before the fix lists every member; migration 0002 gives it today's list."""
    record = forget_world["with_sora"]
    everyone = sorted({*record.subject_user_ids, SORA, "915530273388740999"})
    PromptRecord.objects.filter(pk=record.pk).update(subject_user_ids=everyone)
    migration = importlib.import_module("chatcontext.migrations.0002_recompute_record_subjects")

    migration.recompute(apps, None)

    record.refresh_from_db()
    assert SORA not in record.subject_user_ids and "915530273388740999" not in record.subject_user_ids
    assert set(record.subject_user_ids) == set(forget_world["with_sora"].subject_user_ids)
    assert forget_user(SORA, actor=TEST_ACTOR).prompt_records == 0


def test_forget_me_also_empties_this_processes_transcript_cache(world: World, django_capture_on_commit_callbacks):
    """Privacy (BC11-02, forget-me): the process-local map in front of the transcript table
    (``shared_cache``) stops serving the forgotten user's transcripts; other people's stay cached."""
    now_ms = int(timezone.now().timestamp() * 1000)
    others = "991100000000000001"
    VoiceTranscript.objects.create(
        message_disc_id=VOICE["id"],
        attachment_disc_id=VOICE["attachments"][0]["id"],
        transcript="tomori, do we still have the blue filament from last week",
        cached_at=timezone.now(),
    )
    try:
        shared_cache.put(others, "someone else's words", "user_stt", now_ms=now_ms)
        assert set(shared_cache.get_many([VOICE["id"], others], now_ms=now_ms, ttl_minutes=60)) == {VOICE["id"], others}

        with django_capture_on_commit_callbacks(execute=True):
            result = forget_user(PRIYA, actor=TEST_ACTOR)

        assert result.voice_transcripts == 1
        assert VOICE["id"] not in shared_cache.entries
        assert set(shared_cache.get_many([VOICE["id"], others], now_ms=now_ms, ttl_minutes=60)) == {others}
    finally:
        shared_cache.forget([VOICE["id"], others], [])
