"""The rules of ``/impersonate member [instruction]`` (issue 30 item 5; build-context.md BC7-03/BC7-04),
shared by Discord (``bot.discord.exts.impersonate``) and the playground
(``bot.playground.turn_commands``): who may be impersonated, the locked turn, and the message body.

Only members who allowed it themselves (``/privacy impersonation``, off by default) can be
impersonated, never a privacy-Full member (their words never reach a prompt), one on the server's
personalization blacklist, or a bot; a privacy-Full member cannot start the turn either (P-01).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chatcontext import repository
from chatcontext.core.types import ChatIncoming, DiscordMessage, LockedTurn, PersonaInfo
from personas import models as m

FULL_ASKER = "Your privacy level is Full: your messages never reach a persona, so you cannot start a persona turn."
FAILED = "No message was written as {name} (the prompt record says why)."
NO_PERSONA = "This server has no persona to write the message."
MAX_INSTRUCTION = 500


@dataclass(frozen=True)
class Person:
    """A member as the rules need them: their Discord id, the name they show and whether a bot."""

    disc_id: str
    display_name: str
    username: str
    bot: bool = False


def refusal(server_id: int, asker_disc_id: str, target: Person) -> str | None:
    """Why the asker may not have a persona write as ``target`` on this server, or None."""
    name = target.display_name
    if target.bot:
        return "Only people can be impersonated, not bots or apps."
    rows = repository.load_user_rows([asker_disc_id, target.disc_id])
    asker_row, target_row = rows.get(asker_disc_id), rows.get(target.disc_id)
    if asker_row is not None and asker_row.privacy_level == m.PrivacyLevel.FULL:
        return FULL_ASKER
    consent = m.DiscordUser.objects.filter(user_disc_id=target.disc_id, allow_impersonation=True).exists()
    if target_row is None or not consent:
        return (
            f"{name} has not allowed impersonation. Only members who turned it on themselves "
            "(/privacy impersonation allow:True) can be impersonated."
        )
    if target_row.privacy_level == m.PrivacyLevel.FULL:
        return f"{name}'s privacy level is Full: their words never reach a persona, so they cannot be impersonated."
    if repository.load_blacklisted(server_id, [target.disc_id]):
        return f"{name} is on this server's personalization blacklist, so they cannot be impersonated."
    return None


def without_name_prefix(text: str, names: list[str]) -> str:
    """The message without the ``Name:`` the tail directive asks the model to start with (BC7-04)."""
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        stripped = re.sub(rf"^\s*{re.escape(name)}\s*:\s*", "", text, count=1, flags=re.IGNORECASE)
        if stripped != text:
            return stripped
    return text


def impersonation_turn(anchor: DiscordMessage, persona: PersonaInfo, target_id: str, instruction: str) -> LockedTurn:
    """The locked turn: ``persona`` writes as the member (BC7-03), the instruction as the manual
    directive (BC8-05)."""
    incoming = ChatIncoming(
        message=anchor,
        is_user_impersonation=True,
        impersonated_user_id=target_id,
        manual_system_prompt=instruction.strip() or None,
    )
    persona_ids = (persona.persona_id,) if persona.persona_id is not None else ()
    return LockedTurn(incoming=incoming, channel_id=anchor.channel_id, triggered_persona_ids=persona_ids)


def command_summary(asker_name: str, target_name: str, instruction: str) -> str:
    said = f' with the instruction "{instruction.strip()}"' if instruction.strip() else ""
    return f"/impersonate: {asker_name} had the persona write as {target_name}{said}."
