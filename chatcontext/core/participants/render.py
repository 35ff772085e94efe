"""Pure rendering of the participant prompt (participants.md R-02..R-13).

Reads only hydrated profiles, the persona's task lines and clock strings the caller supplies: no
database, Discord, clock or logging (R-02). The profile block never contains anything that changes
with the clock or with presence (R-03); those go to the presence and current-context blocks, which
the builder places in the tail slot.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from chatcontext.core.frames import system_frame
from chatcontext.core.participants.aliases import aliases_for_purpose, collision_index
from chatcontext.core.participants.model import (
    HydratedParticipantProfile,
    ParticipantAlias,
    ParticipantKey,
    ParticipantProfileField,
    normalize_alias,
)

# R-04 structural tokens (the frame itself is chatcontext.core.frames').
YOU_SUFFIX = " (This is you!)"
MENTION_LABEL = "Mention: "
ALIASES_LABEL = "Aliases: "
CLARIFICATION = "Mention requires clarification"

# R-05 prose constants (the suggested defaults; fixed per release).
PROFILE_HEADER = "People taking part in this conversation:"
PING_INSTRUCTION = (
    'To notify one of these people, {bot} writes "@" directly followed by one of the unique handles shown below '
    "(case does not matter). If a name could mean more than one person, {bot} asks who is meant instead of "
    "guessing. Ping only when a notification is really useful."
)
PING_INSTRUCTION_IMPERSONATION = (
    'To notify one of these people, you write "@" directly followed by one of the unique handles shown below '
    "(case does not matter). If a name could mean more than one person, you ask who is meant instead of "
    "guessing. Ping only when a notification is really useful."
)
BOT_STATUS_LINE = "- Status: Online - present and replying here"
UNKNOWN_STATUS_LINE = "- Status: Unknown (possibly online)"
TASKS_HEADER = "Tasks you scheduled for yourself that are still pending:"
PRESENCE_HEADER = "Current status of the people in this conversation:"
LOCAL_TIMES_HEADER = "Participant local times:"

STATUS_KINDS = frozenset({"status", "presence"})


def handle(value: str) -> str:
    """R-04 handle format: `@{alias}` (the braces are literal)."""
    return f"@{{{value}}}"


@dataclass(frozen=True)
class RenderClock:
    """Clock strings computed by the caller (R-02): the renderer never reads a clock.

    ``local_times`` maps a profile key to `{now at user offset} ({user UTC label})` (R-12).
    """

    current_time: str
    timezone_label: str
    time_of_day_phrase: str
    local_times: Mapping[ParticipantKey, str] = field(default_factory=dict)


@dataclass(frozen=True)
class RenderedParticipantPrompt:
    """R-01 texts before mention conversion. ``profile_text_without_memories`` is the N-05 variant."""

    profile_text: str
    presence_text: str | None
    current_context_text: str
    profile_text_without_memories: str


_field_order = operator.attrgetter("order")


def visible_lines(profile: HydratedParticipantProfile, *, exclude: frozenset[str] = frozenset()) -> list[str]:
    """Visible lines of the profile's fields in field order, skipping the excluded kinds."""
    lines: list[str] = []
    for profile_field in sorted(profile.fields, key=_field_order):
        if profile_field.visible and profile_field.kind not in exclude:
            lines.extend(profile_field.lines)
    return lines


def has_visible_field(profile: HydratedParticipantProfile, kinds: frozenset[str]) -> bool:
    return any(f.visible and f.lines and f.kind in kinds for f in profile.fields)


def visible_field(profile: HydratedParticipantProfile, kind: str) -> ParticipantProfileField | None:
    return next((f for f in profile.fields if f.kind == kind and f.visible), None)


def offered_output_aliases(profile: HydratedParticipantProfile) -> list[ParticipantAlias]:
    """R-07 step 1: visible `output_mention` aliases in D-08 order; none for a profile that is
    neither mentionable nor has a primary alias."""
    if not profile.mentionable and not profile.primary_alias:
        return []
    return [a for a in aliases_for_purpose(profile.aliases, "output_mention") if a.exposure == "visible"]


@dataclass(frozen=True)
class HeadingHandles:
    """R-07 handle choice of one profile (also what X-08 pings may use)."""

    primary: str | None
    others: tuple[str, ...]
    needs_clarification: bool


def choose_handles(
    profile: HydratedParticipantProfile, collisions: Mapping[str, Sequence[ParticipantKey]]
) -> HeadingHandles:
    """R-07 steps 2–6 against the collision index of every target of the item.

    "Unique" also requires the single claimant to be this profile, so a primary alias that only
    another participant claims is never offered as this profile's handle.
    """

    def unique(value: str) -> bool:
        normalized = normalize_alias(value)
        return bool(normalized) and list(collisions.get(normalized, ())) == [profile.key]

    out = [alias.value for alias in offered_output_aliases(profile)]
    primary: str | None = None
    if profile.primary_alias and unique(profile.primary_alias):
        primary = profile.primary_alias
    else:
        primary = next((v for v in out if v != profile.primary_alias and unique(v)), None)
    others: list[str] = []
    for value in out:
        if unique(value) and value != primary and value not in others:
            others.append(value)
    return HeadingHandles(primary, tuple(others), bool(out) and primary is None)


def output_collisions(profiles: Sequence[HydratedParticipantProfile]) -> dict[str, list[ParticipantKey]]:
    """D-09 over `output_mention` across every profile (lookup-only aliases claim values too)."""
    return collision_index([alias for profile in profiles for alias in profile.aliases], "output_mention")


