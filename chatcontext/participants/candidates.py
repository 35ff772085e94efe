"""The candidate-row read of shared reference discovery (participants.md D-16) and the eligibility
policy v1 (D-17).

``load_candidate_rows`` is the one repository read of discovery: a single SQL query whatever the
number of candidate ids, returning ``UserRow`` value objects plus their evidence flags. Discovery
takes any ``CandidateSource`` so tests can count reads or make them fail (C-06).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chatcontext import sql
from chatcontext.core.participants.model import normalize_alias
from chatcontext.core.types import PrivacyLevel, UserRow
from chatcontext.repository import USER_ROW_COLUMNS, ms_to_datetime, user_row_from_values
from personas import models as m

ACTIVITY_METRICS = ("message_sent", "command_used")

# Every character Python's ``str.split()``/``\s`` treats as whitespace except the plain space: a saved
# nickname containing one normalizes differently from its SQL ``LOWER(TRIM(..))``, so such rows are
# pre-selected and decided in Python.
_NON_SPACE_WHITESPACE = "\t\n\x0b\x0c\r\x1c-\x1f\x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000"
# Capitals whose Python lower-casing is not the one-to-one mapping SQL LOWER applies: `İ` becomes two
# code points (`i` and a combining dot), `Σ` becomes `ς` at the end of a word. Compared over every code
# point against PostgreSQL 15's LOWER (C.UTF-8); tests/chatcontext/participants/test_candidate_read_properties.py.
_LOWER_DIFFERS = "\u0130\u03a3"


@dataclass(frozen=True)
class CandidateQuery:
    """D-16 inputs. ``history_text`` is the D-10 text (raw, not normalized)."""

    server_id: int | None
    candidate_ids: tuple[str, ...]
    history_text: str
    now_ms: int


@dataclass(frozen=True)
class CandidateEvidence:
    """D-16 evidence flags of one row."""

    has_server_activity: bool = False
    has_personal_memories: bool = False
    has_pending_tasks: bool = False

    @property
    def any(self) -> bool:
        return self.has_server_activity or self.has_personal_memories or self.has_pending_tasks


@dataclass(frozen=True)
class CandidateRow:
    """A candidate's user row, its evidence, and whether the query's server blacklists it (which
    discovery does not ask, but the turn's later reads of the same row do)."""

    row: UserRow
    evidence: CandidateEvidence
    blacklisted: bool = False


CandidateSource = Callable[[CandidateQuery], list[CandidateRow]]


def normalize_history_text(text: str) -> str:
    """D-16: lower-case, whitespace runs collapsed (the saved-nickname substring haystack)."""
    return " ".join(text.lower().split())


def _nickname_hit(nickname: str | None, haystack: str) -> bool:
    needle = normalize_alias(nickname or "")
    return bool(needle) and needle in haystack


# The indexed key of a saved nickname is the first ``NICKNAME_KEY_LENGTH`` characters of its
# normalization; personas/migrations/0016 builds the index on exactly ``nickname_key_sql``.
NICKNAME_KEY_LENGTH = 3


def nickname_key_sql(vendor: str, nick: str) -> str:
    """D-16: the SQL key of the saved nickname column ``nick``: the first three characters of
    ``LOWER(TRIM(nick))`` when that equals the D-05 normalization, else ``''``.

    They differ when the nickname holds an `@`, a whitespace run, non-space whitespace or a capital
    Python lower-cases differently (on SQLite, whose LOWER folds only ASCII, any non-ASCII
    character); those rows share the key ``''``, which every history's key set holds, and are decided
    in Python. The patterns are literals, not parameters, so the expression is the index's.
    """
    if vendor == "sqlite":
        # GLOB classes rather than REGEXP: SQLite's REGEXP is a Python callback, not allowed in an index.
        uncertain = (
            f"{nick} GLOB '*[@{_NON_SPACE_WHITESPACE}{_LOWER_DIFFERS}]*' OR {nick} GLOB '*[^\x01-\x7f]*' "
            f"OR INSTR({nick}, '  ') > 0"
        )
        prefix = f"SUBSTR(LOWER(TRIM({nick})), 1, {NICKNAME_KEY_LENGTH})"
    else:
        uncertain = f"{nick} ~ '[@{_NON_SPACE_WHITESPACE}{_LOWER_DIFFERS}]' OR STRPOS({nick}, '  ') > 0"
        prefix = f"LEFT(LOWER(TRIM({nick})), {NICKNAME_KEY_LENGTH})"
        # Byte order: a read probes the index with thousands of keys, and the database's own
        # collation compares strings through the locale (SQLite's default order is already bytes).
        return f"(CASE WHEN {uncertain} THEN '' ELSE {prefix} END) COLLATE \"C\""
    return f"(CASE WHEN {uncertain} THEN '' ELSE {prefix} END)"


def nickname_branch(haystack: str, vendor: str, columns: str, server_id: int) -> tuple[str, list[object]]:
    """The nickname select of D-16 over the users table as ``n``: ``columns`` of the users known to the
    server (a member row, or any activity counted in it) whose exact SQL normalization of the saved
    nickname occurs in ``haystack``, or whose key is ``''`` (a superset, decided in Python).

    Bounded by the server [DEC, issue 29]: it starts from the server's members and counted authors
    and looks each one's row up by key, so its cost follows the server, not the platform (every
    user of every server with a name-like nickname took 70-77 ms at 100,000 users and grew with them).
    """
    u, s, sm = sql.names(m.DiscordUser), sql.names(m.StatCounter), sql.names(m.ServerMember)
    nick = f"n.{u['user_nickname']}"
    key = nickname_key_sql(vendor, nick)
    position = "INSTR" if vendor == "sqlite" else "STRPOS"
    known = (
        f"SELECT s.{s['user']} FROM {s.table} s WHERE s.{s['server']} = %s UNION "
        f"SELECT k.{u['user_id']} FROM {sm.table} sm JOIN {u.table} k "
        f"ON k.{u['user_disc_id']} = sm.{sm['user_disc_id']} WHERE sm.{sm['server']} = %s"
    )
    clause = f"{nick} > '' AND ({key} = '' OR {position}(%s, LOWER(TRIM({nick}))) > 0)"
    return (
        f"SELECT {columns} FROM {u.table} n WHERE n.{u['user_id']} IN ({known}) AND {clause}",
        [server_id, server_id, haystack],
    )


def nickname_selected_ids(server_id: int, history_text: str) -> list[str]:
    """D-16's saved-nickname branch alone (``nickname_branch``, decided in Python as in
    ``load_candidate_rows``): the ids of the users known to the server whose saved nickname occurs in
    the D-10 ``history_text``. The turn snapshot keeps them (turn-snapshot.md §4, ``known_users``):
    the branch starts from the server's member rows, and the transport may never have fetched them."""
    haystack = normalize_history_text(history_text)
    if not haystack:
        return []
    u = sql.names(m.DiscordUser)
    columns = u.columns("user_disc_id", "user_nickname", alias="n")
    branch, params = nickname_branch(haystack, sql.vendor(m.DiscordUser), columns, server_id)
    rows = sql.fetch(m.DiscordUser, branch, params)
    return sorted(str(uid) for uid, nickname in rows if _nickname_hit(nickname, haystack))


def load_candidate_rows(query: CandidateQuery) -> list[CandidateRow]:
    """D-16: users whose id is a candidate id, OR with message/command activity in this server, OR
    known to this server with a normalized saved nickname occurring in the normalized history text
    (``nickname_branch``) — one SQL query, each row
    annotated with its evidence (memories in any lineage; a reminder targeting or created by the user
    that is still due) and its blacklist entry in this server.

    The three conditions are a UNION of index-backed selects of whole rows rather than one OR over the
    users table (or a join back to it): the users table holds every server's users, and the OR made
    every turn scan all of them (146 ms per turn at 100,000 users on PostgreSQL, issue 9).
    """
    haystack = normalize_history_text(query.history_text)
    u, s, b = sql.names(m.DiscordUser), sql.names(m.StatCounter), sql.names(m.PersonalizationBlacklist)
    p, r = sql.names(m.PersonalMemory), sql.names(m.Reminder)
    user_pk, user_disc_id = f"u.{u['user_id']}", f"u.{u['user_disc_id']}"
    active = (
        f"s.{s['server']} = %s AND s.{s['metric']} IN ({sql.placeholders(ACTIVITY_METRICS)}) AND s.{s['count']} > 0"
    )
    activity, activity_params, listed, listed_params = "0", [], "0", []
    if query.server_id is not None:
        activity = f"EXISTS (SELECT 1 FROM {s.table} s WHERE s.{s['user']} = {user_pk} AND {active})"
        activity_params = [query.server_id, *ACTIVITY_METRICS]
        listed = (
            f"EXISTS (SELECT 1 FROM {b.table} b WHERE b.{b['server']} = %s AND b.{b['user_disc_id']} = {user_disc_id})"
        )
        listed_params = [query.server_id]
    memories = f"EXISTS (SELECT 1 FROM {p.table} p WHERE p.{p['user']} = {user_pk})"
    # Two EXISTS, not one with an OR, so each can use its index.
    tasks = (
        f"(EXISTS (SELECT 1 FROM {r.table} r WHERE r.{r['user_discord_id']} = {user_disc_id} "
        f"AND r.{r['reminder_time']} > %s) OR EXISTS (SELECT 1 FROM {r.table} r WHERE "
        f"r.{r['created_by_user']} = {user_pk} AND r.{r['reminder_time']} > %s))"
    )
    now = ms_to_datetime(query.now_ms)
    candidate_ids = sorted(set(query.candidate_ids))
    branches: list[str] = []
    branch_params: list[object] = []
    if candidate_ids:
        of_candidates, candidates_param = sql.any_of(m.DiscordUser, f"c.{u['user_disc_id']}", candidate_ids)
        branches.append(f"SELECT {u.columns(*USER_ROW_COLUMNS, alias='c')} FROM {u.table} c WHERE {of_candidates}")
        branch_params.append(candidates_param)
    if query.server_id is not None:
        branches.append(
            f"SELECT {u.columns(*USER_ROW_COLUMNS, alias='a')} FROM {u.table} a "
            f"WHERE a.{u['user_id']} IN (SELECT s.{s['user']} FROM {s.table} s WHERE {active})"
        )
        branch_params += activity_params
    if haystack and query.server_id is not None:
        branch, nickname_params = nickname_branch(
            haystack, sql.vendor(m.DiscordUser), u.columns(*USER_ROW_COLUMNS, alias="n"), query.server_id
        )
        branches.append(branch)
        branch_params += nickname_params
    if not branches:
        return []
    users = sql.fetch(
        m.DiscordUser,
        f"SELECT {u.columns(*USER_ROW_COLUMNS, alias='u')}, {activity}, {memories}, {tasks}, {listed} "
        f"FROM ({' UNION '.join(branches)}) u ORDER BY {user_disc_id}",
        [*activity_params, now, now, *listed_params, *branch_params],
    )
    wanted_ids = set(candidate_ids)
    rows: list[CandidateRow] = []
    for values in users:
        row = user_row_from_values(values)
        activity_flag, memory_flag, task_flag, listed_flag = values[len(USER_ROW_COLUMNS) :]
        if not (row.user_disc_id in wanted_ids or activity_flag or _nickname_hit(row.user_nickname, haystack)):
            continue  # selected only by the SQL superset of the nickname clause
        rows.append(
            CandidateRow(
                row,
                CandidateEvidence(
                    has_server_activity=bool(activity_flag),
                    has_personal_memories=bool(memory_flag),
                    has_pending_tasks=bool(task_flag),
                ),
                bool(listed_flag),
            )
        )
    return rows


def _blank(value: str | None) -> bool:
    return not (value or "").strip()


def is_eligible(candidate: CandidateRow) -> bool:
    """D-17 eligibility policy v1. Registration language and an otherwise default row never qualify."""
    row = candidate.row
    return (
        candidate.evidence.any
        or row.shortterm_cache_crossserver_opt_in
        or any(not _blank(tag) for tag in row.physical_appearance_tags)
        or not _blank(row.nai_char_ref_url)
        or not _blank(row.impersonation_prompt)
        or row.personal_dtm != "follow"
        or row.personal_deliberate_tool_mode != "follow"
        or row.timezone_offset is not None
        or row.privacy_level != PrivacyLevel.MINIMAL
    )
