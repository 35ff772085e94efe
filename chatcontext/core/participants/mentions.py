"""Mention conversion of participant texts (participants.md R-14, P-07).

``convert_mentions`` is pure: it reads a ``MentionDirectory`` snapshot. ``extend_directory`` is the
imperative edge that fills the directory for ids found in texts (one targeted Discord read per
unknown id; no SQL). Texts are converted in a single regex pass so a replacement (a nickname that
happens to read ``{bot}``) is never converted again.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Protocol, TypeVar

import regex

from chatcontext.core.types import MemberInfo
from personas.values.placeholders import PATTERN as PLACEHOLDER_PATTERN
from personas.values.placeholders import Placeholders

logger = logging.getLogger(__name__)
T = TypeVar("T")

_TOKENS = regex.compile(
    r"(?P<link>https?://(?:(?:ptb|canary|www)\.)?discord(?:app)?\.com/channels/(?:\d+|@me)/(?P<link_id>\d+))(?![\d/])"
    r"|<@&(?P<role>\d+)>"
    r"|<@!?(?P<user>\d+)>"
    r"|<#(?P<channel>\d+)>"
    # The placeholders, in the same pass: a replacement is never read again.
    rf"|{PLACEHOLDER_PATTERN}",
    regex.IGNORECASE,
)


@dataclass(frozen=True)
class MentionTarget:
    """What a `<@id>` may become. ``saved_nickname`` is set only when P-02 allows its use (P-07)."""

    saved_nickname: str | None = None
    server_nickname: str | None = None
    username: str | None = None


@dataclass
class MentionDirectory:
    """Snapshot of names for one turn's conversions (ids → labels)."""

    bot_user_id: str | None = None
    bot_display_name: str | None = None
    users: dict[str, MentionTarget] = field(default_factory=dict)
    channels: dict[str, str] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)
    # Ids already looked up without a result, so a second extension does not ask again.
    unknown: set[str] = field(default_factory=set)


def _user_label(user_id: str, directory: MentionDirectory, bot_name: str, personalization_enabled: bool) -> str | None:
    if directory.bot_user_id and user_id == directory.bot_user_id:
        return directory.bot_display_name or bot_name
    target = directory.users.get(user_id)
    if target is None:
        return None
    if personalization_enabled and target.saved_nickname:
        return target.saved_nickname
    return target.server_nickname or target.username


def convert_mentions(
    text: str,
    triggerer_name: str | None,
    bot_name: str,
    personalization_enabled: bool,
    *,
    directory: MentionDirectory,
    triggerer_formatted_name: str | None = None,
    triggerer_address_term: str | None = None,
) -> str:
    """R-14: permalinks → `<#id>` (then its label), `<@id>` → bot / saved nickname (P-07) / server
    nickname / username, `<#id>` → channel label, `<@&id>` → `@Role`, placeholders → bindings.

    Unknown ids keep their token. Text without any token is returned unchanged.
    """
    if not may_hold_tokens(text):
        return text
    placeholders = Placeholders(bot_name, triggerer_name or "User", triggerer_formatted_name, triggerer_address_term)

    def replace(match: regex.Match[str]) -> str:
        if match.group("link") is not None:
            channel_id = match.group("link_id")
            return directory.channels.get(channel_id, f"<#{channel_id}>")
        if match.group("role") is not None:
            name = directory.roles.get(match.group("role"))
            return f"@{name}" if name else match.group(0)
        if match.group("user") is not None:
            label = _user_label(match.group("user"), directory, bot_name, personalization_enabled)
            return label if label else match.group(0)
        if match.group("channel") is not None:
            return directory.channels.get(match.group("channel"), match.group(0))
        return placeholders.bound(match)

    pieces: list[str] = []
    done = 0
    for start, end in _token_lines(text):
        pieces += [text[done:start], _TOKENS.sub(replace, text[start:end])]
        done = end
    pieces.append(text[done:])
    return "".join(pieces)


