"""Named users and realistic prompt records for the inspector tests.

alice moderates server A ("Tidepool Makerspace", the project's example), bob moderates server B, charlie is a
non-staff account and root a superuser. Server A's live rows are the example snapshot's rows, and
its records are assembled by the real pipeline from those rows (as the bot does) and stored by
``record_turn`` with the snapshot. Server B's record is a `replay_turn --record` of the
same conversation moved to server B.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from chatcontext.models import PromptRecord
from chatcontext.records.inspector import assemble_live
from chatcontext.records.store import TurnRecord, record_turn
from chatcontext.replay import replay_snapshot
from chatcontext.snapshot import load_snapshot_json, load_snapshot_rows
from personas.models import Persona, Server, ServerMemory
from tests.cast import cast
from tests.paths import EXAMPLE

SNAPSHOT = EXAMPLE
SERVER_B_DISC_ID = "4300"
# Only in server A's prompts: Tobias's reply carries markup, which every page must escape.
A_MARKUP = "<script>alert('bench')</script>"
A_NEW_SERVER_MEMORY = "The workshop closes for cleaning on Mondays"
B_GREETING = "good morning, larks"


def example_doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return doc


def server_a_doc() -> dict[str, Any]:
    doc = example_doc()
    reply = doc["messages"][6]  # Tobias's reply to Sprocket
    reply["content"] = f"{reply['content']} {A_MARKUP}"
    return load_snapshot_json(json.dumps(doc))


def server_b_doc() -> dict[str, Any]:
    doc = copy.deepcopy(example_doc())
    doc["server"] = {**doc["server"], "disc_id": SERVER_B_DISC_ID, "name": "Day Larks"}
    doc["channel"] = {**doc["channel"], "name": "porch"}
    doc["messages"][0]["content"] = B_GREETING
    return load_snapshot_json(json.dumps(doc))


def record_live(doc: dict[str, Any], server: Server) -> PromptRecord:
    """What the bot stores for a turn: assembled from today's rows, with its snapshot."""
    return record_turn(TurnRecord(assemble_live(doc, server), snapshot=doc, source=PromptRecord.Source.BOT))


@dataclass
class World:
    server_a: Server
    server_b: Server
    doc_a: dict[str, Any]
    doc_b: dict[str, Any]
    first_a: PromptRecord  # the first turn in #workbench
    record_a: PromptRecord  # the next turn, after a server memory was added
    record_b: PromptRecord
    alice: Any
    bob: Any
    charlie: Any
    root: Any

    def client(self, who: str) -> Client:
        client = Client()
        client.force_login(getattr(self, who))
        return client


@pytest.fixture
def world(db: None) -> World:
    cache.clear()  # persona assets are cached by server id, which a new test database reuses
    doc_a = server_a_doc()
    server_a = Server.objects.get(pk=load_snapshot_rows(doc_a).server_id)
    first_a = record_live(doc_a, server_a)
    tomori = Persona.objects.get(server=server_a, persona_nickname="Tomori")
    ServerMemory.objects.create(
        server=server_a, persona_lineage_id=tomori.persona_lineage_id, content=A_NEW_SERVER_MEMORY
    )
    cache.clear()
    record_a = record_live(doc_a, server_a)

    doc_b = server_b_doc()
    server_b = Server.objects.create(server_disc_id=SERVER_B_DISC_ID, name="Day Larks")
    Persona.objects.create(server=server_b, persona_nickname="Tomori", trigger_words=["tomori"])
    record_b = record_turn(
        TurnRecord(replay_snapshot(doc_b, transcriber=None), snapshot=doc_b, source=PromptRecord.Source.REPLAY)
    )

    people = cast(server_a, server_b)
    return World(
        server_a=server_a,
        server_b=server_b,
        doc_a=doc_a,
        doc_b=doc_b,
        first_a=first_a,
        record_a=record_a,
        record_b=record_b,
        alice=people.alice,
        bob=people.bob,
        charlie=people.charlie,
        root=people.root,
    )
