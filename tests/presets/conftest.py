"""The preset tests run on the demo server (tests/playground/conftest.py): Tomori (main) and Pip (alter)."""

from tests.playground.conftest import demo, offline_llm, uploads_dir  # noqa: F401
