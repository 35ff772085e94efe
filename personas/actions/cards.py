"""Characters brought from SillyTavern: a card becomes a persona, a lorebook becomes world info
(README "Bringing characters"). The values come from ``characters``' readers, already checked."""

from __future__ import annotations

from dataclasses import asdict

from django.conf import settings
from django.db import transaction
from django.db.models.functions import Lower, Trim

from personas.actions.actor import Actor, recording
from personas.actions.errors import ActionError
from personas.character_data import CardData, LorebookData
from personas.models import Lorebook, LorebookEntry, Persona, PersonaCard, PersonaLineage, Server

NICKNAME_LENGTH = Persona._meta.get_field("persona_nickname").max_length


class NameTaken(ActionError):
    field = "persona_nickname"


def _check_name(server: Server, name: str, *, keep: Persona | None) -> str:
    cleaned = name.strip()
    if not cleaned:
        raise NameTaken("The card has no character name.")
    if NICKNAME_LENGTH is not None and len(cleaned) > NICKNAME_LENGTH:  # None: the column has no limit
        raise NameTaken(f"The name has {len(cleaned)} characters; a persona's name holds {NICKNAME_LENGTH}.")
    clash = Persona.objects.annotate(key=Lower(Trim("persona_nickname"))).filter(server=server, key=cleaned.lower())
    if keep is not None:
        clash = clash.exclude(pk=keep.pk)
    if clash.exists():
        raise NameTaken(f"This server already has a persona named {cleaned}: rename or delete it first.")
    return cleaned


def avatar_url(persona: Persona) -> str:
    """Where Discord fetches an imported alter's picture (``characters.views.card_avatar``)."""
    return f"{settings.PUBLIC_BASE_URL}/cards/{persona.persona_id}/avatar.png"


def _write_lorebook(server: Server, book: LorebookData, persona: Persona | None) -> Lorebook:
    lorebook = Lorebook.objects.create(
        server=server,
        persona=persona,
        name=book.name[:200],
        description=book.description,
        scan_depth=book.scan_depth,
        token_budget=book.token_budget,
        recursive_scanning=book.recursive_scanning,
        extensions=book.extensions,
    )
    LorebookEntry.objects.bulk_create(
        LorebookEntry(
            lorebook=lorebook,
            **{**asdict(entry), "keys": list(entry.keys), "secondary_keys": list(entry.secondary_keys)},
        )
        for entry in book.entries
    )
    return lorebook


def _card_row(persona: Persona, card: CardData) -> PersonaCard:
    return PersonaCard(
        persona=persona,
        spec=card.spec,
        personality=card.personality,
        scenario=card.scenario,
        first_message=card.first_message,
        alternate_greetings=list(card.alternate_greetings),
        system_prompt=card.system_prompt,
        post_history_instructions=card.post_history_instructions,
        creator_notes=card.creator_notes,
        creator=card.creator[:200],
        character_version=card.character_version[:100],
        tags=list(card.tags),
        extensions=card.extensions,
        avatar=card.avatar_png,
    )


def import_card(server: Server, card: CardData, *, as_alter: bool, actor: Actor) -> Persona:
    """The card as a persona of ``server``, answering to its name: a new alter, or (``as_alter`` off)
    the server's main persona taking the character. The main persona then draws a new lineage and
    loses the old character's traits, appearance, card and own lorebooks: a different character must
    not remember what the previous one was told. The card's lorebook becomes the persona's."""
    with recording(actor), transaction.atomic(durable=True):
        main = None if as_alter else Persona.objects.select_for_update().filter(server=server, is_alter=False).first()
        name = _check_name(server, card.name, keep=main)
        persona = main or Persona(server=server, is_alter=as_alter)
        if main is not None:
            main.attributes.all().delete()
            main.lorebooks.all().delete()
            PersonaCard.objects.filter(persona=main).delete()
            persona.persona_lineage_id = PersonaLineage.allocate(name)
            persona.physical_appearance_tags = []
        persona.persona_nickname = name
        persona.trigger_words = [name.lower()]
        persona.persona_prompt = card.description or None
        persona.sample_dialogue = [{"role": line.role, "text": line.text} for line in card.example_dialogue]
        persona.save()
        if as_alter and card.avatar_png:
            persona.webhook_avatar_url = avatar_url(persona)
            persona.save(update_fields=["webhook_avatar_url"])
        _card_row(persona, card).save()
        if card.lorebook is not None:
            _write_lorebook(server, card.lorebook, persona)
    return persona


def import_lorebook(server: Server, book: LorebookData, *, persona: Persona | None, actor: Actor) -> Lorebook:
    """A world-info book for every persona of ``server``, or for ``persona`` alone."""
    if persona is not None and persona.server_id != server.server_id:
        raise ActionError("That persona is not one of this server's.")
    with recording(actor), transaction.atomic(durable=True):
        return _write_lorebook(server, book, persona)
