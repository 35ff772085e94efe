"""Placeholder filling (issue-32 review F11): one Django-free grammar, ``personas.values.placeholders``, that
the prompt's mention pass is built from and the console's memory text uses, with no start-up registry."""

from __future__ import annotations

import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.participants.mentions import MentionDirectory, convert_mentions
from personas.values.placeholders import fill_placeholders

PIECES = st.sampled_from(["{user}", "{bot}", "{{char}}", "{USER_TERM}", "@{user}", "{users}", "{", "}", " ", "x", "\n"])
NAMES = st.lists(st.sampled_from(["{bot}", "{user}", "M", "i", "@", " "]), max_size=6).map("".join)


@given(st.lists(PIECES, max_size=20).map("".join), NAMES, NAMES)
def test_memory_text_is_filled_as_the_prompt_fills_it(text: str, user: str, persona: str) -> None:
    prompt = convert_mentions(text, user or "User", persona, True, directory=MentionDirectory())
    assert fill_placeholders(text, user or "User", persona) == prompt


def test_a_name_reading_a_placeholder_is_not_filled_again() -> None:
    assert fill_placeholders("{user} greets {bot}", "{bot}", "Tomori") == "{bot} greets Tomori"
    assert fill_placeholders("@{user} and {{user_formatted}}", "Mina", "Tomori") == "@{user} and Mina"


def test_filling_needs_neither_django_nor_a_ready_app() -> None:
    code = (
        "import sys; from personas.values.placeholders import fill_placeholders as f; "
        "assert f('{bot} knows {user}', 'Mina', 'Tomori') == 'Tomori knows Mina'; "
        "assert not any(m == 'django' or m.startswith('django.') for m in sys.modules)"
    )
    subprocess.run([sys.executable, "-c", code], check=True, env={"PYTHONPATH": "."})