def profile_heading(
    profile: HydratedParticipantProfile,
    collisions: Mapping[str, Sequence[ParticipantKey]],
    *,
    is_impersonation: bool,
) -> str:
    """R-07 heading: `Ally (Mention: @{alice_srv}; Aliases: @{Ally}, @{alice01})`; the bot gets
    ` (This is you!)` except on impersonation turns."""
    if profile.is_bot:
        return profile.display_name + ("" if is_impersonation else YOU_SUFFIX)
    handles = choose_handles(profile, collisions)
    parts: list[str] = []
    if profile.mentionable and handles.primary:
        parts.append(MENTION_LABEL + handle(handles.primary))
    if handles.others:
        parts.append(ALIASES_LABEL + ", ".join(handle(v) for v in handles.others))
    if profile.mentionable and handles.needs_clarification:
        parts.append(CLARIFICATION)
    return f"{profile.display_name} ({'; '.join(parts)})" if parts else profile.display_name


def profile_headings(profiles: Sequence[HydratedParticipantProfile], *, is_impersonation: bool) -> list[str]:
    """R-07 headings of every profile, against the collision index of all of them."""
    collisions = output_collisions(profiles)
    return [profile_heading(p, collisions, is_impersonation=is_impersonation) for p in profiles]


def _system_block(body: str) -> str:
    return system_frame(f"{body}\n")


def render_profile_block(
    profiles: Sequence[HydratedParticipantProfile],
    task_lines: Sequence[str],
    *,
    bot_name: str,
    is_impersonation: bool,
    exclude_kinds: frozenset[str] = frozenset(),
    headings: Sequence[str] | None = None,
) -> str:
    """R-06: header, ping instruction, one entry per profile (status/presence excluded), tasks.
    ``headings`` (``profile_headings``) saves recomputing them for a second variant of the block."""
    if headings is None:
        headings = profile_headings(profiles, is_impersonation=is_impersonation)
    instruction = PING_INSTRUCTION_IMPERSONATION if is_impersonation else PING_INSTRUCTION.replace("{bot}", bot_name)
    text = f"{PROFILE_HEADER}\n\n{instruction}\n\n"
    for profile, heading in zip(profiles, headings, strict=True):
        lines = visible_lines(profile, exclude=STATUS_KINDS | exclude_kinds)
        text += "\n".join([heading, *lines])
        text += "\n\n"
    if task_lines:
        text += "\n".join(task_lines) + "\n\n"
    return _system_block(text.rstrip())


def render_presence_block(profiles: Sequence[HydratedParticipantProfile], *, is_impersonation: bool) -> str | None:
    """R-09: profiles with a visible status/presence line; None when there is none (R-01)."""
    entries: list[str] = []
    for profile in profiles:
        if not has_visible_field(profile, STATUS_KINDS):
            continue
        heading = profile.display_name + (YOU_SUFFIX if profile.is_bot and not is_impersonation else "")
        other_kinds = frozenset(f.kind for f in profile.fields) - STATUS_KINDS
        entries.append("\n".join([heading, *visible_lines(profile, exclude=other_kinds)]))
    if not entries:
        return None
    return _system_block(f"{PRESENCE_HEADER}\n\n" + "\n\n".join(entries))


def context_line(*, is_dm: bool, channel_name: str | None, channel_id: str | None) -> str:
    """R-10 first line."""
    if is_dm:
        return "Conversation context: Direct Message."
    line = f"Conversation context: #{(channel_name or '').lstrip('#')}"
    if channel_id:
        line += f" (ID: {channel_id})"
    return line + "."


def render_current_context_block(
    profiles: Sequence[HydratedParticipantProfile],
    clock: RenderClock,
    *,
    is_dm: bool,
    channel_name: str | None,
    channel_id: str | None,
) -> str:
    """R-10/R-12: channel line, server clock line, then local times of profiles with a visible
    timezone field."""
    time_line = f"Current time: {clock.current_time} ({clock.timezone_label}), {clock.time_of_day_phrase}."
    local = [
        f"\n- {profile.display_name}: {clock.local_times[profile.key]}"
        for profile in profiles
        if visible_field(profile, "timezone") is not None and profile.key in clock.local_times
    ]
    local_times = f"\n{LOCAL_TIMES_HEADER}" + "".join(local) if local else ""
    return _system_block(
        context_line(is_dm=is_dm, channel_name=channel_name, channel_id=channel_id) + "\n" + time_line + local_times
    )


def render_participant_prompt(
    profiles: Sequence[HydratedParticipantProfile],
    task_lines: Sequence[str],
    clock: RenderClock,
    *,
    bot_name: str,
    is_impersonation: bool,
    is_dm: bool,
    channel_name: str | None,
    channel_id: str | None,
) -> RenderedParticipantPrompt:
    """R-01..R-13: the three texts of the contributor (before mention conversion, R-15)."""
    headings = profile_headings(profiles, is_impersonation=is_impersonation)
    return RenderedParticipantPrompt(
        profile_text=render_profile_block(
            profiles, task_lines, bot_name=bot_name, is_impersonation=is_impersonation, headings=headings
        ),
        presence_text=render_presence_block(profiles, is_impersonation=is_impersonation),
        current_context_text=render_current_context_block(
            profiles, clock, is_dm=is_dm, channel_name=channel_name, channel_id=channel_id
        ),
        profile_text_without_memories=render_profile_block(
            profiles,
            task_lines,
            bot_name=bot_name,
            is_impersonation=is_impersonation,
            exclude_kinds=frozenset({"personal_memories"}),
            headings=headings,
        ),
    )
