"""User rows and blacklist entries kept between persona turns and between turns, checked against
the personalization versions (issue 17's decision on C-08).

A user row (names, privacy level, profile) and a server's blacklist entries are the same for every
persona of the server, so the persona turns of a locked turn, and later turns, need not read them
again. A process keeps what turns read, stamped with the versions read *before* the rows
(``personas.models.versions``: one counter for all user rows, one per server for its blacklist).
Every write to those rows bumps its counter in the write's own transaction
(``personas.actions.versions``), so a turn that reads the versions first and finds them unchanged
knows nothing it keeps is older than a change committed before the turn started: one statement
instead of the rows.

Kept only when read outside a transaction: inside one, a row may be that transaction's own
uncommitted write (a registration), which a rollback would take back while the process kept it.
Never kept: naming preferences, memories, reminders, blocks — per-persona reads, read every turn.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.conf import settings

from chatcontext import repository
from chatcontext.core.types import UserRow
from chatcontext.repository import PersonalizationVersions, UserReads


@dataclass
class _Blacklist:
    version: int
    listed: dict[str, bool] = field(default_factory=dict)


class PersonalizationCache:
    """One process's kept rows: user rows at one user-rows version (``None``: read, no row) and,
    per server, which ids are blacklisted at that server's version. Bounded: at most ``max_users``
    user rows and as many blacklist answers per server, for at most ``max_servers`` servers (the
    least recently used go); past the user-row bound everything goes at once, to be re-read in one
    statement. Thread-safe: the bot's database threads and the web process's share it."""

    def __init__(self, *, max_users: int, max_servers: int) -> None:
        self.max_users = max_users
        self.max_servers = max_servers
        self._lock = threading.Lock()
        self._users_version: int | None = None
        self._users: dict[str, UserRow | None] = {}
        self._blacklists: OrderedDict[int, _Blacklist] = OrderedDict()

    def clear(self) -> None:
        with self._lock:
            self._forget(None)

    def _forget(self, users_version: int | None) -> None:
        # Blacklist answers go with the user rows: a lookup needs both, and they would outgrow the bound.
        self._users_version = users_version
        self._users.clear()
        self._blacklists.clear()

    def lookup(
        self, server_id: int, versions: PersonalizationVersions, disc_ids: Iterable[str]
    ) -> tuple[dict[str, UserRow | None], set[str]]:
        """The kept rows of ``disc_ids`` at ``versions`` whose user row *and* blacklist entry are
        both kept, and the blacklisted ids among them."""
        with self._lock:
            blacklist = self._blacklists.get(server_id)
            if self._users_version != versions.user_rows or blacklist is None or blacklist.version != versions.server:
                return {}, set()
            self._blacklists.move_to_end(server_id)
            found = {i: self._users[i] for i in disc_ids if i in self._users and i in blacklist.listed}
            return found, {i for i in found if blacklist.listed[i]}

    def keep(self, server_id: int, versions: PersonalizationVersions, disc_ids: Iterable[str], read: UserReads) -> None:
        """Keep what one read of ``disc_ids`` found, under the versions read before it."""
        ids = list(disc_ids)
        if len(ids) > self.max_users:
            return
        with self._lock:
            if self._users_version != versions.user_rows:
                self._forget(versions.user_rows)
            blacklist = self._blacklists.get(server_id)
            new = [i for i in ids if i not in self._users or blacklist is None or i not in blacklist.listed]
            if len(self._users) + len(new) > self.max_users or (
                blacklist is not None and len(blacklist.listed) + len(new) > self.max_users
            ):
                self._forget(versions.user_rows)
                blacklist = None
            if blacklist is None or blacklist.version != versions.server:
                blacklist = self._blacklists[server_id] = _Blacklist(versions.server)
            self._blacklists.move_to_end(server_id)
            while len(self._blacklists) > self.max_servers:
                self._blacklists.popitem(last=False)
            for disc_id in ids:
                self._users[disc_id] = read.rows.get(disc_id)
                blacklist.listed[disc_id] = disc_id in read.blacklisted


class UserReadSource:
    """A turn's reads of user rows and blacklist entries (with naming preferences when asked):
    what the turn has read already, then ``cache`` when there is one and the turn is on a server,
    then the database. The versions are read once, at the turn's first read.

    What the turn has read it does not read again: a second read in the same turn would find the
    same rows or newer ones, and the first already came after the turn started. With naming
    preferences asked for and every row known, only the preferences are read (the rows are most
    of a read's width)."""

    def __init__(self, server_id: int | None, cache: PersonalizationCache | None = None) -> None:
        self.server_id = server_id
        self.cache = cache
        self._versions: PersonalizationVersions | None = None
        self._rows: dict[str, UserRow | None] = {}
        self._listed: dict[str, bool] = {}

    def load(self, disc_ids: Iterable[str], *, naming_lineages: Iterable[int] = ()) -> UserReads:
        ids = sorted(set(disc_ids))
        lineages = sorted(set(naming_lineages))
        if self.server_id is None or not ids:
            return repository.load_user_rows_and_blacklist(self.server_id, ids, naming_lineages=lineages)
        server_id = self.server_id
        missing = [i for i in ids if i not in self._listed]
        if missing and self.cache is not None:
            if self._versions is None:
                self._versions = repository.load_personalization_versions(server_id)
            kept, listed = self.cache.lookup(server_id, self._versions, missing)
            self._remember(kept, listed)
            missing = [i for i in missing if i not in kept]
        if missing:
            # With naming preferences wanted, the known ids are read again with the missing ones: one
            # statement either way.
            asked = ids if lineages else missing
            read = repository.load_user_rows_and_blacklist(server_id, asked, naming_lineages=lineages)
            self.remember(asked, read)
            if lineages:
                return read
        rows = {i: row for i in ids if (row := self._rows[i]) is not None}
        preferences = repository.load_naming_preferences([r.user_id for r in rows.values()], lineages)
        return UserReads(rows, {i for i in ids if self._listed[i]}, preferences)

    def remember(self, disc_ids: Iterable[str], read: UserReads) -> None:
        """What one read of ``disc_ids`` made after this turn started found (a row, or none, and
        the blacklist entry of each), for the rest of the turn and, when the versions were read
        before it, for the process's cache."""
        ids = list(disc_ids)
        self._remember({i: read.rows.get(i) for i in ids}, read.blacklisted)
        if self.cache is not None and self._versions is not None and repository.reads_are_committed():
            assert self.server_id is not None
            self.cache.keep(self.server_id, self._versions, ids, read)

    def _remember(self, rows: dict[str, UserRow | None], listed: set[str]) -> None:
        self._rows.update(rows)
        self._listed.update((i, i in listed) for i in rows)


# Blacklists of this many servers are kept at most (an entry is a few bytes per id).
_MAX_SERVERS = 2048
_process_cache: PersonalizationCache | None = None
_process_lock = threading.Lock()


def process_cache() -> PersonalizationCache | None:
    """This process's cache, sized by ``PERSONALIZATION_CACHE_USERS`` (``None`` when 0)."""
    global _process_cache
    size = int(settings.TOMORI["PERSONALIZATION_CACHE_USERS"])
    if size <= 0:
        return None
    with _process_lock:
        if _process_cache is None or _process_cache.max_users != size:
            _process_cache = PersonalizationCache(max_users=size, max_servers=_MAX_SERVERS)
        return _process_cache
