"""Who makes a write: every action takes an ``Actor``, and the audit trail records it.

The actor is explicit (an argument of each action), not guessed from a request: the API, a slash
command, a persona's tool call and a task have no admin session, and their writes must still say
who made them. While an action runs, its actor is the current one (``recording``), and every history
row written meanwhile (``personas.models.history``) gets its account (simple-history's
``history_user``) and its kind and description from it.

A tool call's actor also keeps a trail of the history rows written under it: the turn's prompt record
is stored after its calls, and ``name_prompt_record`` then names it in those rows.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import models, transaction
from django.dispatch import receiver
from simple_history.signals import post_create_historical_record, pre_create_historical_record

from personas.models import ActorKind


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    # An admin or API session's account; for a tool call, the staff account that posted its trigger.
    account_id: int | None = None
    token_id: int | None = None  # an API token
    discord_id: str | None = None  # the member who ran a slash command, or whose turn made a tool call
    prompt_record_id: int | None = None  # the turn of a tool call
    task: str = ""  # what a system write is (a retention run, the demo loader)
    # The history rows written under a tool call's actor, as (history model, history id).
    trail: list[tuple[type[models.Model], int]] | None = field(default=None, compare=False, hash=False, repr=False)

    @classmethod
    def admin(cls, account: Any) -> Actor:
        return cls(ActorKind.ADMIN, account_id=account.pk)

    @classmethod
    def api(cls, *, account: Any = None, token: Any = None) -> Actor:
        return cls(
            ActorKind.API,
            account_id=account.pk if account is not None else None,
            token_id=token.pk if token is not None else None,
        )

    @classmethod
    def slash_command(cls, discord_id: str) -> Actor:
        return cls(ActorKind.SLASH_COMMAND, discord_id=str(discord_id))

    @classmethod
    def tool_call(
        cls, *, prompt_record_id: int | None, discord_id: str | None = None, account_id: int | None = None
    ) -> Actor:
        """``account_id``: the staff account that posted the trigger as a member (the playground)."""
        return cls(
            ActorKind.TOOL_CALL,
            prompt_record_id=prompt_record_id,
            discord_id=discord_id,
            account_id=account_id,
            trail=[],
        )

    @classmethod
    def system(cls, task: str) -> Actor:
        return cls(ActorKind.SYSTEM, task=task)

    def describe(self) -> str:
        """The history's ``actor`` column: ids and kinds only, never a name or any text of a user."""
        if self.kind == ActorKind.API and self.token_id is not None:
            return f"API token #{self.token_id}"
        if self.kind == ActorKind.SLASH_COMMAND:
            return f"slash command by Discord user {self.discord_id}"
        if self.kind == ActorKind.TOOL_CALL:
            turn = f"prompt record #{self.prompt_record_id}" if self.prompt_record_id is not None else "a turn"
            who = [f"Discord user {self.discord_id}"] if self.discord_id else []
            if self.account_id is not None:
                who.append(f"posted by account #{self.account_id}")
            return f"tool call in {turn}" + (f" ({', '.join(who)})" if who else "")
        if self.kind == ActorKind.SYSTEM:
            return f"system: {self.task}"
        return f"{self.kind.label} account #{self.account_id}"


_current: ContextVar[Actor | None] = ContextVar("personas_actor", default=None)


@contextmanager
def recording(actor: Actor) -> Iterator[Actor]:
    """Make ``actor`` the one every history row written inside the block is attributed to."""
    token = _current.set(actor)
    try:
        yield actor
    finally:
        _current.reset(token)


def current_actor() -> Actor | None:
    return _current.get()


@receiver(pre_create_historical_record)
def _attribute(sender: Any, history_instance: Any, **kwargs: Any) -> None:
    actor = _current.get()
    if actor is None:
        return
    history_instance.history_user_id = actor.account_id
    history_instance.actor_kind = actor.kind
    history_instance.actor = actor.describe()


@receiver(post_create_historical_record)
def _keep_trail(sender: Any, history_instance: Any, **kwargs: Any) -> None:
    actor = _current.get()
    if actor is not None and actor.trail is not None:
        actor.trail.append((type(history_instance), history_instance.pk))


def name_prompt_record(actor: Actor, prompt_record_id: int) -> int:
    """Name the turn's prompt record in the history rows its tool calls wrote (the record is stored
    after them); returns how many rows were named."""
    described = replace(actor, prompt_record_id=prompt_record_id).describe()
    by_model: dict[type[models.Model], list[int]] = {}
    for model, pk in actor.trail or ():
        by_model.setdefault(model, []).append(pk)
    named = 0
    with transaction.atomic():
        for model, pks in by_model.items():
            named += model._default_manager.filter(pk__in=pks).update(actor=described)
    return named
