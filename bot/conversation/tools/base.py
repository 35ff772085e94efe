"""The turn a tool call runs in, what it answers, and how a tool's user argument is resolved.

A tool never trusts the model with an id: a person is named by a handle, a name or the ``ref_N`` of
one of their messages, resolved through the turn's participant target index (participants.md X-06,
X-07) and message id map (BC5-03). A name that matches nobody, or several people, is refused the
way a privacy refusal is: the model is told, nothing is written.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, Protocol, TypeVar

from pydantic import BaseModel, ConfigDict

from bot.conversation.db import Db
from bot.conversation.providers import ToolSpec
from bot.conversation.tools.notices import Notice
from chatcontext.core.participants.target_index import TargetReference, is_snowflake, resolve_user_argument
from chatcontext.core.types import ChatTurnContext
from personas.actions.actor import Actor
from personas.provenance import WrittenRow


class ToolArgs(BaseModel):
    """Arguments of a tool: unknown keys and wrong types are refused, never guessed."""

    model_config = ConfigDict(extra="forbid", strict=True)


class Reactor(Protocol):
    async def react(self, message_id: str, emoji: str) -> None:
        """Add the persona's reaction to a message of the channel; raises ``DeliveryRefused``."""


@dataclass
class ToolTurn:
    """One persona turn as its tools see it."""

    db: Db
    ctx: ChatTurnContext
    reactor: Reactor
    now_ms: int
    references: list[TargetReference] = field(default_factory=list)
    # real message id → author id, for ``ref_N`` arguments
    message_authors: Mapping[str, str] = field(default_factory=dict)
    # The staff account that posted the trigger as a member (the playground); None on Discord.
    account_id: int | None = None
    actor: Actor = field(init=False)

    def __post_init__(self) -> None:
        # Who writes, for the audit trail: one actor for the whole turn, whose trail keeps the history
        # rows its calls write, so they name the turn's prompt record once it is stored after them.
        self.actor = Actor.tool_call(prompt_record_id=None, discord_id=self.triggerer_id, account_id=self.account_id)

    @classmethod
    def of(
        cls, db: Db, ctx: ChatTurnContext, reactor: Reactor, now_ms: int, *, account_id: int | None = None
    ) -> ToolTurn:
        references = ctx.targets.references()
        authors: dict[str, str] = {}
        for entry in ctx.simplified_messages:
            for message_id in (entry.id, *(entry.combined_message_ids or ())):
                authors[message_id] = entry.author_id
        return cls(db, ctx, reactor, now_ms, references, authors, account_id)

    @property
    def persona_id(self) -> int:
        assert self.ctx.current_persona.persona_id is not None  # tools are offered to stored personas only
        return self.ctx.current_persona.persona_id

    @property
    def bot_user_id(self) -> str:
        return self.ctx.turn.bot_user.id

    @property
    def trigger_message_id(self) -> str:
        return self.ctx.turn.incoming.message.id

    @property
    def triggerer_id(self) -> str:
        return self.ctx.turn.incoming.message.author.id

    @property
    def people(self) -> frozenset[str]:
        """The Discord ids of the people of the turn: the only ones whose memories its tools may change."""
        return frozenset(r.target_id for r in self.references)

    def message_id(self, ref: str) -> str | None:
        """The real id of a ``ref_N`` key of this turn, None for anything else."""
        id_map = self.ctx.message_id_map
        if id_map is None or not id_map.is_opaque_key(ref.strip()):
            return None
        return id_map.resolve(ref.strip())

    def label_of(self, target_id: str) -> str:
        return next((r.display_label for r in self.references if r.target_id == target_id), "")


@dataclass(frozen=True)
class ToolOutcome:
    """What the model is told (``result``), whether it was a refusal, the rows written and the
    confirmation to post."""

    result: str
    refused: bool = False
    written: tuple[WrittenRow, ...] = ()
    notice: Notice | None = None
    # Discord ids of people the call was about (the prompt record is then about them: forget-me).
    subjects: tuple[str, ...] = ()


def history_authors(ctx: ChatTurnContext) -> tuple[str, ...]:
    """The people whose messages a turn's history holds (first-seen order): what a note or a summary
    made from it may repeat, so forget-me finds it by them. Entries that stand for no message of
    theirs (a blocked author's notice, a reminder) and the personas' own are not theirs."""
    bot_id = ctx.turn.bot_user.id
    authors = (
        e.author_id
        for e in ctx.simplified_messages
        if e.id.isdigit() and e.author_persona_id is None and e.author_id != bot_id and e.author_id.isdigit()
    )
    return tuple(dict.fromkeys(authors))


def refusal(reason: str) -> ToolOutcome:
    return ToolOutcome(result=f"Refused: {reason}", refused=True)


class Unresolved(Exception):
    """A user argument names nobody, or several people; the message is the refusal."""


def resolve_person(turn: ToolTurn, value: str) -> str:
    """The Discord id a user argument names: the author of ``ref_N``, or the one participant whose
    handle or name it is. Raises ``Unresolved``."""
    text = value.strip()
    message_id = turn.message_id(text)
    if message_id is not None:
        author = turn.message_authors.get(message_id)
        if author is None or not any(r.target_id == author for r in turn.references):
            raise Unresolved(f"{text} is not a message of a person in this conversation.")
        return author
    # Digits are never taken as an id on their own: only an id the index holds resolves.
    resolution = resolve_user_argument(text, turn.references)
    if resolution.status == "ambiguous":
        raise Unresolved(f"'{text}' matches several people ({', '.join(resolution.candidates)}); use a ref_N.")
    if resolution.status != "resolved" or resolution.target_id is None:
        raise Unresolved(f"'{text}' matches nobody in this conversation.")
    if resolution.target_id == turn.bot_user_id or not is_snowflake(resolution.target_id):
        raise Unresolved(f"'{text}' is not a person this tool can write about.")
    return resolution.target_id


A = TypeVar("A", bound=ToolArgs)


@dataclass(frozen=True)
class Tool(Generic[A]):
    """One tool: its name, description, argument model, family (for gating) and adapter."""

    name: str
    description: str
    args: type[A]
    family: str  # memory | reminder | react
    run: Callable[[ToolTurn, A], Awaitable[ToolOutcome]]

    def spec(self) -> ToolSpec:
        schema: dict[str, Any] = self.args.model_json_schema()
        schema.pop("title", None)
        return ToolSpec(name=self.name, description=self.description, parameters=schema)
