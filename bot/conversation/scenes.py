"""The rules of ``/scene personas rounds [topic]`` (issue 30 item 6; build-context.md BC8-08 scene
turns), shared by Discord (``bot.discord.exts.scene``) and the playground
(``bot.playground.turn_commands``): which personas, the opening notice, and each scene turn.

A scene opens with a scene-directive notice (BC6-01: the history reads it as ``[System: …]``, so
every persona turn sees the topic); each round runs one turn per persona, in the order given, anchored
on the channel's newest message, so every persona reads what the others just said (BC1-02). A scene
turn answers nobody's message, so it is never a queued reply (BC8-08). Each turn has its prompt
record, with what the command did. Who may start or stop one: members with Manage Messages (a scene
posts many messages and costs many model calls); the member who started a scene may also stop it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from bot.conversation.state import ServerState
from bot.conversation.tools.notices import Notice, notice
from chatcontext import repository
from chatcontext.core.types import ChatIncoming, DiscordMessage, LockedTurn, PersonaInfo
from chatcontext.records.commands import TurnCommand
from personas import models as m

MAX_ROUNDS = 5
MAX_TOPIC = 500
WHO_MAY = "Only members with Manage Messages can start a scene: it posts many messages and costs many model calls."
WHO_MAY_STOP = "Only {name}, who started this scene, or members with Manage Messages can stop it."
PICK = "Name two or three different personas of this server, separated by commas (for example: Tomori, Ellen). {why}"
ENDED = "This scene has already ended."
STOPPING = "The scene stops after the turn that is running."


def pick_personas(state: ServerState, names: str) -> tuple[list[PersonaInfo], str | None]:
    """The personas named, in the order given, or why the names do not name 2–3 of them."""
    wanted = [n.strip() for n in re.split(r"[,;]", names) if n.strip()]
    by_name = {p.persona_nickname.strip().lower(): p for p in state.personas}
    unknown = [n for n in wanted if n.lower() not in by_name]
    if unknown:
        return [], PICK.format(why=f"Not a persona here: {', '.join(unknown)}.")
    chosen = list({n.lower(): by_name[n.lower()] for n in wanted}.values())
    if not 2 <= len(chosen) <= 3:
        return [], PICK.format(why=f"You named {len(chosen)}.")
    return chosen, None


def asker_is_full(user_disc_id: str) -> bool:
    row = repository.load_user_rows([user_disc_id]).get(user_disc_id)
    return row is not None and row.privacy_level == m.PrivacyLevel.FULL


def started(cast: list[PersonaInfo], rounds: int) -> str:
    return f"The scene starts: {', '.join(p.persona_nickname for p in cast)}, {rounds} rounds."


def opening_notice(cast: list[PersonaInfo], rounds: int, topic: str) -> Notice:
    names = ", ".join(p.persona_nickname for p in cast)
    said = f" Topic: {topic}" if topic else ""
    description = f"Scene: {names} talk with each other, taking turns (up to {rounds} rounds).{said}"
    return notice("commands.generate.scene.success_title", description)


@dataclass
class Scene:
    """A running scene: its id (the opening notice's message id), who started it, its cast and
    length, and whether someone asked it to stop (it then stops after the running turn)."""

    scene_id: str
    started_by: str
    starter_name: str
    cast: list[PersonaInfo]
    rounds: int
    topic: str
    stopped: bool = False

    @property
    def total(self) -> int:
        return self.rounds * len(self.cast)

    def speaker(self, sequence: int) -> PersonaInfo:
        return self.cast[sequence % len(self.cast)]

    def turn(self, anchor: DiscordMessage, sequence: int) -> LockedTurn:
        persona = self.speaker(sequence)
        scene_turn = {
            "command_id": self.scene_id,
            "sequence": sequence,
            "turn_index": sequence,
            "total_turns": self.total,
            "additional_instructions": self.topic or None,
        }
        return LockedTurn(
            incoming=ChatIncoming(message=anchor, scene_turn=scene_turn),
            channel_id=anchor.channel_id,
            triggered_persona_ids=(persona.persona_id,) if persona.persona_id is not None else (),
        )

    def command(self, sequence: int) -> TurnCommand:
        speaker = self.speaker(sequence).persona_nickname
        topic = f", topic: {self.topic}" if self.topic else ""
        summary = f"/scene by {self.starter_name}: turn {sequence + 1} of {self.total}, {speaker}{topic}."
        return TurnCommand("scene", self.started_by, summary)
