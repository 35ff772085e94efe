"""The memory tools: remember a fact about a person or the server, update or forget a memory.

Memory ids the model sees are ``p{id}`` (personal) and ``s{id}`` (server): they come back in the
tool's result and in the confirmation notice, which the next turns read as a system notice.
"""

from __future__ import annotations

import re

from pydantic import Field

from bot.conversation.tools.base import Tool, ToolArgs, ToolOutcome, ToolTurn, Unresolved, refusal, resolve_person
from bot.conversation.tools.notices import notice
from personas import actions
from personas import models as m
from personas.actions import tool_actions
from personas.provenance import Provenance, WrittenRow

_MEMORY_ID = re.compile(r"^\s*([ps])(\d{1,18})\s*$")


class RememberUserFact(ToolArgs):
    user: str = Field(description="Who it is about: their @handle, their name, or the ref_N of one of their messages.")
    content: str = Field(description="The fact, one sentence, written about them (e.g. 'Their cat is called Mochi').")
    tags: list[str] = Field(default_factory=list, description="Optional keywords.")
    everywhere: bool = Field(default=False, description="True: every persona may know it (only when allowed).")


class RememberServerFact(ToolArgs):
    content: str = Field(description="The fact about this server or community, one sentence.")
    tags: list[str] = Field(default_factory=list, description="Optional keywords.")


class UpdateMemory(ToolArgs):
    id: str = Field(description="The memory id shown when it was saved (p12, s5).")
    content: str = Field(description="The corrected fact.")


class ForgetMemory(ToolArgs):
    id: str = Field(description="The memory id shown when it was saved (p12, s5).")


def _provenance(turn: ToolTurn) -> Provenance:
    return Provenance(message_disc_id=turn.trigger_message_id)


def _persona(turn: ToolTurn) -> m.Persona:
    return m.Persona.objects.select_related("server").get(pk=turn.persona_id)


async def remember_user_fact(turn: ToolTurn, args: RememberUserFact) -> ToolOutcome:
    try:
        user_id = resolve_person(turn, args.user)
    except Unresolved as exc:
        return refusal(str(exc))
    label = turn.label_of(user_id)

    def write() -> m.PersonalMemory:
        return tool_actions.learn_about_user(
            _persona(turn),
            user_id,
            args.content,
            args.tags,
            username=label,
            global_scope=args.everywhere,
            provenance=_provenance(turn),
            actor=turn.actor,
        )

    try:
        memory = await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))
    ref = f"p{memory.pk}"
    persona = turn.ctx.current_persona.persona_nickname
    return ToolOutcome(
        result=f"Saved as memory {ref} about {label or 'them'}.",
        written=(WrittenRow("personal_memory", memory.pk),),
        notice=notice(
            "genai.self_teach.personal_memory_learned_title",
            f"{memory.content} ({ref})",
            persona_nickname=persona,
            user_name=label or "them",
        ),
        subjects=(user_id,),
    )


async def remember_server_fact(turn: ToolTurn, args: RememberServerFact) -> ToolOutcome:
    def write() -> m.ServerMemory:
        return tool_actions.learn_about_server(
            _persona(turn),
            args.content,
            args.tags,
            taught_by_disc_id=turn.triggerer_id,
            provenance=_provenance(turn),
            actor=turn.actor,
        )

    try:
        memory = await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))
    ref = f"s{memory.pk}"
    return ToolOutcome(
        result=f"Saved as server memory {ref}.",
        written=(WrittenRow("server_memory", memory.pk),),
        notice=notice(
            "genai.self_teach.server_memory_learned_title",
            f"{memory.content} ({ref})",
            persona_nickname=turn.ctx.current_persona.persona_nickname,
        ),
    )


def _memory_ref(value: str) -> tuple[str, int] | None:
    match = _MEMORY_ID.match(value)
    if match is None:
        return None
    return ("personal" if match.group(1) == "p" else "server"), int(match.group(2))


def _changed_notice(turn: ToolTurn, memory: m.PersonalMemory | m.ServerMemory, action: str, text: str) -> ToolOutcome:
    persona = turn.ctx.current_persona.persona_nickname
    if isinstance(memory, m.PersonalMemory):
        user_id = m.DiscordUser.objects.values_list("user_disc_id", flat=True).get(pk=memory.user_id)
        label = turn.label_of(user_id) or "them"
        key = f"genai.self_teach.personal_memory_{action}_title"
        row = WrittenRow("personal_memory", memory.pk)
        return ToolOutcome(
            result=f"Memory p{memory.pk} {action}.",
            written=(row,) if action == "updated" else (),
            notice=notice(key, text, persona_nickname=persona, user_name=label),
            subjects=(user_id,),
        )
    key = f"genai.self_teach.server_memory_{action}_title"
    row = WrittenRow("server_memory", memory.pk)
    return ToolOutcome(
        result=f"Memory s{memory.pk} {action}.",
        written=(row,) if action == "updated" else (),
        notice=notice(key, text, persona_nickname=persona),
    )


async def update_memory(turn: ToolTurn, args: UpdateMemory) -> ToolOutcome:
    ref = _memory_ref(args.id)
    if ref is None:
        return refusal("A memory id looks like p12 or s5.")

    def write() -> ToolOutcome:
        memory = tool_actions.update_memory(_persona(turn), *ref, args.content, people=turn.people, actor=turn.actor)
        return _changed_notice(turn, memory, "updated", memory.content)

    try:
        return await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))


async def forget_memory(turn: ToolTurn, args: ForgetMemory) -> ToolOutcome:
    ref = _memory_ref(args.id)
    if ref is None:
        return refusal("A memory id looks like p12 or s5.")

    def write() -> ToolOutcome:
        memory = tool_actions.forget_memory(_persona(turn), *ref, people=turn.people, actor=turn.actor)
        return _changed_notice(turn, memory, "deleted", memory.content)

    try:
        return await turn.db(write)()
    except actions.ActionError as exc:
        return refusal(str(exc))


TOOLS: tuple[Tool, ...] = (
    Tool(
        "remember_user_fact",
        "Save something you learned about a person in this conversation, to remember it in later conversations.",
        RememberUserFact,
        "memory",
        remember_user_fact,
    ),
    Tool(
        "remember_server_fact",
        "Save something you learned about this server or community.",
        RememberServerFact,
        "memory",
        remember_server_fact,
    ),
    Tool("update_memory", "Correct a memory you saved earlier.", UpdateMemory, "memory", update_memory),
    Tool("forget_memory", "Delete a memory you saved earlier.", ForgetMemory, "memory", forget_memory),
)
