"""A stored playground turn replays, from its snapshot alone, to the prompt its record holds (issue 28
item 1): a tool turn exported from the API and replayed with ``replay_turn``, an image turn, a turn
ordered by a preset and one a lorebook entry fires in. The demo's Tomori has example dialogue and the
demo server has emojis, so every such turn shows both."""

from __future__ import annotations

import asyncio
import copy
import json
from datetime import timedelta
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from asgiref.sync import sync_to_async
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone

from bot.playground.service import post_playground_message, send_playground_message
from chatcontext.core.budget import BUDGET_REASON
from chatcontext.history import MIN_FETCH_LIMIT
from chatcontext.models import PromptRecord
from personas import models as m
from personas.actions import Actor
from personas.actions.cards import import_lorebook
from personas.actions.presets import import_preset
from personas.character_data import LorebookData, LoreEntry
from personas.presets import parse_preset
from tests.bot.fake_llm import FakeLLMServer, tool_round
from tests.bot.image_server import png_bytes
from tests.bot.playground.conftest import JUN, MINA, Demo
from tests.bot.playground.turns import moderator_client, use_llm
from tests.personas.presets.preset_files import DEFAULT as DEFAULT_PRESET
from tests.replays import assert_replays_to_its_record, recorded_items, replayed_output

BOTH = pytest.mark.django_db(transaction=True, databases=["default", "replay"])
EXAMPLE_LINE = "Still awake, Tomori?"  # the demo's example dialogue (load_demo)


def replay_turn_command(snapshot: dict[str, Any], folder: Path) -> list[dict[str, Any]]:
    """The context items ``manage.py replay_turn`` prints for ``snapshot``."""
    path = folder / "exported.snapshot.json"
    path.write_text(json.dumps(snapshot), encoding="utf-8")
    out = StringIO()
    call_command("replay_turn", str(path), stdout=out)
    items: list[dict[str, Any]] = json.loads(out.getvalue())["context_items"]
    return items


@BOTH
async def test_a_playground_tool_turn_exported_from_the_api_replays_with_replay_turn_to_its_record(
    tdemo: Demo,
    llm_server: FakeLLMServer,
    tmp_path: Path,
) -> None:
    _, client = await moderator_client(tdemo, llm_server)
    remember = {"user": "mina", "content": "Mina grows tomatoes on the balcony"}
    llm_server.script = [tool_round(("remember_user_fact", json.dumps(remember))), "Noted!"]

    response = await client.post(
        reverse("playground:send_message", args=[tdemo.channel.pk]),
        {"identity": MINA, "content": "tomori, I grow tomatoes"},
    )
    assert response.status_code == 200, response.content
    [summary] = response.json()["records"]
    record = await PromptRecord.objects.aget(pk=summary["id"])
    memory = await m.PersonalMemory.objects.aget(content=remember["content"])
    assert memory.source_prompt_record_id == record.pk  # the tool wrote, and the record points at it

    exported = await client.get(f"/api/v1/records/{record.pk}/snapshot")
    assert exported.status_code == 200
    snapshot = exported.json()
    assert snapshot["format"] == "tomori-turn-snapshot/4"
    # Captured before the tool ran: the memory it wrote is no part of the turn's input.
    assert remember["content"] not in json.dumps(snapshot)

    replayed = await sync_to_async(replay_turn_command)(snapshot, tmp_path)
    assert replayed == recorded_items(record)
    tags = [item["tag"] for item in replayed]
    assert "dialogue_sample" in tags and "knowledge_emojis" in tags
    assert EXAMPLE_LINE in "\n".join(item["text"] for item in replayed)