def _token_lines(text: str) -> list[tuple[int, int]]:
    """Start and end of each line of ``text`` holding a token hint, in order. No token spans a line
    break, and a line break satisfies every boundary a token's ends look at, so these lines hold the
    tokens of the text, alone as in it: a rendered profile block is tens of kilobytes with a few
    tokens, and the regex pass over all of it was most of its conversion."""
    lines: list[tuple[int, int]] = []
    done = -1
    for at in _token_hints(text):
        if at < done:
            continue
        start = text.rfind("\n", 0, at) + 1
        done = text.find("\n", at)
        done = len(text) if done == -1 else done
        lines.append((start, done))
    return lines


def _token_hints(text: str) -> list[int]:
    """Ascending positions of what every token holds (``may_hold_tokens``), by string search: both
    regex engines are several times slower on a long text."""
    found: list[int] = []
    for literal in ("<", "://"):
        at = text.find(literal)
        while at != -1:
            found.append(at)
            at = text.find(literal, at + 1)
    if text.count("{") > text.count("@{"):
        at = text.find("{")
        while at != -1:
            if at == 0 or text[at - 1] != "@":
                found.append(at)
            at = text.find("{", at + 1)
    return sorted(found)


def may_hold_tokens(text: str) -> bool:
    """Every token of ``_TOKENS`` holds `<`, `://` or a `{` not right after `@`: without them a text
    has none, and most texts of a turn (memories, messages, profile headings with their `@{handle}`s)
    have none, so the regex pass is skipped for them."""
    return "<" in text or "://" in text or text.count("{") > text.count("@{")


def mention_ids(texts: Iterable[str]) -> tuple[set[str], set[str], set[str]]:
    """User, channel and role ids referenced by mention tokens or permalinks in ``texts``."""
    users: set[str] = set()
    channels: set[str] = set()
    roles: set[str] = set()
    for text in texts:
        for start, end in _token_lines(text):
            for match in _TOKENS.finditer(text, start, end):
                if match.group("user"):
                    users.add(match.group("user"))
                elif match.group("channel") or match.group("link_id"):
                    channels.add(match.group("channel") or match.group("link_id"))
                elif match.group("role"):
                    roles.add(match.group("role"))
    return users, channels, roles


class MentionLookups(Protocol):
    def load_member(self, disc_id: str) -> MemberInfo | None: ...

    def channel_label(self, channel_id: str) -> str | None: ...

    def role_name(self, role_id: str) -> str | None: ...


def _lookup(read: Callable[[str], T | None], ident: str) -> T | None:
    try:
        return read(ident)
    except Exception:  # a failed optional name lookup keeps the raw token
        logger.warning("participant mention lookup failed")
        return None


def extend_directory(directory: MentionDirectory, texts: Iterable[str], lookups: MentionLookups) -> None:
    """Resolve ids of ``texts`` the directory does not know yet (Discord reads only, no SQL).

    A user who is not a hydrated participant gets live names only: without the privacy and
    blacklist reads of hydration, a saved nickname cannot be proven allowed ([DES] P-07 fail closed).
    """
    users, channels, roles = mention_ids(texts)
    bot_id = directory.bot_user_id
    if bot_id and bot_id in users and directory.bot_display_name is None and bot_id not in directory.unknown:
        bot_member = _lookup(lookups.load_member, bot_id)
        if bot_member is None:
            directory.unknown.add(bot_id)
        else:
            directory.bot_display_name = bot_member.display_name or None
    for user_id in sorted(users - directory.users.keys() - directory.unknown - {bot_id or ""}):
        member = _lookup(lookups.load_member, user_id)
        if member is None:
            directory.unknown.add(user_id)
        else:
            directory.users[user_id] = MentionTarget(None, member.nickname or None, member.username or None)
    for channel_id in sorted(channels - directory.channels.keys() - directory.unknown):
        label = _lookup(lookups.channel_label, channel_id)
        if label:
            directory.channels[channel_id] = label
        else:
            directory.unknown.add(channel_id)
    for role_id in sorted(roles - directory.roles.keys() - directory.unknown):
        name = _lookup(lookups.role_name, role_id)
        if name:
            directory.roles[role_id] = name
        else:
            directory.unknown.add(role_id)
