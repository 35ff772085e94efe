"""What a playground slash command receives and answers (``bot.playground.commands`` parses and
dispatches; each family of commands has its own module of handlers)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from bot.conversation.jobs import TurnJob, TurnResult
from bot.conversation.runner import TurnRunner
from bot.playground.models import PlaygroundChannel, PlaygroundMessage
from chatcontext.models import PromptRecord

# Runs a command's turn on the channel's planner lock, as any turn of the channel (``bot.playground.service``
# owns the planner, which imports the commands); its results, none when the channel's queue was full.
TurnSubmitter = Callable[[TurnJob[PlaygroundMessage]], Awaitable[list[TurnResult[PlaygroundMessage]]]]


@dataclass(frozen=True)
class CommandCall:
    """One typed command: where, as which member (the identity the moderator speaks as), the text
    after the command's name, the runner of the channel's turns, the staff account posting, and
    how a command's own turns (``/impersonate``, ``/scene``) run."""

    channel: PlaygroundChannel
    member_disc_id: str
    arguments: str
    runner: TurnRunner
    posted_by: int | None = None
    run_turn: TurnSubmitter = field(kw_only=True)


@dataclass(frozen=True)
class CommandAnswer:
    """What Discord would show only to the member (an ephemeral reply), and the prompt records of the
    calls the command made."""

    text: str
    refused: bool = False
    records: list[PromptRecord] = field(default_factory=list)


Handler = Callable[[CommandCall], Awaitable[CommandAnswer]]
