"""Finding prompt records by participant (issue 16: ``?q=mina`` in the inspector's list).

A record's participants are the targets of its stored participant index (the names the persona could
use for each person: the display label and every alias) and the users it is about
(``subject_user_ids``, the ids forget-me matches). Both are tested inside the list's one query, by an
EXISTS over the JSON per row, so a page costs what it did: no second query, no id list brought back.
"""

from __future__ import annotations

from django.db import connection
from django.db.models import BooleanField, Q
from django.db.models.expressions import RawSQL

from chatcontext.records.forgetting import about_user
from chatcontext.records.models import PromptRecord

_TARGETS = {
    # Arrays only: an index without targets (an old or failed turn) simply matches nothing.
    "postgresql": (
        "EXISTS (SELECT 1 FROM jsonb_array_elements(CASE WHEN jsonb_typeof({col}->'targets') = 'array' "
        "THEN {col}->'targets' ELSE '[]'::jsonb END) AS t "
        "WHERE t->>'display_label' ILIKE %s ESCAPE '\\' OR EXISTS (SELECT 1 FROM jsonb_array_elements("
        "CASE WHEN jsonb_typeof(t->'aliases') = 'array' THEN t->'aliases' ELSE '[]'::jsonb END) AS a "
        "WHERE a->>'value' ILIKE %s ESCAPE '\\'))"
    ),
    # SQLite's LIKE ignores ASCII case already.
    "sqlite": (
        "EXISTS (SELECT 1 FROM json_each({col}, '$.targets') AS t WHERE t.type = 'object' AND ("
        "json_extract(t.value, '$.display_label') LIKE %s ESCAPE '\\' OR EXISTS (SELECT 1 FROM "
        "json_each(t.value, '$.aliases') AS a WHERE a.type = 'object' AND "
        "json_extract(a.value, '$.value') LIKE %s ESCAPE '\\')))"
    ),
}


def _like(term: str) -> str:
    escaped = term.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def participant_match(term: str) -> Q:
    """Records with a participant named like ``term`` (any part, any case), or about the user whose
    Discord id ``term`` is."""
    column = f"{PromptRecord._meta.db_table}.participant_target_index"
    pattern = _like(term)
    named = RawSQL(_TARGETS[connection.vendor].format(col=column), (pattern, pattern), output_field=BooleanField())
    match = Q(named)
    if term.isdigit():
        match |= about_user(term)
    return match
