"""Impersonation identity (build-context.md §7.2, BC7-03/04).

On an impersonation turn the model writes the next message *as a user*. This module resolves that
user's display name and prompt from rows the shell already loaded; it does no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from chatcontext.core.types import Author, ChatIncoming, MemberInfo, UserRow

FALLBACK_NAME = "User"


@dataclass(frozen=True)
class ImpersonationIdentity:
    user_id: str
    nickname: str
    prompt: str | None = None


def _first_non_blank(*values: str | None) -> str | None:
    for value in values:
        if value and value.strip():
            return value.strip()
    return None


def resolve_impersonation(
    incoming: ChatIncoming,
    *,
    user_row: UserRow | None,
    member: MemberInfo | None = None,
    user: Author | None = None,
    history_user_labels: Mapping[str, str] | None = None,
) -> ImpersonationIdentity | None:
    """BC7-03: None unless `is_user_impersonation` and `impersonated_user_id` are both set.

    Name ladder: member display name, user display name, global name, username, the row's saved
    `user_nickname`, `User`; the history naming projection's label (BC7-07) overrides all of them.
    """
    user_id = incoming.impersonated_user_id
    if not incoming.is_user_impersonation or not user_id:
        return None
    nickname = (
        _first_non_blank(
            member.display_name or member.nickname if member else None,
            user.display_name if user else None,
            (user.global_name if user else None) or (member.global_name if member else None),
            (user.username if user else None) or (member.username if member else None),
            user_row.user_nickname if user_row else None,
        )
        or FALLBACK_NAME
    )
    label = (history_user_labels or {}).get(user_id)
    return ImpersonationIdentity(
        user_id=user_id,
        nickname=label.strip() if label and label.strip() else nickname,
        prompt=user_row.impersonation_prompt if user_row else None,
    )


def impersonation_tail_directive(name: str | None) -> str:
    """BC7-04: the builder's tail directive on impersonation turns."""
    display = (name or "").strip() or FALLBACK_NAME
    return f"Imitate {display}, start your message with {display}:"
