"""The preset tests run on the demo server (tests/bot/playground/conftest.py): Tomori (main) and Pip (alter)."""

from tests.bot.playground.conftest import demo, offline_llm, uploads_dir  # noqa: F401
from tests.personas.presets.turns import llm  # noqa: F401
