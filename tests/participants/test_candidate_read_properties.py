"""D-16 property: the candidate read's SQL selects exactly the users whose normalized saved nickname
(D-05, Python's lower-casing) occurs in the normalized history text, on SQLite and PostgreSQL.

The SQL side finds nicknames by an indexed key (the first ``NICKNAME_KEY_LENGTH`` characters of ``LOWER(TRIM(..))``),
lower-cases with the database's LOWER and gives the rows it cannot decide the key ``''``; this checks
that nothing the Python definition accepts is lost on the way, for nicknames and texts drawn from
characters where the two disagree (non-ASCII case pairs, dotted capital I, final sigma, non-space
whitespace, leading `@`), and that the read is served by the key index migration 0016 builds.
"""

from __future__ import annotations

import re

import pytest
from django.db import connection, transaction
from hypothesis import given
from hypothesis import strategies as st

from chatcontext.participants.candidates import (
    NICKNAME_KEY_LENGTH,
    CandidateQuery,
    history_keys,
    load_candidate_rows,
    nickname_branch,
    normalize_history_text,
)
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


@given(st.text(_ALPHABET, max_size=30))
def test_d16_history_keys_are_the_keys_of_every_substring(text: str) -> None:
    """A nickname written anywhere in the history has one of its keys; ``''`` is the key of the
    nicknames SQL cannot normalize, always probed."""
    haystack = normalize_history_text(text)
    substrings = {haystack[i:j] for i in range(len(haystack)) for j in range(i + 1, len(haystack) + 1)}
    expected = {s[:NICKNAME_KEY_LENGTH] for s in substrings} | ({""} if haystack else set())
    assert set(history_keys(haystack)) == expected


@pytest.mark.django_db
def test_d16_nickname_branch_is_served_by_the_key_index() -> None:
    """The query writes the key expression the migration indexed; if they drift apart the read still
    answers right but visits every saved nickname again (issue 17), so the plan is checked."""
    branch, params = nickname_branch("ask kai about it", connection.vendor, "n.user_id")
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "sqlite":
            cursor.execute("EXPLAIN QUERY PLAN " + branch, params)
        else:
            # An empty test table is cheapest to scan whole; the question is whether the index can serve.
            cursor.execute("SET LOCAL enable_seqscan = off")
            cursor.execute("EXPLAIN " + branch, params)
        plan = "\n".join(str(row[-1]) for row in cursor.fetchall())
    # The key must be the index condition: scanning the whole partial index also names it.
    if connection.vendor == "sqlite":
        assert "SEARCH n USING INDEX users_nickname_key_idx (<expr>=?)" in plan, plan
    else:
        assert re.search(r"users_nickname_key_idx[^\n]*\n\s*Index Cond: \(+CASE WHEN", plan), plan
