"""The provider's error message as a record keeps it: bounded, one line, keys removed (issue 27 item 5)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bot.conversation.providers.openai_compat import ERROR_MESSAGE_CHARS, REDACTED, provider_message

KEY = "sk-proj-Zx81Kq0aPLm3"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        # OpenAI and llama.cpp: the SDK hands over the "error" object.
        ({"message": "No model `x`", "type": "invalid_request_error", "code": 404}, "No model `x`"),
        # Older vLLM: the error at the top level, with "object": "error".
        ({"object": "error", "message": "The model `x` does not exist.", "code": 404}, "The model `x` does not exist."),
        ({"detail": "Not Found"}, "Not Found"),  # FastAPI-based servers
        ("upstream connect error\n", "upstream connect error"),  # a proxy's plain text
        ({"detail": [{"loc": ["body"], "input": "the prompt"}]}, ""),  # a validation list echoes input: dropped
        (None, ""),
    ],
)
def test_the_message_is_read_where_each_server_puts_it(body, message):
    assert provider_message(body) == message


def test_key_shaped_words_are_removed_and_model_names_stay():
    text = (
        "Bearer abc.def key sk-or-v1-0f3a and gsk_live_9 and hf_AbCdEf and AIzaSyD-x and "
        "0123456789abcdef0123456789abcdef for model Meta-Llama-3.1-8B-Instruct-Q4_K_M-GGUF-imatrix"
    )
    assert provider_message({"message": text}) == (
        f"{REDACTED} key {REDACTED} and {REDACTED} and {REDACTED} and {REDACTED} and "
        f"{REDACTED} for model Meta-Llama-3.1-8B-Instruct-Q4_K_M-GGUF-imatrix"
    )


@given(st.text(), st.text(), st.text())
def test_any_message_comes_back_as_one_bounded_printable_line_without_the_key(before, after, noise):
    line = provider_message({"message": f"{before}{KEY}{noise}{after}"}, api_key=KEY)

    assert len(line) <= ERROR_MESSAGE_CHARS
    assert KEY not in line
    assert line == line.strip() and "  " not in line
    assert not any(ord(c) < 0x20 or 0x7F <= ord(c) <= 0x9F or 0xD800 <= ord(c) <= 0xDFFF for c in line)
