"""D-16 property: the candidate read's SQL selects exactly the users known to the server (members and
counted authors) whose normalized saved nickname (D-05, Python's lower-casing) occurs in the
normalized history text, on SQLite and PostgreSQL; a user of other servers only is never selected.

The SQL side lower-cases with the database's LOWER and gives the rows it cannot decide the key
``''`` (decided in Python); this checks that nothing the Python definition accepts is lost on the
way, for nicknames and texts drawn from characters where the two disagree (non-ASCII case pairs,
dotted capital I, final sigma, non-space whitespace, leading `@`).
"""

from __future__ import annotations

import datetime

import pytest
from django.db import transaction
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.participants.model import normalize_alias
from chatcontext.participants.candidates import CandidateQuery, load_candidate_rows, normalize_history_text
from personas import models as m
from tests.chatcontext.participants.builders import NOW_MS

_ALPHABET = "abkAK @\t\u00a0\u2003éÉøØİıiIΣσςΑα"
_nicknames = st.text(_ALPHABET, min_size=0, max_size=8)


@st.composite
def _world(draw: st.DrawFn) -> tuple[list[tuple[str, str]], str]:
    """Nicknames, each of a member, a counted author or a user of another server only, and a history
    that mentions some of them (case and spacing changed) among random text."""
    users = draw(st.lists(st.tuples(_nicknames, st.sampled_from(KINDS)), min_size=1, max_size=6))
    pieces = [draw(st.text(_ALPHABET, max_size=12))]
    for nickname, _kind in users:
        if draw(st.booleans()):
            written = draw(st.sampled_from([nickname, nickname.upper(), nickname.lower(), nickname.swapcase()]))
            pieces += [written, draw(st.text(_ALPHABET, max_size=6))]
    return users, "".join(pieces)


KINDS = ("member", "author", "elsewhere")
BUCKET = datetime.date(2026, 1, 1)


@pytest.mark.django_db
@given(_world())
def test_d16_nickname_clause_selects_what_the_python_definition_selects(
    world: tuple[list[tuple[str, str]], str],
) -> None:
    users, text = world
    haystack = normalize_history_text(text)
    with transaction.atomic():
        server = m.Server.objects.create(server_disc_id="500000000000000777", name="Here")
        other = m.Server.objects.create(server_disc_id="500000000000000778", name="Elsewhere")
        rows = m.DiscordUser.objects.bulk_create(
            [
                m.DiscordUser(user_disc_id=str(700000000000000000 + i), username=f"u{i}", user_nickname=nick or None)
                for i, (nick, _kind) in enumerate(users)
            ]
        )
        for row, (_nick, kind) in zip(rows, users, strict=True):
            if kind == "member":
                m.ServerMember.objects.create(server=server, user_disc_id=row.user_disc_id)
            # An author counted under a metric that is no D-16 activity: known, yet no evidence.
            counted_in = server if kind == "author" else other
            m.StatCounter.objects.create(server=counted_in, user=row, metric="reaction_added", bucket=BUCKET, count=1)
        query = CandidateQuery(server.server_id, (), text, NOW_MS)
        selected = {c.row.user_disc_id for c in load_candidate_rows(query)}
        transaction.set_rollback(True)
    expected = {
        row.user_disc_id
        for row, (_nick, kind) in zip(rows, users, strict=True)
        if kind != "elsewhere" and (needle := normalize_alias(row.user_nickname or "")) and needle in haystack
    }
    assert selected == expected, (users, text)
