"""Slash commands typed in the playground's message box, so a moderator can try them in the browser.

A message whose text is ``/name`` or ``/name arguments``, ``name`` one of ``COMMANDS``, is not stored
as a message: Discord never shows a slash command in the channel either. It runs the command's
handler as the member the moderator speaks as, and its answer is the private reply Discord would
show that member alone. Any other text starting with ``/`` is an ordinary message.

Each family of commands lists its handlers in its own module (``bot.playground.steering_commands``,
``bot.playground.turn_commands``);
adding a family is one more entry in ``COMMANDS``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.playground import steering_commands, turn_commands
from bot.playground.command_call import CommandAnswer, CommandCall, Handler

COMMANDS: dict[str, Handler] = {**steering_commands.COMMANDS, **turn_commands.COMMANDS}

_COMMAND = re.compile(r"/([a-z][a-z0-9_-]*)(?:\s+(.*))?", re.DOTALL)


@dataclass(frozen=True)
class TypedCommand:
    name: str
    arguments: str
    handler: Handler


def parse(content: str) -> TypedCommand | None:
    """The command a message box's text runs, None for an ordinary message."""
    match = _COMMAND.fullmatch(content.strip())
    if match is None or match.group(1) not in COMMANDS:
        return None
    name = match.group(1)
    return TypedCommand(name, (match.group(2) or "").strip(), COMMANDS[name])


async def run(typed: TypedCommand, call: CommandCall) -> CommandAnswer:
    return await typed.handler(call)
