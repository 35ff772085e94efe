"""Who each Discord user is in the prompt (H-07..H-10, R-14, P-02, P-07): display name, naming,
aliases, and the names the turn's mention directory may give them."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from chatcontext.core.participants.aliases import UserNames
from chatcontext.core.participants.aliases import user_aliases as alias_candidates
from chatcontext.core.participants.mentions import MentionTarget, convert_mentions
from chatcontext.core.participants.model import ParticipantAlias
from chatcontext.core.participants.naming import (
    NamingPreference,
    base_display_name,
    live_name,
    persona_relative_name,
    saved_name_allowed,
)
from chatcontext.participants.hydration.state import HydrationRun, UserState


def resolve_identity(
    run: HydrationRun, user: UserState, preferences: Mapping[tuple[int, int], NamingPreference]
) -> None:
    """H-07..H-09 display name and naming of one user (``saved_name_use`` already set, P-02)."""
    if run.scope.is_user_impersonation:
        user.display_name = (run.impersonated_name if user.is_impersonated else None) or base_display_name(
            discord_id=user.disc_id,
            row=user.row,
            member=user.member,
            fallback_user=user.fallback,
            saved_name_use=user.saved_name_use,
        )
        return
    user.naming = persona_relative_name(
        row=user.row,
        live=live_name(user.member, user.fallback, user.disc_id),
        persona=run.persona,
        preference=preferences.get((user.row.user_id, run.lineage)),
        personalized=user.saved_name_use,
    )
    user.display_name = user.naming.formatted


def user_aliases(run: HydrationRun, user: UserState) -> list[ParticipantAlias]:
    """H-10: seed aliases + D-06 (saved nickname exposed per P-02) + impersonated identity + H-09."""
    member, fallback = user.member, user.fallback
    return [
        *user.seed.aliases,
        *alias_candidates(
            user.key,
            UserNames(
                saved_nickname=user.row.user_nickname,
                guild_display_name=member.display_name if member else None,
                guild_nickname=member.nickname if member else None,
                global_name=(member.global_name if member else None) or (fallback.global_name if fallback else None),
                username=(member.username if member else None) or (fallback.username if fallback else None),
                discord_id=user.disc_id,
            ),
            expose_saved_nickname=user.saved_name_use,
            impersonated_identity=run.impersonated_name if user.is_impersonated else None,
            effective_nickname=user.naming.nickname if user.naming else None,
            formatted_name=user.naming.formatted if user.naming else None,
        ),
    ]


def register_mention_targets(run: HydrationRun, users: Iterable[UserState]) -> None:
    """R-14/P-07: a participant's `<@id>` may show the saved nickname only with saved-name use."""
    for user in users:
        member, fallback = user.member, user.fallback
        run.directory.users[user.disc_id] = MentionTarget(
            saved_nickname=(user.row.user_nickname or "").strip() or None if user.saved_name_use else None,
            server_nickname=(member.nickname if member else None) or None,
            username=(member.username if member else None)
            or (fallback.username if fallback else None)
            or user.row.username
            or None,
        )
    snap = run.snapshot
    if snap.triggerer_id and snap.triggerer_id not in run.directory.users and snap.triggerer_row is not None:
        allowed = saved_name_allowed(
            personalization_enabled=run.personalization,
            blacklisted=snap.is_triggerer_blacklisted,
            privacy_level=snap.triggerer_privacy_level,
        )
        member = snap.preloaded_member
        run.directory.users[snap.triggerer_id] = MentionTarget(
            saved_nickname=(snap.triggerer_row.user_nickname or "").strip() or None if allowed else None,
            server_nickname=(member.nickname if member else None) or None,
            username=(member.username if member else None) or snap.triggerer_row.username or None,
        )


def convert(run: HydrationRun, text: str, user_name: str, bot_name: str) -> str:
    """R-14 for hydrated text (memories, public attributes), through the turn's one directory."""
    return convert_mentions(text, user_name, bot_name, run.personalization, directory=run.directory)