def send_photo(demo: Demo) -> PromptRecord:
    m.ServerSettings.objects.filter(server=demo.server).update(model_accepts_images=True)
    photo = SimpleUploadedFile("owl.png", png_bytes(), "image/png")
    [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} what is this?", attachments=[photo])
    return record


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_image_turn_replays_to_its_record(demo: Demo) -> None:
    record = send_photo(demo)
    assert record.images["sent"]  # the model was sent the image
    assert "(Media ID: media_1)" in "\n".join(item["text"] for item in record.context_items)
    assert_replays_to_its_record(record)
    assert EXAMPLE_LINE in "\n".join(item["text"] for item in record.context_items)
    assert "knowledge_emojis" in [item["tag"] for item in record.context_items]


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_turn_ordered_by_a_preset_replays_to_its_record(demo: Demo) -> None:
    preset = parse_preset(DEFAULT_PRESET.read_bytes(), name="default.json")
    import_preset(demo.tomori, preset, actor=Actor.system("tests"))
    [record] = send_playground_message(demo.channel, MINA, "tomori, how is the night?")
    # The preset's own main prompt comes first, untagged, before the platform's instruction.
    assert [item["tag"] for item in record.context_items][:2] == [None, "system_instruction_block"]
    [persona] = [p for p in record.snapshot["personas"] if p["persona_nickname"] == "Tomori"]
    assert persona["preset"] == list(preset.nodes)
    assert_replays_to_its_record(record)


LORE = LorebookData(
    name="Night Owls lore",
    entries=(
        LoreEntry(uid=1, keys=("observatory",), comment="The observatory", content="{{char}} keeps the key."),
        LoreEntry(uid=2, keys=("comet",), content="A comet passes every 76 years.", position="at_depth", depth=1),
    ),
)
PIP_LORE = LorebookData(name="Pip's notes", entries=(LoreEntry(uid=1, keys=("observatory",), content="Pip hides."),))


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_turn_a_lorebook_entry_fires_in_replays_to_its_record(demo: Demo) -> None:
    actor = Actor.system("tests")
    book = import_lorebook(demo.server, LORE, persona=None, actor=actor)
    import_lorebook(demo.server, PIP_LORE, persona=demo.pip, actor=actor)
    [record] = send_playground_message(demo.channel, MINA, "tomori, shall we go up to the observatory?")
    [item] = [i for i in record.context_items if i["tag"] == "world_info_before"]
    assert item["world_info"] == [{"book": book.pk, "entry": 1, "comment": "The observatory", "key": "observatory"}]
    assert "Tomori keeps the key." in item["text"]
    # The responding persona's entries stay, the one that did not fire too; Pip's book stays out.
    personas = {p["persona_nickname"]: p for p in record.snapshot["personas"]}
    assert [(e["book_id"], e["uid"]) for e in personas["Tomori"]["lorebook"]] == [(book.pk, 1), (book.pk, 2)]
    assert "lorebook" not in personas["Pip"] and "preset" not in personas["Pip"]
    assert_replays_to_its_record(record)


# Turn inputs that are no rows (snapshot format 3): the persona's short-term note, the stepped history
# window's anchor and the context budget. Each replays to its record, and the same snapshot without the
# field does not, so the field is what the replay needs.


def replays_without(record: PromptRecord, key: str) -> list[dict[str, Any]]:
    snapshot = copy.deepcopy(record.snapshot)
    del snapshot["turn"][key]
    items: list[dict[str, Any]] = replayed_output(snapshot)["context_items"]
    return items


NOTE = "Mina is repotting her tomatoes this week."


