"""A memory as people read it: `{user}` and `{bot}` filled in with names, as the prompt fills them.

Memories are stored as templates so a renamed user or persona stays named right in the prompt; the
admin's lists, titles and history, the export and the API show them with the names instead (the edit
form keeps the template, where it is changed). The placeholders are filled by the grammar the prompt's
mention pass is built from (``personas.values.placeholders``). The user is named by their Discord name,
never a saved nickname: a privacy-FULL user's chosen name must not reach a moderator's page.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ObjectDoesNotExist
from django.db.models import QuerySet

from personas.models import GLOBAL_LINEAGE_ID, DiscordUser, Persona, PersonalMemory
from personas.values.placeholders import fill_placeholders

# {bot} of a global memory: every persona reads it, each with its own name.
ANY_PERSONA = "the persona"
# {user} of a server memory: whoever the persona answers.
ANY_USER = "the person answered"
# {user} of an old version whose user row is gone (the audit trail keeps versions).
GONE_USER = "a user no longer stored"
# {user} of a personal memory whose user was not loaded with it (a title names nobody it would query for).
ANY_PERSON = "the person"
TITLE_CHARS = 80


def user_name(user: DiscordUser) -> str:
    return user.global_name or user.username or user.user_disc_id


# Which persona names a lineage: its main persona, else its first alter.
HOLDER_ORDER = ("is_alter", "persona_id")


def lineage_persona_names(lineage_ids: Iterable[int], personas: QuerySet[Persona]) -> dict[int, str]:
    """Lineage id → the name of its main persona (else its first alter) among ``personas``, the reader's
    scope (required: another server's persona sharing a lineage must stay unnamed); one query."""
    wanted = sorted(set(lineage_ids) - {GLOBAL_LINEAGE_ID})
    names: dict[int, str] = {}
    rows = personas.filter(persona_lineage_id__in=wanted).order_by("persona_lineage_id", *HOLDER_ORDER)
    for lineage_id, nickname in rows.values_list("persona_lineage_id", "persona_nickname"):
        names.setdefault(lineage_id, nickname)
    return names


def persona_name(lineage_id: int, names: dict[int, str]) -> str:
    return names.get(lineage_id, ANY_PERSONA)


def memory_title(memory: Any) -> str:
    """A memory (or a version of one) with the names that were loaded with it, for titles; never a query.

    ``__str__`` knows no reader, so it may name nobody a reader could not see: the persona comes only from
    a scoped ``lineage_persona`` annotation (``personas.admin.common.lineage_holder``) and the user only
    when fetched with the row; otherwise generic words stand in.
    """
    persona = getattr(memory, "lineage_persona", None) or ANY_PERSONA
    if not isinstance(memory, PersonalMemory | PersonalMemory.history.model):
        return fill_placeholders(memory.content, ANY_USER, persona)[:TITLE_CHARS]
    return fill_placeholders(memory.content, _loaded_user_name(memory), persona)[:TITLE_CHARS]


def _loaded_user_name(memory: Any) -> str:
    if not memory._meta.get_field("user").is_cached(memory):
        return ANY_PERSON
    try:
        user = memory.user
    except ObjectDoesNotExist:
        user = None
    # A version's user row may be gone (the trail outlives it): its title still renders.
    return GONE_USER if user is None else user_name(user)
