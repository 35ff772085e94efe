"""The import rule inside ``bot/`` (README, Architecture): ``bot.conversation`` is the turn with no
transport in it, and ``bot.discord`` and ``bot.playground`` are two surfaces over it. The surfaces
import the conversation, never each other, and the conversation imports neither them nor discord.py.
Read from the source (every ``import`` statement, also those inside functions), not by importing."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.paths import REPO_ROOT

BOT = REPO_ROOT / "bot"

# package → the top-level modules and packages its code may not import
FORBIDDEN = {
    "conversation": ("discord", "bot.discord", "bot.playground"),
    "discord": ("bot.playground",),
    "playground": ("discord", "bot.discord"),
}
# The one crossing allowed: the bot process claims every reminder but the playground channels', so it
# asks the playground which channels are its own (a query, no state; it replaced a start-up registry).
ALLOWED = {"bot.playground.reminder_scope"}


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def violations(package: str) -> list[str]:
    banned = FORBIDDEN[package]
    return sorted(
        f"{path.relative_to(BOT.parent)}: {module}"
        for path in (BOT / package).rglob("*.py")
        for module in imported_modules(path)
        if any(module == ban or module.startswith(ban + ".") for ban in banned)
        and not any(module == ok or module.startswith(ok + ".") for ok in ALLOWED)
    )


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_the_bot_packages_import_one_way(package: str) -> None:
    assert list((BOT / package).rglob("*.py")), package
    assert violations(package) == []


def test_the_rule_sees_an_import_inside_a_function(tmp_path: Path) -> None:
    source = tmp_path / "late.py"
    source.write_text("def f():\n    from bot.discord.delivery import split_message\n    import discord.ext\n")
    assert imported_modules(source) >= {"bot.discord.delivery", "discord.ext"}
