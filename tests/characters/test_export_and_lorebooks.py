"""``manage.py export_card`` (import → export → import keeps every mapped field and the lorebook) and
``manage.py import_lorebook`` (SillyTavern World Info files and a card's character_book)."""

from __future__ import annotations

import base64
import dataclasses
import io
import json
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from characters.files import read_card
from characters.persona_card import persona_card
from personas.models import Lorebook, LorebookEntry, Persona, Server
from tests.characters import factory
from tests.characters.conftest import row_counts

pytestmark = pytest.mark.django_db


def _import_alter(tmp_path: Path, data: bytes, server: Server) -> Persona:
    path = tmp_path / "in.card"
    path.write_bytes(data)
    call_command("import_card", str(path), "--server", server.server_disc_id, "--alter", stdout=StringIO())
    return Persona.objects.filter(server=server, is_alter=True).latest("persona_id")


def _export(tmp_path: Path, persona: Persona, name: str) -> bytes:
    out = StringIO()
    call_command("export_card", str(persona.persona_id), str(tmp_path / name), stdout=out)
    assert out.getvalue() == f"Exported {persona.persona_nickname} to {tmp_path / name}\n"
    return (tmp_path / name).read_bytes()


def _without_picture(persona: Persona) -> dict[str, object]:
    card = persona_card(persona)
    # The spec is the version a card came as (an exported PNG is read from its V3 chunk), not a field.
    return {**dataclasses.asdict(card), "name": None, "avatar_png": None, "spec": None}


@pytest.mark.parametrize("source", ["v2 png", "v3 json", "seraphina"])
@pytest.mark.parametrize("out", ["card.png", "card.json"])
def test_import_export_import_keeps_every_mapped_field_and_the_lorebook(
    tmp_path: Path, server: Server, source: str, out: str
) -> None:
    data = {
        "v2 png": lambda: factory.card_png(factory.v2_card()),
        "v3 json": lambda: factory.json_bytes(factory.v3_card()),
        "seraphina": lambda: (factory.FILES / "seraphina.png").read_bytes(),
    }[source]()
    first = _import_alter(tmp_path, data, server)
    exported = _export(tmp_path, first, out)
    first.persona_nickname = "Renamed"  # the second import needs the name free
    first.save()

    second = _import_alter(tmp_path, exported, server)

    assert second.persona_nickname == read_card(data).name
    assert _without_picture(second) == _without_picture(first)
    assert persona_card(second).lorebook is not None
    assert persona_card(second).lorebook == persona_card(first).lorebook
    if out == "card.png" and source != "v3 json":
        with (
            Image.open(io.BytesIO(persona_card(second).avatar_png or b"")) as a,
            Image.open(io.BytesIO(persona_card(first).avatar_png or b"")) as b,
        ):
            assert a.tobytes() == b.tobytes()


def test_an_exported_png_has_both_chunks_as_sillytavern_writes_them(tmp_path: Path, server: Server) -> None:
    persona = _import_alter(tmp_path, factory.card_png(factory.v2_card()), server)
    with Image.open(io.BytesIO(_export(tmp_path, persona, "iris.png"))) as image:
        image.load()
        chara = json.loads(base64.b64decode(image.text["chara"]))
        ccv3 = json.loads(base64.b64decode(image.text["ccv3"]))
    assert (chara["spec"], chara["spec_version"], ccv3["spec"], ccv3["spec_version"]) == (
        "chara_card_v2",
        "2.0",
        "chara_card_v3",
        "3.0",
    )
    assert chara["name"] == chara["data"]["name"] == "Iris Vale"
    lighthouse = next(e for e in ccv3["data"]["character_book"]["entries"] if e["id"] == 1)
    assert lighthouse["keys"] == ["lighthouse", "beacon"] and lighthouse["extensions"]["probability"] == 100


def test_a_persona_made_here_exports_as_a_card(tmp_path: Path, server: Server) -> None:
    main = Persona.objects.get(server=server, is_alter=False)
    main.persona_prompt = "A cheerful librarian."
    main.save()
    card = json.loads(_export(tmp_path, main, "tomori.json"))
    assert (card["spec"], card["data"]["name"], card["data"]["description"]) == (
        "chara_card_v3",
        "Tomori",
        "A cheerful librarian.",
    )


