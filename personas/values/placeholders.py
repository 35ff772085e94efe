"""The placeholders a persona's texts may hold (participants.md R-14): `{bot}`/`{char}`, `{user}`,
`{user_formatted}`, `{user_term}`, single or doubled, any case; and filling them.

Free of Django: the pure pipeline builds its one-pass mention regex from this grammar
(``chatcontext.core.participants.mentions``), and ``personas.memory_text`` fills memories with it for the
pages people read, so a prompt and a page read a memory by the same rule.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

_NAMES = r"bot|char|user_formatted|user_term|user"
# Groups ``double`` and ``single`` hold the name. A handle such as `@{user}` is a name, never a placeholder.
PATTERN = rf"(?<!@)\{{\{{(?P<double>{_NAMES})\}}\}}|(?<!@)\{{(?P<single>{_NAMES})\}}"
_PLACEHOLDER = regex.compile(PATTERN, regex.IGNORECASE)


@dataclass(frozen=True)
class Placeholders:
    """R-14 bindings of `{bot}`/`{char}`, `{user}`, `{user_formatted}`, `{user_term}`."""

    bot_name: str
    user_name: str = "User"
    user_formatted: str | None = None
    user_term: str | None = None

    def value(self, name: str) -> str:
        name = name.lower()
        if name in {"bot", "char"}:
            return self.bot_name
        if name == "user_formatted":
            return self.user_formatted or self.user_name
        if name == "user_term":
            return self.user_term or self.user_formatted or self.user_name
        return self.user_name

    def bound(self, match: regex.Match[str]) -> str:
        """The value of a match of ``PATTERN``."""
        return self.value(match.group("double") or match.group("single"))


def fill_placeholders(text: str, user: str, persona: str) -> str:
    """``text`` with its placeholders filled, in one pass (a name that reads `{bot}` stays as it is)."""
    return _PLACEHOLDER.sub(Placeholders(persona, user).bound, text)
