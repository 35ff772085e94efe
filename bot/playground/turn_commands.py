"""``/impersonate`` and ``/scene`` typed in a playground channel: the commands that start turns of
their own, with the rules Discord's have (``bot.conversation.impersonation``, ``bot.conversation.scenes``).

Arguments: ``/impersonate <member> [instruction]`` (the member by display name, username, id or
mention); ``/scene <persona, persona[, persona]> <rounds> [topic]`` and ``/scene stop``. Each turn is
anchored on the channel's newest message and runs on the channel's planner lock. Who may start or
stop a scene: as for ``/compact`` (``bot.playground.steering_commands``), members with Manage Server
stand for those with Manage Messages. A scene runs inside the request that started it (its answer
comes when it ends); ``/scene stop`` from another request stops it after the running turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.conversation import impersonation, scenes
from bot.conversation.db import in_callers_transaction as db
from bot.conversation.impersonation import FULL_ASKER, Person
from bot.conversation.jobs import TurnJob
from bot.conversation.scenes import Scene
from bot.playground import live, store
from bot.playground.command_call import CommandAnswer, CommandCall, Handler
from bot.playground.models import PlaygroundMessage
from bot.playground.outlet import PlaygroundOutlet
from bot.playground.steering_commands import ChannelNow, read_channel
from chatcontext.core.types import PersonaInfo, ReplyNoticeState
from chatcontext.models import PromptRecord
from chatcontext.records.commands import TurnCommand
from personas import models as m

IMPERSONATE_USAGE = "Name a member of this server: /impersonate <member> [instruction]."
SCENE_USAGE = "Use /scene <persona, persona[, persona]> <rounds 1–{max}> [topic], or /scene stop."
NOTHING_YET = "This channel has no conversation yet for a persona turn to read."
SCENE_RUNNING = "A scene is already running in this channel; /scene stop ends it."

_SCENE = re.compile(r"(?P<names>.+?)\s+(?P<rounds>\d+)(?:\s+(?P<topic>.*))?", re.DOTALL)


class RunningScenes:
    """The scene running in each playground channel (by its pk) of this process."""

    def __init__(self) -> None:
        self._scenes: dict[int, Scene] = {}

    def get(self, channel_pk: int) -> Scene | None:
        return self._scenes.get(channel_pk)

    def start(self, channel_pk: int, scene: Scene) -> None:
        self._scenes[channel_pk] = scene

    def end(self, channel_pk: int) -> None:
        self._scenes.pop(channel_pk, None)


RUNNING = RunningScenes()


def members(server: m.Server) -> list[Person]:
    return [
        Person(
            r.user_disc_id, r.nickname or r.global_name or r.username or r.user_disc_id, r.username or "", bot=r.is_bot
        )
        for r in m.ServerMember.objects.filter(server=server)
    ]


def find_member(people: list[Person], arguments: str) -> tuple[Person, str] | None:
    """The member the arguments start with (the longest name that matches) and the rest."""
    text = arguments.strip().removeprefix("@")
    names = [
        (name, p)
        for p in people
        for name in {p.display_name, p.username, p.disc_id, f"<@{p.disc_id}>", f"<@!{p.disc_id}>"}
        if name
    ]
    for name, person in sorted(names, key=lambda n: len(n[0]), reverse=True):
        head, rest = text[: len(name)], text[len(name) :]
        if head.lower() == name.lower() and (not rest or rest[0].isspace()):
            return person, rest.strip()
    return None


def name_of(people: list[Person], disc_id: str) -> str:
    return next((p.username or p.display_name for p in people if p.disc_id == disc_id), disc_id)


@dataclass
class ImpersonationOutlet(PlaygroundOutlet):
    """Posts the message under the member's name; a failure is told only to who asked (the
    command's answer), as on Discord."""

    member: Person = field(kw_only=True)

    async def deliver(
        self, persona: PersonaInfo, text: str, *, reply_notice: ReplyNoticeState | None, locale: str
    ) -> PlaygroundMessage:
        names = [self.member.display_name, self.member.username]
        body = impersonation.without_name_prefix(text, names)
        row = await db(store.store_as_member)(self.channel, body, name=self.member.display_name, now_ms=self.clock())
        await live.publish_message(self.channel, row, self.bot_user, stream_id=self._stream_id(persona))
        return row

    async def notify_failure(self, persona: PersonaInfo, *, locale: str) -> None:
        """Nothing is posted: the command's answer says no message was written."""


@dataclass(frozen=True)
class Impersonation:
    now: ChannelNow
    people: list[Person]
    why: str | None = None
    target: Person | None = None
    instruction: str = ""


def read_impersonation(call: CommandCall) -> Impersonation:
    now = read_channel(call.channel, call.member_disc_id, call.runner.clock())
    people = members(call.channel.server)
    found = find_member(people, call.arguments)
    if found is None:
        return Impersonation(now, people, IMPERSONATE_USAGE)
    target, instruction = found
    why = impersonation.refusal(now.state.server_id, call.member_disc_id, target)
    return Impersonation(now, people, why, target, instruction[: impersonation.MAX_INSTRUCTION])


