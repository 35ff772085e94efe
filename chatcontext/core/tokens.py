"""Token counts of a prompt with a maintained tokenizer that works offline.

tiktoken counts; its ``cl100k_base`` encoding ships in ``chatcontext/core/encodings/`` (tiktoken would
download it on first use, which an installation without outside network cannot do). The models a
server talks to have tokenizers of their own, so a count here is an estimate that the context budget
scales by what the provider reported (``chatcontext.core.budget``), never the truth a record stores.
Records, the inspector and lorebook budgets keep the provider-neutral estimate (``estimate_tokens``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import cache
from pathlib import Path

import tiktoken
from tiktoken.load import load_tiktoken_bpe

from chatcontext.core.types import ContextItem

ENCODING_FILE = Path(__file__).resolve().parent / "encodings" / "cl100k_base.tiktoken"
ENCODING_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"
# tiktoken_ext.openai_public's cl100k_base split pattern and special tokens (tiktoken 0.14).
_PATTERN = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+|\s++$|\s*[\r\n]|"""
    r"""\s+(?!\S)|\s"""
)
_SPECIAL = {
    "<|endoftext|>": 100257,
    "<|fim_prefix|>": 100258,
    "<|fim_middle|>": 100259,
    "<|fim_suffix|>": 100260,
    "<|endofprompt|>": 100276,
}
# What an OpenAI-style chat template adds around each message (role and separators) and once to
# prime the reply: OpenAI's published accounting for its chat models.
TOKENS_PER_MESSAGE = 4
TOKENS_PER_REPLY = 3


@cache
def encoding() -> tiktoken.Encoding:
    """Loaded once per process (about 0.2 s): the ranks file, checked against its hash."""
    ranks = load_tiktoken_bpe(str(ENCODING_FILE), expected_hash=ENCODING_SHA256)
    return tiktoken.Encoding(name="cl100k_base", pat_str=_PATTERN, mergeable_ranks=ranks, special_tokens=_SPECIAL)


def count_text(text: str) -> int:
    """Tokens of ``text``; special-token spellings in it are counted as the plain text they are."""
    return len(encoding().encode_ordinary(text))


def count_item(item: ContextItem) -> int:
    """One chat message: its text and the template's per-message tokens (empty items are not sent)."""
    text = item.text
    return count_text(text) + TOKENS_PER_MESSAGE if text.strip() else 0


def count_items(items: Sequence[ContextItem]) -> int:
    return sum(count_item(item) for item in items) + TOKENS_PER_REPLY


def estimate_tokens(text: str) -> int:
    """The provider-neutral estimate: one token per four characters, rounded up."""
    return math.ceil(len(text) / 4)
