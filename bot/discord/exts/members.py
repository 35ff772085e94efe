"""Slash commands for members: their own privacy level and data export, memories and reminders.

Every mutation goes through ``personas.actions`` (one transaction each), the same functions the
admin and the API call. Answers are ephemeral: only the member sees their own data.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import discord
from channels.db import database_sync_to_async
from discord import app_commands
from discord.ext import commands
from django.db.models import Q

from bot.conversation.state import ServerState
from bot.discord.exts._interactions import interaction_server, reply
from chatcontext.core.types import PersonaInfo
from chatcontext.models import PromptRecord
from community.export import build_user_export, export_file
from personas import actions
from personas import models as m
from personas.actions.users import set_impersonation_consent

PRIVACY_LABELS = {
    m.PrivacyLevel.MINIMAL: "Minimal — personas may use everything they know about you.",
    m.PrivacyLevel.PARTIAL: "Partial — your messages are seen, but no saved names, memories or profile details.",
    m.PrivacyLevel.FULL: "Full — your messages are left out of every prompt and you cannot trigger personas.",
}
EXPORT_SENT = "Sent to your direct messages: everything the personas know about you, on every server."
EXPORT_NO_DM = (
    "I could not send you a direct message. Allow direct messages from server members (Privacy Settings) "
    "and run /privacy export again."
)
IMPERSONATION_LABELS = {
    True: "Personas **may** write messages as you (/impersonate), unless your privacy level is Full.",
    False: "Personas **may not** write messages as you (/impersonate). /privacy impersonation changes it.",
}
PRIVACY_CHOICES = [app_commands.Choice(name=level.name.title(), value=int(level.value)) for level in m.PrivacyLevel]


@dataclass(frozen=True)
class Member:
    disc_id: str
    username: str
    global_name: str | None

    @classmethod
    def of(cls, interaction: discord.Interaction) -> Member:
        user = interaction.user
        return cls(str(user.id), user.name, user.global_name)

    def row(self) -> m.DiscordUser:
        return actions.register_user(
            self.disc_id, username=self.username, global_name=self.global_name, actor=self.actor
        )

    @property
    def actor(self) -> actions.Actor:
        return actions.Actor.slash_command(self.disc_id)


def pick_persona(state: ServerState, name: str | None) -> PersonaInfo | None:
    """The persona named ``name`` (case-insensitive), or the main persona when no name is given."""
    if not name:
        return state.main_persona
    wanted = name.strip().lower()
    return next((p for p in state.personas if p.persona_nickname.strip().lower() == wanted), None)


def visible_lineages(persona: PersonaInfo) -> list[int]:
    """A persona sees its own lineage and the global one (data-model.md §2.11)."""
    return [persona.persona_lineage_id, m.GLOBAL_LINEAGE_ID]


# --- synchronous bodies (run through database_sync_to_async) -----------------------------------


def describe_privacy(member: Member) -> str:
    row = member.row()
    level = m.PrivacyLevel(row.privacy_level)
    consent = IMPERSONATION_LABELS[row.allow_impersonation]
    return f"Your privacy level is **{level.name.title()}**.\n{PRIVACY_LABELS[level]}\n{consent}"


def change_impersonation_consent(member: Member, allowed: bool) -> str:
    row = set_impersonation_consent(member.row(), allowed, actor=member.actor)
    return IMPERSONATION_LABELS[row.allow_impersonation]


def change_privacy(member: Member, level: int) -> str:
    actions.set_privacy_level(member.row(), level, actor=member.actor)
    chosen = m.PrivacyLevel(level)
    return f"Your privacy level is now **{chosen.name.title()}**.\n{PRIVACY_LABELS[chosen]}"


def export_own_data(member: Member) -> tuple[str, bytes]:
    """The member's own export: every server's, since all of it is theirs (``community.export``)."""
    user = member.row()
    return export_file(user, build_user_export(user, None))


def memory_origins(rows: list[m.PersonalMemory]) -> dict[int, str]:
    """Where each memory came from (``personas.provenance``): learned in a conversation — with a link
    to the message it answered when that turn was on Discord — or added by a moderator. One query
    when any was learned, none otherwise."""
    record_ids = {r.source_prompt_record_id for r in rows if r.source_prompt_record_id is not None}
    discord_turns = {
        pk: (guild, channel)
        for pk, guild, channel in PromptRecord.objects.filter(
            pk__in=record_ids, source=PromptRecord.Source.BOT
        ).values_list("pk", "server__server_disc_id", "channel_disc_id")
    }
    origins = {}
    for r in rows:
        record_id, message_id = r.source_prompt_record_id, r.source_message_disc_id
        if record_id is None and not message_id:
            origins[r.pk] = "added by a moderator"
        elif record_id in discord_turns and message_id:
            guild, channel = discord_turns[record_id]
            origins[r.pk] = f"learned in chat (https://discord.com/channels/{guild}/{channel}/{message_id})"
        else:
            origins[r.pk] = "learned in chat"
    return origins


def list_memories(member: Member, persona: PersonaInfo) -> str:
    rows = list(
        m.PersonalMemory.objects.filter(
            user__user_disc_id=member.disc_id, persona_lineage_id__in=visible_lineages(persona)
        ).order_by("-created_at", "-personal_memory_id")
    )
    origins = memory_origins(rows)
    lines = [
        f"`#{r.personal_memory_id}`{' (shared)' if r.persona_lineage_id == m.GLOBAL_LINEAGE_ID else ''} {r.content}"
        f" — {origins[r.pk]}"
        for r in rows
    ]
    if not lines:
        return f"{persona.persona_nickname} has no memories about you."
    return f"What {persona.persona_nickname} remembers about you:\n" + "\n".join(lines)


def forget_memory(member: Member, persona: PersonaInfo, memory_id: int) -> str:
    memory = m.PersonalMemory.objects.filter(
        pk=memory_id, user__user_disc_id=member.disc_id, persona_lineage_id__in=visible_lineages(persona)
    ).first()
    if memory is None:
        return f"{persona.persona_nickname} has no memory #{memory_id} about you."
    actions.delete_personal_memory(memory, actor=member.actor)
    return f"{persona.persona_nickname} forgot memory #{memory_id}."


def forget_all_memories(member: Member, persona: PersonaInfo) -> str:
    count = actions.delete_personal_memories(member.row(), visible_lineages(persona), actor=member.actor)
    noun = "memory" if count == 1 else "memories"
    return f"{persona.persona_nickname} forgot {count} {noun} about you, shared ones included."


def _member_reminders(member: Member, state: ServerState) -> Q:
    mine = Q(user_discord_id=member.disc_id) | Q(created_by_user__user_disc_id=member.disc_id)
    return mine & Q(server_id=state.server_id, status__in=m.Reminder.OPEN_STATUSES, self_reminder=False)


def list_reminders(member: Member, state: ServerState) -> str:
    rows = m.Reminder.objects.filter(_member_reminders(member, state)).order_by("reminder_time", "reminder_id")
    lines = [f"`#{r.reminder_id}` <t:{int(r.reminder_time.timestamp())}:R> — {r.reminder_purpose}" for r in rows]
    return "Your reminders:\n" + "\n".join(lines) if lines else "You have no pending reminders here."


def cancel_reminder(member: Member, state: ServerState, reminder_id: int) -> str:
    reminder = m.Reminder.objects.filter(_member_reminders(member, state), pk=reminder_id).first()
    if reminder is None:
        return f"You have no pending reminder #{reminder_id} here."
    actions.cancel_reminder(reminder, actor=member.actor)
    return f"Reminder #{reminder_id} is cancelled."


# --- the cog ------------------------------------------------------------------------------------


class MembersCog(commands.Cog):
    privacy = app_commands.Group(name="privacy", description="See or change how personas may use your data")
    memories = app_commands.Group(name="memories", description="What a persona remembers about you")
    reminders = app_commands.Group(name="reminders", description="Your reminders on this server")

    @privacy.command(name="view", description="Show your privacy level")
    async def privacy_view(self, interaction: discord.Interaction) -> None:
        await reply(interaction, await database_sync_to_async(describe_privacy)(Member.of(interaction)))

    @privacy.command(name="set", description="Change your privacy level")
    @app_commands.describe(level="Minimal, Partial or Full")
    @app_commands.choices(level=PRIVACY_CHOICES)
    async def privacy_set(self, interaction: discord.Interaction, level: int) -> None:
        await reply(interaction, await database_sync_to_async(change_privacy)(Member.of(interaction), level))

    @privacy.command(name="impersonation", description="Allow or forbid personas to write messages as you")
    @app_commands.describe(allow="True: /impersonate may write as you; False: never (the default)")
    async def privacy_impersonation(self, interaction: discord.Interaction, allow: bool) -> None:
        text = await database_sync_to_async(change_impersonation_consent)(Member.of(interaction), allow)
        await reply(interaction, text)

    @privacy.command(name="export", description="Get everything the personas know about you, as a file by DM")
    async def privacy_export(self, interaction: discord.Interaction) -> None:
        filename, body = await database_sync_to_async(export_own_data)(Member.of(interaction))
        try:
            # A DM, not the channel: the file holds the member's memories and profile.
            await interaction.user.send(
                "What the personas know about you (JSON).", file=discord.File(io.BytesIO(body), filename=filename)
            )
        except discord.HTTPException:  # DMs closed (Forbidden) or refused
            await reply(interaction, EXPORT_NO_DM)
            return
        await reply(interaction, EXPORT_SENT)

    async def _persona(self, interaction: discord.Interaction, name: str | None) -> PersonaInfo | None:
        persona = pick_persona(await interaction_server(interaction), name)
        if persona is None:
            await reply(interaction, "There is no persona with that name here.")
        return persona

    @memories.command(name="list", description="List what a persona remembers about you")
    @app_commands.describe(persona="Persona name (default: the main persona)")
    async def memories_list(self, interaction: discord.Interaction, persona: str | None = None) -> None:
        if chosen := await self._persona(interaction, persona):
            await reply(interaction, await database_sync_to_async(list_memories)(Member.of(interaction), chosen))

    @memories.command(name="forget", description="Make a persona forget one memory about you")
    @app_commands.describe(memory_id="The number shown by /memories list", persona="Persona name")
    async def memories_forget(
        self, interaction: discord.Interaction, memory_id: int, persona: str | None = None
    ) -> None:
        if chosen := await self._persona(interaction, persona):
            text = await database_sync_to_async(forget_memory)(Member.of(interaction), chosen, memory_id)
            await reply(interaction, text)

    @memories.command(name="forget_all", description="Make a persona forget everything about you")
    @app_commands.describe(persona="Persona name (default: the main persona)")
    async def memories_forget_all(self, interaction: discord.Interaction, persona: str | None = None) -> None:
        if chosen := await self._persona(interaction, persona):
            await reply(interaction, await database_sync_to_async(forget_all_memories)(Member.of(interaction), chosen))

    @reminders.command(name="list", description="List your pending reminders on this server")
    async def reminders_list(self, interaction: discord.Interaction) -> None:
        state = await interaction_server(interaction)
        await reply(interaction, await database_sync_to_async(list_reminders)(Member.of(interaction), state))

    @reminders.command(name="cancel", description="Cancel one of your reminders")
    @app_commands.describe(reminder_id="The number shown by /reminders list")
    async def reminders_cancel(self, interaction: discord.Interaction, reminder_id: int) -> None:
        state = await interaction_server(interaction)
        text = await database_sync_to_async(cancel_reminder)(Member.of(interaction), state, reminder_id)
        await reply(interaction, text)


async def setup(bot: commands.Bot) -> None:
    await bot.add_cog(MembersCog())
