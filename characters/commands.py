"""What the card commands share: a bounded file read and the server lookup, each failing with one
line and exit status 2."""

from __future__ import annotations

from pathlib import Path

from django.core.management.base import CommandError, CommandParser

from characters.files import MAX_CARD_BYTES
from personas.management.commands.add_moderator import find_server
from personas.models import Server


def add_file_and_server(parser: CommandParser, file_help: str) -> None:
    parser.add_argument("file", help=file_help)
    parser.add_argument("--server", required=True, help="the server's Discord id (or its id in the admin)")


def refuse(message: str) -> CommandError:
    return CommandError(message, returncode=2)


def read_bounded(path: str) -> bytes:
    """The file's bytes; a file above ``MAX_CARD_BYTES`` is refused from its size, unread."""
    try:
        with Path(path).open("rb") as handle:
            data = handle.read(MAX_CARD_BYTES + 1)
    except OSError as exc:
        raise refuse(f"Cannot read {path}: {exc.strerror or exc}") from exc
    if len(data) > MAX_CARD_BYTES:
        raise refuse(f"{path} is larger than {MAX_CARD_BYTES // 1024 // 1024} MB: not a card or lorebook.")
    return data


def server_for(reference: str) -> Server:
    try:
        return find_server(reference)
    except CommandError as exc:
        raise refuse(str(exc)) from exc
