"""Character Card V1, V2 and V3 JSON ↔ ``CardData`` (README "Bringing characters" has the mapping).

V2 (``chara_card_v2``) and V3 (``chara_card_v3``) keep the character under ``data``; V1 is the flat
object. SillyTavern's own export writes both: flat V1 fields beside ``spec``/``data``, and then
``data`` wins. A card's version is what its ``spec`` says, whatever chunk or file name it came in.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from characters import fields
from characters.errors import CardError
from characters.worldinfo import book_from_card, book_to_card
from personas.character_data import CardData, DialogueLine, JSONDict

V2, V3 = "chara_card_v2", "chara_card_v3"
_V1_FIELDS = ("description", "personality", "scenario", "first_mes", "mes_example")
_START = re.compile(r"^\s*<START>\s*$", re.IGNORECASE)
_SPEAKER = re.compile(r"^\s*(\{\{user\}\}|<USER>|\{\{char\}\}|<BOT>)\s*:\s?", re.IGNORECASE)


def parse_dialogue(text: str) -> tuple[DialogueLine, ...]:
    """``mes_example`` → lines: `{{user}}:` starts a user line, `{{char}}:` a character line, any other
    line continues the one before (or opens a character line); `<START>` separators are dropped."""
    lines: list[DialogueLine] = []
    for raw in text.replace("\r\n", "\n").split("\n"):
        if _START.match(raw):
            continue
        speaker = _SPEAKER.match(raw)
        if speaker:
            role: Literal["user", "model"] = "user" if speaker.group(1).lower() in ("{{user}}", "<user>") else "model"
            lines.append(DialogueLine(role, raw[speaker.end() :]))
        elif lines:
            lines[-1] = DialogueLine(lines[-1].role, f"{lines[-1].text}\n{raw}")
        elif raw.strip():
            lines.append(DialogueLine("model", raw))
    return tuple(DialogueLine(line.role, line.text.strip()) for line in lines if line.text.strip())


def render_dialogue(lines: tuple[DialogueLine, ...]) -> str:
    if not lines:
        return ""
    body = [f"{'{{user}}' if line.role == 'user' else '{{char}}'}: {line.text}" for line in lines]
    return "\n".join(["<START>", *body])


def card_from_json(doc: Any) -> CardData:
    """A card from its parsed JSON; ``CardError`` when it is none."""
    if not isinstance(doc, dict):
        raise CardError("This JSON is not a character card: it is not an object.")
    spec = doc.get("spec")
    if spec in (V2, V3):
        data = doc.get("data")
        if not isinstance(data, dict):
            raise CardError(f"This {spec} card has no data object.")
    elif isinstance(doc.get("name"), str) and any(isinstance(doc.get(f), str) for f in _V1_FIELDS):
        spec, data = "v1", doc
    elif "entries" in doc:
        raise CardError("This JSON is a lorebook, not a character card: import it with import_lorebook.")
    else:
        raise CardError("This JSON is not a character card: it has no spec and no character fields.")
    name = fields.text(data, "name").strip()
    if not name:
        raise CardError("The card has no character name.")
    return CardData(
        name=name,
        spec=str(spec),
        description=fields.text(data, "description"),
        personality=fields.text(data, "personality"),
        scenario=fields.text(data, "scenario"),
        first_message=fields.text(data, "first_mes"),
        alternate_greetings=fields.texts(data, "alternate_greetings"),
        example_dialogue=parse_dialogue(fields.text(data, "mes_example")),
        system_prompt=fields.text(data, "system_prompt"),
        post_history_instructions=fields.text(data, "post_history_instructions"),
        creator_notes=fields.text(data, "creator_notes") or fields.text(doc, "creatorcomment"),
        creator=fields.text(data, "creator"),
        character_version=fields.text(data, "character_version"),
        tags=fields.texts(data, "tags"),
        extensions=fields.mapping(data, "extensions"),
        lorebook=book_from_card(data.get("character_book")),
    )


def card_to_json(card: CardData, spec: str) -> JSONDict:
    """The card as ``spec`` (V2 or V3) JSON, with SillyTavern's flat V1 fields beside it as it writes them."""
    data: JSONDict = {
        "name": card.name,
        "description": card.description,
        "personality": card.personality,
        "scenario": card.scenario,
        "first_mes": card.first_message,
        "mes_example": render_dialogue(card.example_dialogue),
        "creator_notes": card.creator_notes,
        "system_prompt": card.system_prompt,
        "post_history_instructions": card.post_history_instructions,
        "alternate_greetings": list(card.alternate_greetings),
        "tags": list(card.tags),
        "creator": card.creator,
        "character_version": card.character_version,
        "extensions": card.extensions,
    }
    if card.lorebook is not None:
        data["character_book"] = book_to_card(card.lorebook)
    if spec == V3:
        data |= {"group_only_greetings": [], "assets": []}
    flat = {key: data[key] for key in ("name", "description", "personality", "scenario", "first_mes", "mes_example")}
    return {**flat, "spec": spec, "spec_version": "3.0" if spec == V3 else "2.0", "data": data}