async def impersonate(call: CommandCall) -> CommandAnswer:
    asked = await db(read_impersonation)(call)
    now, target = asked.now, asked.target
    if asked.why is not None or target is None:
        return CommandAnswer(asked.why or IMPERSONATE_USAGE, refused=True)
    persona = now.state.main_persona
    if persona is None or now.newest is None:
        return CommandAnswer(impersonation.NO_PERSONA if persona is None else NOTHING_YET, refused=True)
    outlet = ImpersonationOutlet(call.channel, None, now.bot_user, clock=call.runner.clock, member=target)
    summary = impersonation.command_summary(
        name_of(asked.people, call.member_disc_id), target.username or target.display_name, asked.instruction
    )
    job = TurnJob(
        impersonation.impersonation_turn(now.newest, persona, target.disc_id, asked.instruction),
        outlet,
        (persona,),
        now.state,
        now.newest_author,
        triggerer=now.newest_member,
        posted_by=call.posted_by,
        command=TurnCommand("impersonate", call.member_disc_id, summary),
    )
    results = await call.run_turn(job)
    records = [r.record for r in results]
    if not any(r.reply is not None for r in results):
        return CommandAnswer(impersonation.FAILED.format(name=target.display_name), refused=True, records=records)
    return CommandAnswer(f"{persona.persona_nickname} wrote a message as {target.display_name}.", records=records)


def scene_arguments(arguments: str) -> tuple[str, int, str] | str:
    """``(names, rounds, topic)``, or why the arguments are refused."""
    match = _SCENE.fullmatch(arguments.strip())
    usage = SCENE_USAGE.format(max=scenes.MAX_ROUNDS)
    if match is None:
        return usage
    rounds = int(match["rounds"])
    if not 1 <= rounds <= scenes.MAX_ROUNDS:
        return usage
    return match["names"], rounds, (match["topic"] or "").strip()[: scenes.MAX_TOPIC]


async def scene(call: CommandCall) -> CommandAnswer:
    if call.arguments.strip().lower() == "stop":
        return await stop_scene(call)
    now = await db(read_channel)(call.channel, call.member_disc_id, call.runner.clock())
    if not now.may_steer:
        return CommandAnswer(scenes.WHO_MAY, refused=True)
    if await db(scenes.asker_is_full)(call.member_disc_id):
        return CommandAnswer(FULL_ASKER, refused=True)
    parsed = scene_arguments(call.arguments)
    if isinstance(parsed, str):
        return CommandAnswer(parsed, refused=True)
    names, rounds, topic = parsed
    cast, why = scenes.pick_personas(now.state, names)
    if why is not None:
        return CommandAnswer(why, refused=True)
    if RUNNING.get(call.channel.pk) is not None:
        return CommandAnswer(SCENE_RUNNING, refused=True)
    people = await db(members)(call.channel.server)
    # The scene's id is its opening notice's, known once posted.
    starter = name_of(people, call.member_disc_id)
    scene = Scene("", call.member_disc_id, starter, cast, rounds, topic)
    RUNNING.start(call.channel.pk, scene)
    try:
        records = await play(call, now, scene)
    finally:
        RUNNING.end(call.channel.pk)
    return CommandAnswer(f"{scenes.started(cast, rounds)} It ended after {len(records)} turns.", records=records)


async def play(call: CommandCall, now: ChannelNow, scene: Scene) -> list[PromptRecord]:
    opening = scenes.opening_notice(scene.cast, scene.rounds, scene.topic)
    await now.outlet(call.channel, call).post_notices(now.state.main_persona or scene.cast[0], [opening])
    records: list[PromptRecord] = []
    for sequence in range(scene.total):
        if scene.stopped:
            break
        now = await db(read_channel)(call.channel, call.member_disc_id, call.runner.clock())
        assert now.newest is not None  # the opening notice at least
        if sequence == 0:
            scene.scene_id = now.newest.id
        outlet = PlaygroundOutlet(call.channel, None, now.bot_user, clock=call.runner.clock)
        job = TurnJob(
            scene.turn(now.newest, sequence),
            outlet,
            (scene.speaker(sequence),),
            now.state,
            now.newest_author,
            triggerer=now.newest_member,
            posted_by=call.posted_by,
            command=scene.command(sequence),
        )
        results = await call.run_turn(job)
        records.extend(r.record for r in results)
        if not any(r.reply is not None for r in results):
            break  # a persona gave no reply: the scene ends rather than talk past it
    return records


async def stop_scene(call: CommandCall) -> CommandAnswer:
    scene = RUNNING.get(call.channel.pk)
    if scene is None:
        return CommandAnswer(scenes.ENDED, refused=True)
    if call.member_disc_id != scene.started_by:
        now = await db(read_channel)(call.channel, call.member_disc_id, call.runner.clock())
        if not now.may_steer:
            return CommandAnswer(scenes.WHO_MAY_STOP.format(name=scene.starter_name), refused=True)
    scene.stopped = True
    return CommandAnswer(scenes.STOPPING)


COMMANDS: dict[str, Handler] = {"impersonate": impersonate, "scene": scene}
