"""Card and lorebook files from outside: PNG (a `ccv3` or `chara` text chunk, read by Pillow), JSON and
CHARX (a zip with `card.json` and its assets). Every file is hostile: its size is bounded before it is
read, a PNG's pixels by ``MAX_IMAGE_PIXELS`` from its header before any is decoded (``opened_image``),
a CHARX's members by their declared sizes before any is inflated; anything else is one ``CardError``.
"""

from __future__ import annotations

import base64
import binascii
import io
import json
import zipfile
from typing import Any

from PIL import Image, PngImagePlugin

from bot.conversation.image_bytes import ImageRefused, opened_image
from characters.errors import CardError
from characters.spec import V2, V3, card_from_json, card_to_json
from characters.worldinfo import read_lorebook
from personas.character_data import CardData, LorebookData

MAX_CARD_BYTES = 20 * 1024 * 1024
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
ZIP_SIGNATURE = b"PK\x03\x04"
# V3 readers look for `ccv3` first; `chara` is what older readers (and most cards) have.
CARD_CHUNKS = ("ccv3", "chara")
_EMBEDDED = "embeded://"  # sic: the CHARX spec's spelling


def _check_size(size: int) -> None:
    if size > MAX_CARD_BYTES:
        raise CardError(f"The file has {size / 1024 / 1024:.1f} MB; a card or lorebook may have at most 20 MB.")


def _json(raw: bytes, what: str) -> Any:
    try:
        return json.loads(raw.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise CardError(f"The {what} is not valid JSON.") from exc


def _png_avatar(image: Image.Image) -> bytes:
    """The picture alone, re-encoded: no text chunk of the original (card, metadata) is kept."""
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


def _read_png(data: bytes) -> CardData:
    try:
        with opened_image(data) as (image, inspected):
            # A PNG always opens as a PngImageFile, the class that reads text chunks.
            if inspected.content_type != "image/png" or not isinstance(image, PngImagePlugin.PngImageFile):
                raise CardError("The file is not a PNG image.")
            image.load()  # text chunks after the pixels are read only with them
            chunks = {key: image.text.get(key) for key in CARD_CHUNKS}
            avatar = _png_avatar(image)
    except ImageRefused as exc:
        raise CardError(f"The PNG is refused: {exc}.") from exc
    encoded = next((value for value in chunks.values() if value), None)
    if encoded is None:
        raise CardError("The PNG holds no character card (no ccv3 or chara text chunk).")
    try:
        raw = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise CardError("The PNG's card chunk is not base64.") from exc
    card = card_from_json(_json(raw, "PNG's card chunk"))
    return CardData(**{**card.__dict__, "avatar_png": avatar})


def _charx_avatar(archive: zipfile.ZipFile, doc: Any) -> bytes | None:
    assets = doc.get("data", {}).get("assets") if isinstance(doc.get("data"), dict) else None
    for asset in assets if isinstance(assets, list) else []:
        uri = asset.get("uri") if isinstance(asset, dict) else None
        if asset.get("type") == "icon" and isinstance(uri, str) and uri.startswith(_EMBEDDED):
            try:
                with opened_image(archive.read(uri[len(_EMBEDDED) :])) as (image, _):
                    image.load()
                    return _png_avatar(image)
            except (KeyError, ImageRefused):
                return None
    return None


def _read_charx(data: bytes) -> CardData:
    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            # Declared sizes bound what inflating may produce; zipfile stops at a member's declared size.
            _check_size(sum(info.file_size for info in archive.infolist()))
            doc = _json(archive.read("card.json"), "CHARX's card.json")
            card = card_from_json(doc)
            return CardData(**{**card.__dict__, "avatar_png": _charx_avatar(archive, doc)})
    except KeyError as exc:
        raise CardError("The CHARX file has no card.json.") from exc
    except (zipfile.BadZipFile, zipfile.LargeZipFile, EOFError, OSError, NotImplementedError) as exc:
        raise CardError("The file is not a readable CHARX (zip) archive.") from exc


def read_card(data: bytes) -> CardData:
    """A card from a file's bytes, whatever its name says: PNG, CHARX or JSON by their first bytes."""
    _check_size(len(data))
    if data.startswith(PNG_SIGNATURE):
        return _read_png(data)
    if data.startswith(ZIP_SIGNATURE):
        return _read_charx(data)
    return card_from_json(_json(data, "file"))


def read_lorebook_file(data: bytes, *, name: str = "") -> LorebookData:
    _check_size(len(data))
    return read_lorebook(_json(data, "file"), name=name)


def _plain_picture() -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (256, 256), (90, 96, 110)).save(out, format="PNG")
    return out.getvalue()


def card_png(card: CardData) -> bytes:
    """The card as SillyTavern writes it: its picture (a plain one without) with the V2 card in `chara`
    and the V3 card in `ccv3`."""
    with Image.open(io.BytesIO(card.avatar_png or _plain_picture())) as image:
        info = PngImagePlugin.PngInfo()
        for chunk, spec in (("chara", V2), ("ccv3", V3)):
            payload = json.dumps(card_to_json(card, spec), ensure_ascii=False).encode()
            info.add_text(chunk, base64.b64encode(payload).decode("ascii"))
        out = io.BytesIO()
        image.save(out, format="PNG", pnginfo=info)
    return out.getvalue()


def card_json_bytes(card: CardData) -> bytes:
    return json.dumps(card_to_json(card, V3), ensure_ascii=False, indent=2).encode()
