"""The batched reads of a hydration run (H-04..H-06, H-09, H-14, H-15, H-21): one call per kind of
row for all participants, plus the targeted Discord reads per participant. Fail closed (H-06): an
unreadable blacklist entry counts as blacklisted, an unreadable privacy level as FULL, for that
participant only; every other read degrades to "no data"."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from chatcontext.core.participants.model import ParticipantKey, ParticipantSeed
from chatcontext.core.participants.naming import NamingPreference
from chatcontext.core.types import Author, MemberInfo, MemoryRow, PrivacyLevel, ReminderRow, ServerMemoryRow, UserRow
from chatcontext.participants.hydration.calls import fail_closed_read
from chatcontext.participants.hydration.fields import memory_hidden_reason
from chatcontext.participants.hydration.state import HydrationRun, UserState
from chatcontext.participants.loaders import MemoryQuery, ReminderQuery


def _load_member(run: HydrationRun, disc_id: str) -> MemberInfo | None:
    return run.calls.guarded("member_reads", 1, lambda: run.deps.load_member(disc_id), None)


def _load_fallback(run: HydrationRun, disc_id: str) -> Author | None:
    return run.calls.guarded("fallback_user_reads", 1, lambda: run.deps.load_fallback_user(disc_id), None)


def load_users(run: HydrationRun, seeds: Sequence[ParticipantSeed]) -> dict[ParticipantKey, UserState]:
    """H-04/H-05/H-06 for every `discord_user` seed at once."""
    ids = [s.key.id for s in seeds]
    triggerer = run.snapshot.triggerer_id
    known = run.snapshot.turn_reads
    rows: dict[str, UserRow] = {}
    for disc_id in ids:
        preloaded = run.prepared.referenced_user_rows.get(disc_id)
        if isinstance(preloaded, UserRow):
            rows[disc_id] = preloaded
        elif disc_id == triggerer and run.snapshot.triggerer_row is not None:
            rows[disc_id] = run.snapshot.triggerer_row
        elif disc_id in known.rows:
            rows[disc_id] = known.rows[disc_id]
    missing = [i for i in ids if i not in rows and i not in known.read_ids]
    if missing:
        rows.update(
            run.calls.guarded(
                "user_row_loads", len(missing), lambda: run.deps.load_user_rows(missing), dict[str, UserRow]()
            )
        )

    members: dict[str, MemberInfo | None] = {}
    for disc_id in ids:
        if disc_id == triggerer and run.snapshot.preloaded_member is not None:
            members[disc_id] = run.snapshot.preloaded_member  # H-05: reused, no read
        else:
            members[disc_id] = _load_member(run, disc_id)

    referenced = set(run.prepared.referenced_user_ids)
    to_register = [
        member
        for disc_id in ids
        if disc_id not in rows and disc_id not in referenced and (member := members[disc_id]) is not None
    ]
    if to_register:
        locale = run.server.preferred_locale or "en-US"
        register = lambda: run.deps.register_users(to_register, locale)  # noqa: E731
        rows.update(run.calls.guarded("registrations", len(to_register), register, dict[str, UserRow]()))

    users: dict[ParticipantKey, UserState] = {}
    for seed in seeds:
        disc_id = seed.key.id
        row = rows.get(disc_id)
        if row is None:
            continue  # H-04: no row → no profile
        member = members[disc_id]
        fallback = _load_fallback(run, disc_id) if member is None else None
        users[seed.key] = UserState(
            seed=seed,
            disc_id=disc_id,
            row=row,
            member=member,
            fallback=fallback,
            is_triggerer=disc_id == triggerer,
            is_impersonated=run.scope.is_user_impersonation and disc_id == run.scope.impersonated_user_id,
        )
    _load_privacy_and_blacklist(run, list(users.values()))
    return users


def _load_privacy_and_blacklist(run: HydrationRun, users: list[UserState]) -> None:
    known = run.snapshot.turn_reads
    others = [u.disc_id for u in users if not u.is_triggerer and u.disc_id not in known.read_ids]
    levels, privacy_failed = fail_closed_read(run.calls, "privacy_reads", others, run.deps.load_privacy_levels)
    listed, blacklist_failed = fail_closed_read(
        run.calls,
        "blacklist_reads",
        others,
        lambda ids: run.deps.load_blacklisted(run.server.server_id, ids),
    )
    for user in users:
        if user.is_triggerer:
            # H-05: the snapshot answers without reads.
            user.privacy = int(run.snapshot.triggerer_privacy_level)
            user.blacklisted = run.snapshot.is_triggerer_blacklisted
            continue
        # A row and blacklist entry the turn read already answer without reads (its privacy level is
        # the row's); P-01: no row reads as MINIMAL.
        already_read = user.disc_id in known.read_ids
        level = user.row.privacy_level if already_read else levels.get(user.disc_id, PrivacyLevel.MINIMAL)
        is_listed = user.disc_id in known.blacklisted if already_read else bool(listed.get(user.disc_id, False))
        valid = isinstance(level, int) and level in tuple(PrivacyLevel)
        user.privacy = PrivacyLevel.FULL if user.disc_id in privacy_failed or not valid else int(level)
        user.blacklisted = user.disc_id in blacklist_failed or is_listed


def load_naming_preferences(run: HydrationRun, users: Iterable[UserState]) -> dict[tuple[int, int], NamingPreference]:
    known = run.snapshot.turn_reads
    pairs = [(u.row.user_id, run.lineage) for u in users if u.saved_name_use]
    if not pairs or not run.lineage:
        return {}
    found = {pair: known.preferences[pair] for pair in pairs if pair in known.preferences}
    unread = [pair for pair in pairs if pair not in known.preference_pairs]
    if unread:
        read = lambda: run.deps.load_naming_preferences(unread)  # noqa: E731
        none: dict[tuple[int, int], NamingPreference] = {}
        found.update(run.calls.guarded("naming_preference_reads", len(unread), read, none))
    return found


def load_memories(
    run: HydrationRun, users: Iterable[UserState]
) -> tuple[dict[int, list[MemoryRow]], list[ServerMemoryRow] | None]:
    """H-14 step 1, and in the same read the lineage's server memories for the builder (None when
    they were not read: no memory was wanted, the server has no id, or the read failed)."""
    wanted = [u.row.user_id for u in users if memory_hidden_reason(u, run.scope, run.personalization) is None]
    if not wanted:
        return {}, None
    query = MemoryQuery(tuple(wanted), run.lineage, run.server.server_id)
    loaded = run.calls.guarded("personal_memory_reads", len(wanted), lambda: run.deps.load_memories(query), None)
    if loaded is None:
        return {}, None
    allowed_lineages = {run.lineage, 0}
    allowed_users = set(wanted)
    # Defence in depth: whatever the loader returned, another lineage or user never passes.
    personal = {
        user_id: sorted(
            (m for m in rows if m.persona_lineage_id in allowed_lineages and m.user_id == user_id),
            key=lambda m: (m.created_at_ms, m.personal_memory_id),
            reverse=True,
        )
        for user_id, rows in loaded.personal.items()
        if user_id in allowed_users
    }
    server = loaded.server
    return personal, None if server is None else [m for m in server if m.persona_lineage_id in allowed_lineages]


def _self_tasks_wanted(run: HydrationRun) -> bool:
    """H-21: not on impersonation turns, and only with a bot id and a persona id."""
    scope = run.scope
    return not scope.is_user_impersonation and run.bot_user_id is not None and scope.persona_id is not None


def load_reminders(
    run: HydrationRun, users: Iterable[UserState]
) -> tuple[dict[str, list[ReminderRow]], list[ReminderRow]]:
    """H-15 and H-21 in one read, each re-checked here against its rule."""
    human_ids = tuple(u.disc_id for u in users)
    bot_id = run.bot_user_id if _self_tasks_wanted(run) else None
    persona_id = run.scope.persona_id
    if persona_id is None or not (human_ids or bot_id):
        return {}, []  # [DES] H-15: without a persona id no reminder is shown
    query = ReminderQuery(
        server_id=run.server.server_id,
        human_ids=human_ids,
        persona_id=persona_id,
        include_unassigned=run.scope.is_main_persona,
        bot_user_id=bot_id,
        now_ms=run.now_ms,
    )
    count = len(human_ids) + (1 if bot_id else 0)
    rows = run.calls.guarded("reminder_reads", count, lambda: run.deps.load_reminders(query), None, failures=1)
    if rows is None:
        return {}, []
    wanted_humans = set(human_ids)
    human: dict[str, list[ReminderRow]] = {}
    tasks: list[ReminderRow] = []
    for row in sorted(rows, key=lambda r: (r.reminder_time_ms, r.reminder_id or 0)):
        if row.reminder_time_ms <= run.now_ms:
            continue
        if bot_id is not None and row.user_discord_id == bot_id:
            if row.self_reminder and row.persona_id == persona_id:
                tasks.append(row)
        elif row.user_discord_id in wanted_humans and (
            row.persona_id == persona_id or (row.persona_id is None and run.scope.is_main_persona)
        ):
            human.setdefault(row.user_discord_id, []).append(row)
    return human, tasks
