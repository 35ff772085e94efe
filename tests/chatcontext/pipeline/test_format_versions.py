"""A version-1 turn snapshot, stored before format 2 existed, still loads and replays (issue 28 item 1):
format 2 only adds keys, and a version-1 document replays as a turn without them.

``fixtures/format-1.snapshot.json`` is a frozen copy of a version-1 document (the s07 impersonation
golden case as it was stored), kept apart from the golden cases so it stays version 1 whatever
happens to them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.test import Client

from chatcontext.models import PromptRecord
from chatcontext.records.store import TurnRecord, record_turn
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import load_snapshot_json
from personas import models as m
from tests.chatcontext.pipeline.replay_cli import run, write
from tests.markers import BOTH
from tests.replays import recorded_items

FORMAT_1 = Path(__file__).resolve().parent / "fixtures" / "format-1.snapshot.json"


def stored_format_1() -> PromptRecord:
    doc = load_snapshot_json(FORMAT_1.read_bytes())
    assert doc["format"] == "tomori-turn-snapshot/1"
    server = m.Server.objects.create(server_disc_id=doc["server"]["disc_id"], name="Live")
    m.Persona.objects.create(server=server, persona_nickname=doc["personas"][0]["persona_nickname"])
    return record_turn(TurnRecord(replay_snapshot(doc, transcriber=None), snapshot=doc, source="bot"))


@BOTH
def test_a_stored_format_1_snapshot_exports_and_replays_to_its_record(tmp_path: Path) -> None:
    record = stored_format_1()
    client = Client()
    client.force_login(get_user_model().objects.create_superuser("root", password="pw"))
    exported = client.get(f"/api/v1/records/{record.pk}/snapshot").json()
    assert exported["format"] == "tomori-turn-snapshot/1"

    code, out, err = run(write(tmp_path, exported))
    assert (code, err) == (0, "")
    assert json.loads(out)["context_items"] == recorded_items(record)


@BOTH
@pytest.mark.parametrize("later", ["tomori-turn-snapshot/2", "tomori-turn-snapshot/3", "tomori-turn-snapshot/4"])
def test_a_later_format_reads_a_format_1_document_as_a_turn_without_the_new_keys(tmp_path: Path, later: str) -> None:
    doc = json.loads(FORMAT_1.read_text(encoding="utf-8"))
    _, as_stored, _ = run(write(tmp_path, doc, "as-stored.json"))
    code, out, err = run(write(tmp_path, {**doc, "format": later}))
    assert (code, err) == (0, "") and out == as_stored and json.loads(out)["context_items"]
