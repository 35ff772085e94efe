"""Forget-me: everything the platform keeps about one Discord user, deleted in one transaction —
personas' rows (``personas.actions.forget_user_rows``), the prompt records about them and the voice
transcripts of their messages (``chatcontext.records.forgetting``), and their messages in the
platform's own channels (the ``user_forgotten`` receivers)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

from django.db import transaction
from django.dispatch import Signal

from chatcontext.records.forgetting import forget_records_about
from personas import actions

# Sent inside ``forget_user``'s transaction with ``user_disc_id``: an app above this one that keeps
# people's messages in tables of its own (the playground's channels, bot.playground) deletes them
# there and returns how many messages it removed.
user_forgotten = Signal()


@dataclass(frozen=True)
class ForgetResult(actions.ForgottenRows):
    """How many rows ``forget_user`` removed or cleared, by kind (counts only, no ids): personas' rows
    (``ForgottenRows``) and what this layer removes besides."""

    voice_transcripts: int = 0
    prompt_records: int = 0
    channel_messages: int = 0

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def total(self) -> int:
        return sum(v for v in asdict(self).values() if isinstance(v, int) and not isinstance(v, bool))


def forget_user(user_disc_id: str, *, actor: actions.Actor) -> ForgetResult:
    """Delete everything the platform keeps about one Discord user, in one transaction.

    Removed: what ``personas.actions.forget_user_rows`` removes (memories, the conversation summaries
    and short-term memories drawn from their messages, naming preferences, reminders, member
    snapshots, activity counters, profile text and their audit trail), every prompt
    record about them (``chatcontext.records.forgetting.records_about``: their words, profile or
    memories are in its prompt or its snapshot, ``chatcontext.records.store.subject_user_ids``), the
    voice transcripts of messages those records show they authored, and their messages in the
    platform's own channels (the ``user_forgotten`` receivers).

    Records are deleted whole, not redacted: a record is the exact prompt of a turn and the snapshot
    that replays it, and one with the user cut out would be neither. Records that hold only their
    id (a reactor, a member row without a server nickname, a privacy level) are not about them and
    are left untouched, so forgetting someone who never spoke costs the server none of its history.
    Kept on purpose: what ``forget_user_rows`` keeps (the user row with its privacy level, moderators'
    blacklist and block entries).
    """
    user_disc_id = str(user_disc_id).strip()
    with actions.recording(actor), transaction.atomic():
        records = forget_records_about(user_disc_id)
        # A receiver's answer is whatever it returns (django-stubs says str | None): counts are ints.
        answers: Sequence[tuple[object, object]] = user_forgotten.send(sender=ForgetResult, user_disc_id=user_disc_id)
        # Last: personas' part ends holding the user-row counter's lock, which every user-row write
        # shares, so it is held only from there to the commit.
        rows = actions.forget_user_rows(user_disc_id, actor=actor)
    return ForgetResult(
        **asdict(rows),
        prompt_records=records.prompt_records,
        voice_transcripts=records.voice_transcripts,
        channel_messages=sum(n for _, n in answers if isinstance(n, int)),
    )


def preview_forget_user(user_disc_id: str, *, actor: actions.Actor) -> ForgetResult:
    """What ``forget_user`` would delete now, with nothing deleted: it runs and its transaction is
    rolled back, so the preview counts exactly what forget-me removes (there is one definition of
    what goes). Uploaded files and cached transcripts are let go only on commit, so they stay too."""
    with transaction.atomic():
        result = forget_user(user_disc_id, actor=actor)
        transaction.set_rollback(True)
    return result