def test_export_refuses_an_unknown_persona_and_a_wrong_suffix(tmp_path: Path, server: Server) -> None:
    with pytest.raises(CommandError, match="No persona has the id 999999") as unknown:
        call_command("export_card", "999999", str(tmp_path / "x.png"))
    with pytest.raises(CommandError, match=r"must end in \.png or \.json") as suffix:
        call_command("export_card", "1", str(tmp_path / "x.txt"))
    assert unknown.value.returncode == suffix.value.returncode == 2


def _import_book(tmp_path: Path, doc: object, server: Server, *args: str) -> str:
    path = tmp_path / "Eldoria.json"
    path.write_bytes(json.dumps(doc).encode() if not isinstance(doc, bytes) else doc)
    out = StringIO()
    call_command("import_lorebook", str(path), "--server", server.server_disc_id, *args, stdout=out)
    return out.getvalue()


def test_a_world_info_file_becomes_a_lorebook_of_the_whole_server(tmp_path: Path, server: Server) -> None:
    out = _import_book(tmp_path, factory.world_info(), server)

    book = Lorebook.objects.get(server=server)
    assert out == f"Imported lorebook {book.pk} (4 entries) of {server} for every persona\n"
    assert (book.persona, book.name, book.scan_depth) == (None, "Eldoria", 2)
    forest = LorebookEntry.objects.get(lorebook=book, uid=0)
    assert forest.keys == ["eldoria", "wood", "forest", "magical forest"]
    assert (forest.position, forest.enabled, forest.constant) == ("before_char", True, False)


def test_world_info_fields_map_and_unknown_ones_are_kept(tmp_path: Path, server: Server) -> None:
    doc = {
        "entries": {
            "7": {
                "uid": 7,
                "key": ["dragon"],
                "keysecondary": ["red", "cave"],
                "comment": "Dragons",
                "content": "Dragons sleep in caves.",
                "selective": True,
                "selectiveLogic": 2,
                "constant": False,
                "order": 300,
                "position": 4,
                "depth": 2,
                "disable": True,
                "scanDepth": 6,
                "caseSensitive": True,
                "matchWholeWords": False,
                "probability": 50,
                "group": "beasts",
            }
        }
    }
    _import_book(tmp_path, doc, server, "--persona", "tomori")
    entry = LorebookEntry.objects.get(lorebook__server=server)
    assert entry.lorebook.persona == Persona.objects.get(server=server, is_alter=False)
    assert (entry.keys, entry.secondary_keys, entry.selective, entry.selective_logic) == (
        ["dragon"],
        ["red", "cave"],
        True,
        "not_any",
    )
    assert (entry.insertion_order, entry.position, entry.depth, entry.enabled) == (300, "at_depth", 2, False)
    assert (entry.scan_depth, entry.case_sensitive, entry.match_whole_words) == (6, True, False)
    assert entry.extensions == {"probability": 50, "group": "beasts"}


@pytest.mark.parametrize(
    ("doc", "reason"),
    [
        ({"name": "x"}, "not a lorebook"),
        ([1, 2], "not a lorebook"),
        (b"{not json", "not valid JSON"),
        (factory.oversized(), "larger than 20 MB"),
    ],
)
def test_a_file_that_is_no_lorebook_exits_2_and_writes_nothing(
    tmp_path: Path, server: Server, doc: object, reason: str
) -> None:
    before = row_counts()
    with pytest.raises(CommandError, match=reason) as refused:
        _import_book(tmp_path, doc, server)
    assert refused.value.returncode == 2 and row_counts() == before


def test_an_unknown_persona_is_refused(tmp_path: Path, server: Server) -> None:
    with pytest.raises(CommandError, match="has no persona named Nobody"):
        _import_book(tmp_path, factory.world_info(), server, "--persona", "Nobody")
    assert not Lorebook.objects.exists()
