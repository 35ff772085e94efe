"""Who makes a write: every action takes an ``Actor``, and the audit trail records it.

The actor is explicit (an argument of each action), not guessed from a request: the API, a slash
command, a persona's tool call and a task have no admin session, and their writes must still say
who made them. While an action runs, its actor is the current one (``recording``), and every history
row written meanwhile (``personas.models.history``) gets its account (simple-history's
``history_user``) and its kind and description from it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from django.dispatch import receiver
from simple_history.signals import pre_create_historical_record

from personas.models import ActorKind


@dataclass(frozen=True)
class Actor:
    kind: ActorKind
    account_id: int | None = None  # an admin or API session's account
    token_id: int | None = None  # an API token
    discord_id: str | None = None  # the member who ran a slash command, or whose turn made a tool call
    prompt_record_id: int | None = None  # the turn of a tool call
    task: str = ""  # what a system write is (a retention run, the demo loader)

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
    def tool_call(cls, *, prompt_record_id: int | None, discord_id: str | None = None) -> Actor:
        return cls(ActorKind.TOOL_CALL, prompt_record_id=prompt_record_id, discord_id=discord_id)

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
            return f"tool call in {turn}" + (f" (Discord user {self.discord_id})" if self.discord_id else "")
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