@BOTH
async def test_a_playground_turn_after_a_short_term_memory_tool_call_replays_to_its_record(
    tdemo: Demo, llm_server: FakeLLMServer
) -> None:
    await asyncio.to_thread(use_llm, tdemo, llm_server)
    llm_server.script = [tool_round(("update_short_term_memory", json.dumps({"note": NOTE}))), "Noted!"]
    await post_playground_message(tdemo.channel, MINA, "tomori, I'm repotting the tomatoes")
    llm_server.script = ["Good luck with them."]
    await post_playground_message(tdemo.channel, MINA, "tomori, wish me luck")

    record = await PromptRecord.objects.order_by("-created_at", "-id").afirst()
    assert record is not None and NOTE in "\n".join(item["text"] for item in record.context_items)
    note = record.snapshot["turn"]["short_term_memory"]
    assert note["content"] == NOTE and note["tool_offered"] is True
    await sync_to_async(assert_replays_to_its_record)(record)
    assert await sync_to_async(replays_without)(record, "short_term_memory") != recorded_items(record)


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_turn_in_a_stepped_history_window_replays_to_its_record(demo: Demo) -> None:
    m.ServerSettings.objects.filter(server=demo.server).update(message_fetch_limit=MIN_FETCH_LIMIT)
    for turn in range(2 * MIN_FETCH_LIMIT):
        send_playground_message(demo.channel, MINA, f"{demo.mention()} turn {turn}")
    records = PromptRecord.objects.filter(channel_disc_id=demo.channel.disc_id).order_by("created_at", "pk")
    anchored = [r for r in records if r.snapshot["turn"].get("history_anchor_id")]
    assert any(e["reason"] == "history_step" for r in anchored for e in r.exclusions)  # the window stepped
    for record in anchored:
        assert_replays_to_its_record(record)
    # Without its anchor a turn's window starts afresh: some anchored turn then reads another history.
    assert any(replays_without(r, "history_anchor_id") != recorded_items(r) for r in anchored)


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_turn_the_context_budget_cut_replays_to_its_record(demo: Demo, settings: Any) -> None:
    settings.LLM_CONTEXT_WINDOW, settings.LLM_MAX_REPLY_TOKENS = 1536, 256
    for turn in range(12):
        [record] = send_playground_message(demo.channel, MINA, f"{demo.mention()} turn {turn}: " + "lorem ipsum " * 20)
    assert any(e["reason"] == BUDGET_REASON for e in record.exclusions)  # the budget cut this turn
    assert record.snapshot["turn"]["budget"]["window"] == 1536
    assert_replays_to_its_record(record)
    assert replays_without(record, "budget") != recorded_items(record)


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_preset_turn_with_a_cards_fields_and_world_info_at_its_markers_replays_to_its_record(demo: Demo) -> None:
    actor = Actor.system("tests")
    import_preset(demo.tomori, parse_preset(DEFAULT_PRESET.read_bytes(), name="default.json"), actor=actor)
    import_lorebook(demo.server, LORE, persona=None, actor=actor)
    card = {
        "personality": "Wry.",
        "scenario": "A rooftop.",
        "system_prompt": "Be {{char}}.",
        "post_history_instructions": "Be brief.",
    }
    m.PersonaCard.objects.create(persona=demo.tomori, **card)
    m.PersonaCard.objects.create(persona=demo.pip, personality="Pip's own.")
    [record] = send_playground_message(demo.channel, MINA, "tomori, shall we go up to the observatory?")
    texts = [item["text"] for item in record.context_items]
    assert {"Wry.", "A rooftop.", "Be Tomori.", "Be brief."} <= set(texts)
    # Only the responding persona's card is kept: another's is not read for this turn.
    personas = {p["persona_nickname"]: p for p in record.snapshot["personas"]}
    assert personas["Tomori"]["card"] == card and "card" not in personas["Pip"]
    assert_replays_to_its_record(record)


# Format 4: the stage's tunables are the turn's input too. A turn recorded under an operator's setting
# replays to its record in a process whose settings say otherwise, and the same snapshot without its
# ``stage`` does not, so the stage is what the replay needs.


def with_tomori(settings: Any, **tunables: int) -> None:
    settings.TOMORI = {**settings.TOMORI, **tunables}


@pytest.mark.django_db(databases=["default", "replay"])
def test_bc7_05_a_playground_turn_recorded_under_another_image_limit_replays_to_its_record_after_it_changed(
    demo: Demo, settings: Any
) -> None:
    """BC7-05's MEDIA_IMAGE_MESSAGE_LIMIT (build-context.md §0.1) travels in the snapshot's ``stage``."""
    with_tomori(settings, MEDIA_IMAGE_MESSAGE_LIMIT=0)
    record = send_photo(demo)
    assert "(Media ID: media_1)" not in "\n".join(item["text"] for item in record.context_items)
    with_tomori(settings, MEDIA_IMAGE_MESSAGE_LIMIT=3)  # the operator raised it after the turn

    assert_replays_to_its_record(record)
    assert record.snapshot["stage"]["media_image_message_limit"] == 0
    snapshot = copy.deepcopy(record.snapshot)
    del snapshot["stage"]
    assert replayed_output(snapshot)["context_items"] != recorded_items(record)


