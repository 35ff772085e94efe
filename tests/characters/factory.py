"""Small cards and lorebooks built the way SillyTavern and other tools write them (Pillow writes the PNG
text chunks), and the malformed files every interface must refuse."""

from __future__ import annotations

import base64
import io
import json
import zipfile
import zlib
from pathlib import Path
from typing import Any

from PIL import Image, PngImagePlugin

FILES = Path(__file__).parent / "files"

BOOK: dict[str, Any] = {
    "name": "Harbour lore",
    "description": "The town and its people",
    "scan_depth": 3,
    "token_budget": 500,
    "recursive_scanning": False,
    "extensions": {},
    "entries": [
        {
            "id": 1,
            "keys": ["lighthouse", "beacon"],
            "secondary_keys": ["storm"],
            "comment": "The lighthouse",
            "content": "The lighthouse has been dark since the storm of '98.",
            "constant": False,
            "selective": True,
            "insertion_order": 50,
            "enabled": True,
            "position": "before_char",
            "extensions": {"position": 0, "depth": 4, "selectiveLogic": 0, "probability": 100},
        },
        {
            "id": 2,
            "keys": ["Mara"],
            "secondary_keys": [],
            "comment": "Mara",
            "content": "Mara keeps the tavern and every secret in town.",
            "constant": False,
            "selective": False,
            "insertion_order": 120,
            "enabled": True,
            "position": "after_char",
            "case_sensitive": True,
            "extensions": {"position": 4, "depth": 1, "selectiveLogic": 3, "match_whole_words": False},
        },
        {
            "id": 3,
            "keys": [],
            "comment": "Always",
            "content": "It is always raining in Saltmere.",
            "constant": True,
            "insertion_order": 10,
            "enabled": True,
            "extensions": {"position": 1, "scan_depth": 5},
        },
        {
            "id": 4,
            "keys": ["ghost"],
            "comment": "Off",
            "content": "Disabled entry.",
            "enabled": False,
            "insertion_order": 100,
            "extensions": {"position": 0},
        },
    ],
}

V2_DATA: dict[str, Any] = {
    "name": "Iris Vale",
    "description": "{{char}} is the harbour master of Saltmere, stern but fair.",
    "personality": "dry humour, patient, proud of her town",
    "scenario": "{{user}} arrives on the last ferry of the season.",
    "first_mes": "*Iris looks up from the ledger.* Late again, the ferry.",
    "mes_example": "<START>\n{{user}}: Is the inn open?\n{{char}}: *nods* Mara's is always open.\nTry the stew.\n"
    "<START>\n{{user}}: Who are you?\n{{char}}: The harbour master.",
    "creator_notes": "Test card written for Tomori Platform.",
    "system_prompt": "Write {{char}}'s next reply.",
    "post_history_instructions": "Stay in character.",
    "alternate_greetings": ["Evening. Papers?", "You look lost."],
    "tags": ["harbour", "slice of life"],
    "creator": "tomori-tests",
    "character_version": "1.2",
    "extensions": {"talkativeness": "0.5", "regex_scripts": [{"scriptName": "x", "findRegex": "/a/g"}]},
    "character_book": BOOK,
}


def v1_card() -> dict[str, Any]:
    keys = ("name", "description", "personality", "scenario", "first_mes", "mes_example")
    return {k: V2_DATA[k] for k in keys}


def v2_card() -> dict[str, Any]:
    return {"spec": "chara_card_v2", "spec_version": "2.0", "data": dict(V2_DATA)}


def v3_card() -> dict[str, Any]:
    data = {**V2_DATA, "nickname": "", "group_only_greetings": [], "assets": [], "source": []}
    return {"spec": "chara_card_v3", "spec_version": "3.0", "data": data}


def sillytavern_export() -> dict[str, Any]:
    """SillyTavern's JSON export: flat V1 fields (and its own) beside spec/data; data wins."""
    return {**v1_card(), "name": "stale flat name", "creatorcomment": "", "fav": False, **v2_card()}


def picture(size: tuple[int, int] = (24, 32), color: tuple[int, int, int] = (200, 120, 40)) -> Image.Image:
    return Image.new("RGB", size, color)


def png_bytes(chunks: dict[str, str], image: Image.Image | None = None) -> bytes:
    info = PngImagePlugin.PngInfo()
    for key, value in chunks.items():
        info.add_text(key, value)
    out = io.BytesIO()
    (image or picture()).save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def b64(card: dict[str, Any]) -> str:
    return base64.b64encode(json.dumps(card).encode()).decode()


def card_png(card: dict[str, Any], chunk: str = "chara", **extra_chunks: dict[str, Any]) -> bytes:
    return png_bytes({chunk: b64(card), **{k: b64(v) for k, v in extra_chunks.items()}})


def charx(card: dict[str, Any], icon: bytes | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        if icon is not None:
            card = {
                **card,
                "data": {
                    **card["data"],
                    "assets": [
                        {"type": "icon", "uri": "embeded://assets/icon/images/main.png", "name": "main", "ext": "png"}
                    ],
                },
            }
            archive.writestr("assets/icon/images/main.png", icon)
        archive.writestr("card.json", json.dumps(card))
    return out.getvalue()


def json_bytes(doc: Any) -> bytes:
    return json.dumps(doc).encode()


def world_info() -> dict[str, Any]:
    return json.loads((FILES / "eldoria.json").read_text())


# --- malformed files ---------------------------------------------------------------------------


def truncated_png() -> bytes:
    data = card_png(v2_card())
    return data[: len(data) // 2]


def png_without_card() -> bytes:
    return png_bytes({"Comment": "just a picture"})


def json_no_card() -> bytes:
    return json_bytes({"hello": "world", "items": [1, 2, 3]})


def oversized() -> bytes:
    """30 MB: a JSON string, so only the size can refuse it."""
    return b'{"name": "' + b"a" * (30 * 1024 * 1024) + b'"}'


def png_bomb() -> bytes:
    """A PNG declaring 100000×100000 pixels whose few bytes would inflate to 10 GB: refused from its header."""
    width = height = 100_000

    def chunk(kind: bytes, body: bytes) -> bytes:
        return len(body).to_bytes(4, "big") + kind + body + zlib.crc32(kind + body).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    rows = zlib.compressobj(9)
    pixels = rows.compress(b"\x00" * (1024 * 1024)) + rows.flush()
    text = chunk(b"tEXt", b"chara\x00" + b64(v2_card()).encode())
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + text + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
