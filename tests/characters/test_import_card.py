"""Card import: V1, V2 and V3 from PNG chunks, JSON (SillyTavern's export shape too) and CHARX, through
``manage.py import_card`` (the admin and API use the same reader and action: test_admin_api.py)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from io import StringIO
from pathlib import Path
from typing import Any

import pytest
from django.core.management import CommandError, call_command
from PIL import Image

from characters.files import read_card
from personas.models import Lorebook, LorebookEntry, Persona, PersonaCard, Server
from tests.characters import factory
from tests.characters.conftest import row_counts

pytestmark = pytest.mark.django_db

CONTAINERS: dict[str, Callable[[], bytes]] = {
    "v1 json": lambda: factory.json_bytes(factory.v1_card()),
    "v2 json": lambda: factory.json_bytes(factory.v2_card()),
    "v3 json": lambda: factory.json_bytes(factory.v3_card()),
    "sillytavern export json": lambda: factory.json_bytes(factory.sillytavern_export()),
    "v1 in chara": lambda: factory.card_png(factory.v1_card()),
    "v2 in chara": lambda: factory.card_png(factory.v2_card()),
    "v3 in chara": lambda: factory.card_png(factory.v3_card()),
    "v1 in ccv3": lambda: factory.card_png(factory.v1_card(), chunk="ccv3"),
    "v3 in ccv3": lambda: factory.card_png(factory.v3_card(), chunk="ccv3"),
    "ccv3 preferred over chara": lambda: factory.card_png(
        factory.v3_card(), chunk="ccv3", chara={**factory.v1_card(), "name": "Old Name"}
    ),
    "v2 charx": lambda: factory.charx(factory.v2_card()),
    "v3 charx": lambda: factory.charx(factory.v3_card(), icon=factory.png_bytes({})),
}
FULL_CARDS = {name for name in CONTAINERS if "v1" not in name or "preferred" in name}


def _import(tmp_path: Path, data: bytes, server: Server, *args: str, name: str = "card.bin") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    out = StringIO()
    call_command("import_card", str(path), "--server", server.server_disc_id, *args, stdout=out)
    return out.getvalue()


@pytest.mark.parametrize("container", list(CONTAINERS))
def test_every_version_in_every_container_becomes_an_alter(tmp_path: Path, server: Server, container: str) -> None:
    out = _import(tmp_path, CONTAINERS[container](), server, "--alter")

    persona = Persona.objects.get(server=server, is_alter=True)
    assert out.count("\n") == 1 and f"Imported Iris Vale as alter {persona.persona_id}" in out
    assert persona.persona_nickname == "Iris Vale"
    assert persona.trigger_words == ["iris vale"]
    assert persona.persona_prompt == factory.V2_DATA["description"]
    assert persona.sample_dialogue == [
        {"role": "user", "text": "Is the inn open?"},
        {"role": "model", "text": "*nods* Mara's is always open.\nTry the stew."},
        {"role": "user", "text": "Who are you?"},
        {"role": "model", "text": "The harbour master."},
    ]
    card = PersonaCard.objects.get(persona=persona)
    assert (card.personality, card.scenario, card.first_message) == (
        factory.V2_DATA["personality"],
        factory.V2_DATA["scenario"],
        factory.V2_DATA["first_mes"],
    )
    if container in FULL_CARDS:
        assert card.alternate_greetings == factory.V2_DATA["alternate_greetings"]
        assert (card.system_prompt, card.post_history_instructions) == (
            "Write {{char}}'s next reply.",
            "Stay in character.",
        )
        assert (card.creator, card.character_version, card.tags) == (
            "tomori-tests",
            "1.2",
            ["harbour", "slice of life"],
        )
        assert card.creator_notes == factory.V2_DATA["creator_notes"]
        # Scripts are data: stored as the card had them, never run.
        assert card.extensions["regex_scripts"] == [{"scriptName": "x", "findRegex": "/a/g"}]
        book = Lorebook.objects.get(persona=persona)
        assert (book.name, book.scan_depth, book.token_budget) == ("Harbour lore", 3, 500)
        assert LorebookEntry.objects.filter(lorebook=book).count() == 4
    assert card.spec == ("v1" if container in ("v1 json", "v1 in chara", "v1 in ccv3") else card.spec)


def test_a_png_card_keeps_its_picture_for_the_alters_webhook(tmp_path: Path, server: Server, settings: Any) -> None:
    settings.PUBLIC_BASE_URL = "https://tomori.example"
    _import(tmp_path, factory.card_png(factory.v2_card()), server, "--alter")

    persona = Persona.objects.get(server=server, is_alter=True)
    assert persona.webhook_avatar_url == f"https://tomori.example/cards/{persona.persona_id}/avatar.png"
    with Image.open(__import__("io").BytesIO(bytes(PersonaCard.objects.get(persona=persona).avatar))) as image:
        assert image.size == (24, 32) and not image.text  # the card chunk is not in the stored picture


def test_without_alter_the_main_persona_takes_the_character_and_a_new_lineage(tmp_path: Path, server: Server) -> None:
    main = Persona.objects.get(server=server, is_alter=False)
    main.attributes.create(attribute_order=1, attribute_text="Tomori's old trait")
    old_lineage = main.persona_lineage_id

    out = _import(tmp_path, factory.json_bytes(factory.v3_card()), server)

    main.refresh_from_db()
    assert f"Imported Iris Vale as main persona {main.persona_id}" in out
    assert (main.persona_nickname, main.trigger_words) == ("Iris Vale", ["iris vale"])
    assert main.persona_lineage_id != old_lineage and not main.attributes.exists()
    assert Persona.objects.filter(server=server).count() == 1


def test_the_real_seraphina_card_imports_with_its_lorebook(tmp_path: Path, server: Server) -> None:
    _import(tmp_path, (factory.FILES / "seraphina.png").read_bytes(), server, "--alter")

    persona = Persona.objects.get(server=server, is_alter=True)
    assert persona.persona_nickname == "Seraphina"
    assert "Seraphina" in (persona.persona_prompt or "")
    assert PersonaCard.objects.get(persona=persona).spec == "chara_card_v2"
    entries = LorebookEntry.objects.filter(lorebook__persona=persona)
    assert entries.count() >= 3 and all(e.keys for e in entries)


def test_a_name_already_on_the_server_is_refused_and_nothing_written(tmp_path: Path, server: Server) -> None:
    Persona.objects.create(server=server, persona_nickname="iris vale ", is_alter=True)
    before = row_counts()
    with pytest.raises(CommandError, match="already has a persona named Iris Vale") as refused:
        _import(tmp_path, factory.json_bytes(factory.v2_card()), server, "--alter")
    assert refused.value.returncode == 2
    assert row_counts() == before


MALFORMED: dict[str, tuple[Callable[[], bytes], str]] = {
    "truncated png": (factory.truncated_png, "The PNG is refused: not a readable"),
    "png without a card": (factory.png_without_card, "holds no character card"),
    "json that is no card": (factory.json_no_card, "not a character card"),
    "a lorebook given as a card": (lambda: factory.json_bytes(factory.world_info()), "import_lorebook"),
    "30 MB": (factory.oversized, "larger than 20 MB"),
    "png bomb": (factory.png_bomb, "too many pixels"),
    "not json at all": (lambda: b"\x00\x01garbage", "not valid JSON"),
    "card chunk not base64": (lambda: factory.png_bytes({"chara": "%%%"}), "not base64"),
    "v2 without data": (lambda: factory.json_bytes({"spec": "chara_card_v2"}), "has no data object"),
    "no name": (lambda: factory.json_bytes({**factory.v1_card(), "name": " "}), "no character name"),
    "zip without card.json": (lambda: factory.charx({"data": {}}).replace(b"card.json", b"cart.json"), "no card.json"),
    "deep nesting": (lambda: b"[" * 100_000 + b"]" * 100_000, "not valid JSON"),
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_a_malformed_file_exits_2_with_one_line_and_writes_nothing(tmp_path: Path, server: Server, case: str) -> None:
    make, reason = MALFORMED[case]
    before = row_counts()
    with pytest.raises(CommandError) as refused:
        _import(tmp_path, make(), server, "--alter")
    assert refused.value.returncode == 2
    assert reason in str(refused.value) and "\n" not in str(refused.value)
    assert row_counts() == before


def test_the_command_line_says_one_line_on_stderr_and_exits_2(tmp_path: Path, server: Server) -> None:
    """The process itself, as an operator runs it (its database is not the test's, so the server id
    it cannot find is refused just the same: exit 2, one line)."""
    path = tmp_path / "nothing.png"
    path.write_bytes(factory.png_without_card())
    run = subprocess.run(
        [sys.executable, "manage.py", "import_card", str(path), "--server", "1"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert run.returncode == 2
    assert run.stdout == "" and run.stderr.count("\n") == 1 and run.stderr.startswith("CommandError: ")


def test_the_reader_ignores_a_files_name(server: Server) -> None:
    """A V1 card in a file named v2 (or a PNG named .json) is read by its bytes."""
    assert read_card(factory.card_png(factory.v1_card())).spec == "v1"
