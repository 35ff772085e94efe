"""Profiles of the participants that are not Discord users (H-16..H-19): the active identity, bridged
Matrix users, historical personas and webhooks, public persona profiles; and the active persona's
own task lines (H-21)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from chatcontext.core.participants.aliases import bridge_alias
from chatcontext.core.participants.model import (
    HiddenReason,
    HydratedParticipantProfile,
    ParticipantKey,
    ParticipantSeed,
    PublicPersonaProfile,
    make_alias,
)
from chatcontext.core.participants.render import BOT_STATUS_LINE, TASKS_HEADER, UNKNOWN_STATUS_LINE
from chatcontext.core.participants.timefmt import format_reminder
from chatcontext.core.types import ReminderRow
from chatcontext.participants.hydration.fields import appearance_line, clean_tags, profile_field
from chatcontext.participants.hydration.identity import convert
from chatcontext.participants.hydration.state import HydrationRun


def bot_profile(run: HydrationRun, seed: ParticipantSeed) -> HydratedParticipantProfile:
    """H-16: the active identity."""
    imp = run.scope.is_user_impersonation
    tags = run.persona.physical_appearance_tags if run.persona else ()
    return HydratedParticipantProfile(
        key=seed.key,
        reasons=set(seed.reasons),
        display_name=run.bot_name,
        aliases=[],
        primary_alias=None,
        mentionable=False,
        is_bot=True,
        resolvable_target_id=None,
        fields=[
            profile_field(
                seed.key,
                "physical_appearance",
                appearance_line(run.bot_name, tags),
                "impersonation" if imp else None,
            ),
            profile_field(seed.key, "status", [BOT_STATUS_LINE], None),
        ],
    )


def matrix_profile(run: HydrationRun, seed: ParticipantSeed) -> HydratedParticipantProfile | None:
    """H-17."""
    display = (run.prepared.matrix_users.get(seed.key.id) or seed.source_display_name or "").strip()
    if not display:
        return None
    aliases = list(seed.aliases) or bridge_alias(seed.key.id, display)
    return HydratedParticipantProfile(
        key=seed.key,
        reasons=set(seed.reasons),
        display_name=display,
        aliases=aliases,
        primary_alias=display,
        mentionable=False,
        is_bot=False,
        resolvable_target_id=seed.key.id,
        fields=[profile_field(seed.key, "status", [UNKNOWN_STATUS_LINE], None)],
    )


def synthetic_profile(run: HydrationRun, seed: ParticipantSeed) -> HydratedParticipantProfile | None:
    """H-18: historical persona or webhook (no fields, no handle, no target)."""
    synthetic = run.prepared.synthetic_users
    if seed.key.kind == "persona":
        entry = synthetic.get(f"persona:{seed.key.id}") or synthetic.get(seed.key.id) or {}
    else:
        entry = synthetic.get(seed.key.id) or {}
    display = (seed.source_display_name or entry.get("display_name") or "").strip()
    if not display:
        return None
    return HydratedParticipantProfile(
        key=seed.key,
        reasons=set(seed.reasons),
        display_name=display,
        aliases=list(seed.aliases),
        primary_alias=None,
        mentionable=False,
        is_bot=False,
        resolvable_target_id=None,
    )


def apply_public_profiles(
    run: HydrationRun, profiles: list[HydratedParticipantProfile], seeds: Mapping[ParticipantKey, ParticipantSeed]
) -> None:
    """H-19: public persona fields merge by persona key; otherwise a public-only profile is appended."""
    imp = run.scope.is_user_impersonation
    by_key = {p.key: p for p in profiles}
    for public in run.prepared.public_persona_profiles:
        if public.persona_id == run.scope.persona_id:
            continue
        key = ParticipantKey.persona(public.persona_id)
        attributes = _public_attributes(run, public)
        tags = [] if imp else clean_tags(public.image_appearance_tags)
        if not attributes and not tags:
            continue
        existing = by_key.get(key)
        label = existing.display_name if existing else public.persona_name
        hidden: HiddenReason | None = "impersonation" if imp else None
        appearance = profile_field(key, "physical_appearance", appearance_line(label, tags), hidden)
        attribute_field = profile_field(
            key,
            "persona_public_attributes",
            [f"- Known Information about {label}:", *(f"  - {a}" for a in attributes)] if attributes else [],
            None,
        )
        if existing is not None:
            replaced = {"physical_appearance", "persona_public_attributes"}
            kept = [f for f in existing.fields if f.kind not in replaced]
            existing.fields = [*kept, appearance, attribute_field]
            continue
        seed = seeds.get(key)
        alias = make_alias(
            key,
            public.persona_name,
            "persona_nickname",
            {"output_mention", "tool_target", "copied_identity"},
            "visible",
            10,
            public.persona_name,
        )
        profile = HydratedParticipantProfile(
            key=key,
            reasons=set(seed.reasons) if seed else {"persona_trigger_reference"},
            display_name=public.persona_name,
            aliases=[alias] if alias else [],
            primary_alias=public.persona_name,
            mentionable=False,
            is_bot=False,
            resolvable_target_id=key.serialized,
            fields=[appearance, profile_field(key, "status", [UNKNOWN_STATUS_LINE], None), attribute_field],
        )
        profiles.append(profile)
        by_key[key] = profile


def _public_attributes(run: HydrationRun, public: PublicPersonaProfile) -> list[str]:
    out: list[str] = []
    for attribute in public.attributes:
        text = attribute.strip()
        if not text:
            continue
        if run.expand is not None:
            text = run.expand(text)
        text = convert(run, text, "User", public.persona_name).strip()
        if text:
            out.append(text)
    return out


def task_lines(run: HydrationRun, tasks: Sequence[ReminderRow]) -> list[str]:
    """H-21: header then `- {reminder}` with the destination channel when set."""
    if not tasks:
        return []
    lines = [TASKS_HEADER]
    for task in tasks:
        line = "- " + format_reminder(
            reminder_id=task.reminder_id,
            purpose=task.reminder_purpose,
            reminder_time_ms=task.reminder_time_ms,
            repetition_interval_hours=task.repetition_interval_hours,
            server_offset_hours=run.server.timezone_offset,
        )
        if task.channel_disc_id:
            line += f" (destination: <#{task.channel_disc_id}>)"
        lines.append(line)
    return lines
