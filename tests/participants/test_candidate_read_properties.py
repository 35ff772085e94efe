"""D-16 property: the candidate read's SQL selects exactly the users whose normalized saved nickname
(D-05, Python's lower-casing) occurs in the normalized history text, on SQLite and PostgreSQL.

The SQL side lower-cases with the database's LOWER and pre-selects the rows it cannot decide; this
checks that nothing the Python definition accepts is lost on the way, for nicknames and texts drawn
from characters where the two disagree (non-ASCII case pairs, dotted capital I, final sigma,
non-space whitespace, leading `@`).
"""

from __future__ import annotations

import pytest
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.participants.candidates import CandidateQuery, load_candidate_rows, normalize_history_text
from chatcontext.participants.model import normalize_alias
from personas import models as m
from tests.participants.builders import NOW_MS

_ALPHABET = "abkAK @\t\u00a0\u2003éÉøØİıiIΣσςΑα"
_nicknames = st.text(_ALPHABET, min_size=0, max_size=8)


@st.composite
def _world(draw: st.DrawFn) -> tuple[list[str], str]:
    nicknames = draw(st.lists(_nicknames, min_size=1, max_size=6))
    # The history mentions some nicknames (case and spacing changed) among random text.
    pieces = [draw(st.text(_ALPHABET, max_size=12))]
    for nickname in nicknames:
        if draw(st.booleans()):
            written = draw(st.sampled_from([nickname, nickname.upper(), nickname.lower(), nickname.swapcase()]))
            pieces += [written, draw(st.text(_ALPHABET, max_size=6))]
    return nicknames, "".join(pieces)


@pytest.mark.django_db
@given(_world())
def test_d16_nickname_clause_selects_what_the_python_definition_selects(world: tuple[list[str], str]) -> None:
    nicknames, text = world
    haystack = normalize_history_text(text)
    with transaction.atomic():
        users = m.DiscordUser.objects.bulk_create(
            [
                m.DiscordUser(user_disc_id=str(700000000000000000 + i), username=f"u{i}", user_nickname=nick or None)
                for i, nick in enumerate(nicknames)
            ]
        )
        selected = {c.row.user_disc_id for c in load_candidate_rows(CandidateQuery(None, (), text, NOW_MS))}
        transaction.set_rollback(True)
    expected = {
        u.user_disc_id for u in users if (needle := normalize_alias(u.user_nickname or "")) and needle in haystack
    }
    assert selected == expected, (nicknames, text)
