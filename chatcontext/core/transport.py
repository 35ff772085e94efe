"""What the Build Context stage reads from Discord, as a small synchronous protocol.

Two implementations: ``bot.discord.transport`` over a live discord.py client (it bridges to the
event loop with ``async_to_sync``) and ``chatcontext.snapshot.SnapshotTransport`` over a turn
snapshot. The stage never imports discord.py.
"""

from __future__ import annotations

from typing import Protocol

from chatcontext.core.types import Author, DiscordMessage, MemberInfo, Reaction


class TransportError(Exception):
    """A Discord read failed (missing message, HTTP error, timeout). Callers degrade, never crash."""


class ChatTransport(Protocol):
    @property
    def supports_history(self) -> bool:
        """False for channels without a message manager (BC2-02): history is the trigger only."""

    @property
    def guild_available(self) -> bool:
        """False in DMs or when the guild is not cached (participants.md D-15)."""

    @property
    def presence_intent(self) -> bool:
        """Whether member presence is known at all (participants.md H-12)."""

    def fetch_history(self, limit: int) -> list[DiscordMessage]:
        """The latest ``limit`` messages of the channel, **newest first** (as Discord returns them)."""

    def get_cached_message(self, message_id: str) -> DiscordMessage | None:
        """A message already known without I/O (the fetched window or a client cache)."""

    def fetch_message(self, message_id: str) -> DiscordMessage:
        """One message by id; raises TransportError when it cannot be read."""

    def fetch_reaction_users(self, message: DiscordMessage, reaction: Reaction, limit: int) -> list[Author]:
        """Up to ``limit`` users who reacted; raises TransportError on failure."""

    def get_cached_member(self, user_id: str) -> MemberInfo | None:
        """A guild member from the cache, no I/O."""

    def fetch_member(self, user_id: str) -> MemberInfo | None:
        """A targeted fetch of one member (never the full list); None when not a member."""

    def cached_member_ids(self) -> list[str]:
        """Ids of the members currently cached (participants.md D-16)."""

    def fetch_user(self, user_id: str) -> Author | None:
        """The plain user object, for names of people who are not members (H-04)."""

    def channel_label(self, channel_id: str) -> str | None:
        """`#name` of a channel of this guild, or None when unknown (R-14)."""

    def role_name(self, role_id: str) -> str | None:
        """The name of a role of this guild, or None when unknown (R-14)."""
