"""A persona as a card: its own columns, its card row (a persona made here has none) and its lorebooks."""

from __future__ import annotations

from personas.character_data import CardData, DialogueLine, LorebookData, LoreEntry
from personas.models import Lorebook, Persona, PersonaCard

_ENTRY_FIELDS = tuple(f for f in LoreEntry.__dataclass_fields__ if f not in ("keys", "secondary_keys"))


def _entry(row: object) -> LoreEntry:
    return LoreEntry(
        **{name: getattr(row, name) for name in _ENTRY_FIELDS},
        keys=tuple(getattr(row, "keys", ())),
        secondary_keys=tuple(getattr(row, "secondary_keys", ())),
    )


def persona_lorebook(persona: Persona) -> LorebookData | None:
    """The persona's own books as one ``character_book`` (the first book's settings; a card holds one)."""
    books = list(Lorebook.objects.filter(persona=persona).prefetch_related("entries").order_by("id"))
    if not books:
        return None
    first = books[0]
    return LorebookData(
        entries=tuple(_entry(row) for book in books for row in book.entries.all()),
        name=first.name,
        description=first.description,
        scan_depth=first.scan_depth,
        token_budget=first.token_budget,
        recursive_scanning=first.recursive_scanning,
        extensions=first.extensions,
    )


def persona_card(persona: Persona) -> CardData:
    card = PersonaCard.objects.filter(persona=persona).first() or PersonaCard(persona=persona)
    dialogue = tuple(
        DialogueLine("user" if line.get("role") == "user" else "model", str(line.get("text") or ""))
        for line in persona.sample_dialogue or ()
        if isinstance(line, dict)
    )
    return CardData(
        name=persona.persona_nickname,
        spec=card.spec,
        description=persona.persona_prompt or "",
        personality=card.personality,
        scenario=card.scenario,
        first_message=card.first_message,
        alternate_greetings=tuple(card.alternate_greetings),
        example_dialogue=dialogue,
        system_prompt=card.system_prompt,
        post_history_instructions=card.post_history_instructions,
        creator_notes=card.creator_notes,
        creator=card.creator,
        character_version=card.character_version,
        tags=tuple(card.tags),
        extensions=card.extensions,
        lorebook=persona_lorebook(persona),
        avatar_png=bytes(card.avatar) if card.avatar else None,
    )