@pytest.mark.django_db(databases=["default", "replay"])
def test_bc2_07a_a_playground_turn_in_a_history_window_stepped_by_another_setting_replays_to_its_record(
    demo: Demo, settings: Any
) -> None:
    """BC2-07a's HISTORY_WINDOW_STEP travels in the snapshot's ``stage``: a window stepped by 10 is not
    replayed as one that slides message by message."""
    m.ServerSettings.objects.filter(server=demo.server).update(message_fetch_limit=MIN_FETCH_LIMIT)
    with_tomori(settings, HISTORY_WINDOW_STEP=MIN_FETCH_LIMIT // 2)
    for turn in range(2 * MIN_FETCH_LIMIT):
        send_playground_message(demo.channel, MINA, f"{demo.mention()} turn {turn}")
    records = PromptRecord.objects.filter(channel_disc_id=demo.channel.disc_id).order_by("created_at", "pk")
    anchored = [r for r in records if r.snapshot["turn"].get("history_anchor_id")]
    assert any(e["reason"] == "history_step" for r in anchored for e in r.exclusions)  # the window stepped
    with_tomori(settings, HISTORY_WINDOW_STEP=0)  # the window now slides one message at a time

    for record in anchored:
        assert_replays_to_its_record(record)


@pytest.mark.django_db(databases=["default", "replay"])
def test_d16_a_playground_turn_naming_a_member_by_saved_nickname_replays_to_the_same_discovery(demo: Demo) -> None:
    """Zed has a member row and a saved nickname but nothing else (D-17: ineligible), so the turn's
    transport never reads him as a member; D-16 still selected him, and so does the replay."""
    zed = "777000111"
    m.DiscordUser.objects.create(user_disc_id=zed, username="zed", global_name="Zed", user_nickname="Zeddy")
    m.ServerMember.objects.create(server=demo.server, user_disc_id=zed, username="zed", global_name="Zed")
    [record] = send_playground_message(demo.channel, MINA, "tomori, have you seen Zeddy lately?")
    live = record.diagnostics["participants"]
    assert live["rejection_counts"]["ineligible_state"] == 1

    assert_replays_to_its_record(record)
    replayed = replayed_output(record.snapshot)["diagnostics"]["participants"]
    # Zed's rejection and the participants found. (The bot's own user row, which discovery reads and
    # rejects as a bot live, is no snapshot row: candidate_count and the bot rejection still differ.)
    assert replayed["rejection_counts"]["ineligible_state"] == 1
    assert replayed["included_count"] == live["included_count"]
    assert record.snapshot["known_users"] == [{"user_disc_id": zed}]


@pytest.mark.django_db(databases=["default", "replay"])
def test_a_playground_turn_of_a_persona_with_a_reasoned_block_and_a_mute_replays_to_its_record(demo: Demo) -> None:
    """The persona's block notice shows each active block and mute with its reason (the demo's Pip
    blocks Sora, with a reason); format 4 keeps both the reason and the mutes, which hide nothing."""
    m.PersonaUserBlock.objects.create(
        server=demo.server,
        persona=demo.pip,
        user_disc_id=JUN,
        block_type=m.PersonaUserBlock.BlockType.MUTE,
        reason="Spams Pip (demo)",
        expires_at=timezone.now() + timedelta(days=1),
    )
    [record] = send_playground_message(demo.channel, MINA, "pip, how is the night?")
    [notice] = [i["text"] for i in record.context_items if i["tag"] == "knowledge_persona_user_blocks"]
    assert "Reason: Kept teasing Pip (demo)" in notice and "(mute)" in notice and "Reason: Spams Pip (demo)" in notice
    assert_replays_to_its_record(record)
