"""A real `ChatTransport` over in-memory data: turn snapshots and tests use it instead of Discord.

`messages` is the channel, oldest first; `fetch_history` answers newest first like Discord.
`extra_messages` can be fetched by id but are outside the window (reply targets, forward origins).
Reactor ids (`Reaction.users`) resolve to users through `members`, then `users`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from chatcontext.core.transport import TransportError
from chatcontext.core.types import Author, DiscordMessage, MemberInfo, Reaction


def member_as_author(member: MemberInfo) -> Author:
    return Author(
        id=member.user_disc_id,
        username=member.username,
        global_name=member.global_name,
        display_name=member.display_name or member.nickname,
        bot=member.is_bot,
    )


@dataclass(frozen=True)
class TransportCapabilities:
    """What the channel offers (``ChatTransport``'s flags): a history to fetch, a guild (none in a DM),
    the presence intent."""

    supports_history: bool = True
    guild_available: bool = True
    presence_intent: bool = True


@dataclass(frozen=True)
class TransportFailures:
    """Reads that raise ``TransportError``: fetching these messages, and their reaction users."""

    message_ids: Iterable[str] = ()
    reaction_message_ids: Iterable[str] = ()


class InMemoryTransport:
    def __init__(
        self,
        messages: Iterable[DiscordMessage],
        *,
        extra_messages: Iterable[DiscordMessage] = (),
        members: Iterable[MemberInfo] = (),
        users: Iterable[Author] = (),
        channels: Mapping[str, str] | None = None,
        roles: Mapping[str, str] | None = None,
        capabilities: TransportCapabilities = TransportCapabilities(),
        failures: TransportFailures = TransportFailures(),
    ) -> None:
        self._window = list(messages)
        self._cached = {m.id: m for m in self._window}
        self._fetchable = {**{m.id: m for m in extra_messages}, **self._cached}
        self._members = {m.user_disc_id: m for m in members}
        self._users = {u.id: u for u in users}
        self._channels = dict(channels or {})
        self._roles = dict(roles or {})
        self._supports_history = capabilities.supports_history
        self._guild_available = capabilities.guild_available
        self._presence_intent = capabilities.presence_intent
        self._failing = set(failures.message_ids)
        self._failing_reactions = set(failures.reaction_message_ids)
        # Calls per method, so tests and diagnostics can count Discord reads.
        self.calls: Counter[str] = Counter()

    @property
    def supports_history(self) -> bool:
        return self._supports_history

    @property
    def guild_available(self) -> bool:
        return self._guild_available

    @property
    def presence_intent(self) -> bool:
        return self._presence_intent

    def fetch_history(self, limit: int) -> list[DiscordMessage]:
        self.calls["fetch_history"] += 1
        return list(reversed(self._window))[: max(0, limit)]

    def get_cached_message(self, message_id: str) -> DiscordMessage | None:
        return self._cached.get(message_id)

    def fetch_message(self, message_id: str) -> DiscordMessage:
        self.calls["fetch_message"] += 1
        found = self._fetchable.get(message_id)
        if found is None or message_id in self._failing:
            raise TransportError("message unavailable")
        return found

    def fetch_reaction_users(self, message: DiscordMessage, reaction: Reaction, limit: int) -> list[Author]:
        self.calls["fetch_reaction_users"] += 1
        if message.id in self._failing_reactions:
            raise TransportError("reaction users unavailable")
        found = (self._user(uid) for uid in (reaction.users or ())[: max(0, limit)])
        return [user for user in found if user is not None]

    def _user(self, user_id: str) -> Author | None:
        member = self._members.get(user_id)
        return member_as_author(member) if member is not None else self._users.get(user_id)

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        return self._members.get(user_id) if self._guild_available else None

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        self.calls["fetch_member"] += 1
        return self._members.get(user_id) if self._guild_available else None

    def cached_member_ids(self) -> list[str]:
        return list(self._members) if self._guild_available else []

    def fetch_user(self, user_id: str) -> Author | None:
        self.calls["fetch_user"] += 1
        return self._user(user_id)

    def channel_label(self, channel_id: str) -> str | None:
        name = self._channels.get(channel_id)
        return f"#{name}" if name is not None else None

    def role_name(self, role_id: str) -> str | None:
        return self._roles.get(role_id)
