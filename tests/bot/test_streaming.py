"""Replies stream into Discord (issue 18; ``bot.discord.reply_stream``), driven by dpytest with the
bot's pacing on a test clock: the provider advances it as it writes, nothing sleeps."""

from __future__ import annotations

from collections.abc import Sequence

import discord
import discord.ext.test as dpytest
import pytest
from discord.ext.test import backend

from bot.conversation.providers import DeltaSink, GenerationResult, ProviderError
from bot.conversation.texts import ERROR_MESSAGES
from bot.discord.delivery import split_message
from bot.discord.reply_stream import Pacing, worth_showing
from chatcontext.core.types import ContextItem
from chatcontext.models import PromptRecord
from personas import models as m
from tests.bot.fakes import run_db, setup_server

pytestmark = pytest.mark.django_db(transaction=True)

SECONDS_PER_PIECE = 0.05
CODE = "\n".join(f"    value_{i:04d} = compute({i}) + offset  # step {i}" for i in range(101))
LONG_REPLY = "Here is the script you asked for.\n```python\n" + CODE + "\n```\nThat should do it."


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class StreamingProvider:
    """Writes ``text`` in 10-character pieces, the clock moving on with each; with ``fail_after``
    it raises after that many pieces, as a provider dropping mid-stream does."""

    name, model_name = "streaming", "streaming"

    def __init__(self, text: str, clock: FakeClock, *, fail_after: int | None = None) -> None:
        self.text, self.clock, self.fail_after = text, clock, fail_after
        self.visible_while_writing = False

    async def generate(
        self, items: Sequence[ContextItem], *, stream: bool, on_delta: DeltaSink | None = None
    ) -> GenerationResult:
        pieces = [self.text[i : i + 10] for i in range(0, len(self.text), 10)]
        for count, piece in enumerate(pieces):
            if self.fail_after is not None and count == self.fail_after:
                raise ProviderError("provider returned HTTP 500")
            if on_delta is not None:
                await on_delta(piece)
            self.clock.now += SECONDS_PER_PIECE
            self.visible_while_writing |= bool(bot_messages())
        return GenerationResult(self.text)


def bot_messages() -> list[dict]:
    """The bot account's messages standing in the channel (dpytest's history), oldest first."""
    config = dpytest.get_config()
    bot_id = config.client.user.id
    return [d for d in backend._cur_config.messages.get(config.channels[0].id, []) if int(d["author"]["id"]) == bot_id]


@pytest.fixture
def clocked(harness):
    clock = FakeClock()
    harness.bot.pacing = Pacing(interval_s=1.0, clock=clock)
    return clock


@pytest.fixture
def edits(monkeypatch):
    counted: list[int] = []
    patched = discord.Message.edit  # the harness's in-place edit

    async def edit(self: discord.Message, **fields):  # type: ignore[no-untyped-def]
        # Edits of the text as it streams; the Regenerate button put on a finished reply
        # (bot.discord.regenerate_button) changes no text.
        if "content" in fields:
            counted.append(self.id)
        return await patched(self, **fields)

    monkeypatch.setattr(discord.Message, "edit", edit)
    return counted


def use(harness, provider) -> None:  # type: ignore[no-untyped-def]
    harness.bot.runner.provider_factory = lambda config, name: provider


def fences_balanced(content: str) -> bool:
    return len([line for line in content.split("\n") if line.strip().startswith("```")]) % 2 == 0


async def test_a_long_streamed_reply_is_edited_a_bounded_number_of_times_and_ends_as_split_message_cuts_it(
    harness, clocked, edits
):
    await run_db(setup_server, harness.guild)
    provider = StreamingProvider(LONG_REPLY, clocked)
    use(harness, provider)

    await dpytest.message("tomori, write me a script", member=harness.member(0))

    final = split_message(LONG_REPLY)
    assert len(final) == 3
    assert [d["content"] for d in bot_messages()] == final  # exactly split_message's pieces, in order
    assert all(len(p) <= 2000 and fences_balanced(p) for p in final)
    assert provider.visible_while_writing  # the first message came before the reply was complete
    pieces_written = -(-len(LONG_REPLY) // 10)
    duration_s = pieces_written * SECONDS_PER_PIECE
    # At most one update per second, each editing at most the last two posts, and the final edit.
    assert len(edits) <= 2 * (duration_s / 1.0 + 1) + len(final)
    assert 0 < len(edits) < pieces_written // 5  # edited as it grew, far less often than it was written
    [record] = [r async for r in PromptRecord.objects.all()]
    assert record.reply_text == LONG_REPLY


async def test_a_provider_failure_mid_stream_leaves_one_notice_not_a_half_message(harness, clocked):
    await run_db(setup_server, harness.guild)
    provider = StreamingProvider(LONG_REPLY, clocked, fail_after=60)
    use(harness, provider)

    await dpytest.message("tomori, write me a script", member=harness.member(0))

    assert provider.visible_while_writing  # something had been shown ...
    assert [d["content"] for d in bot_messages()] == [ERROR_MESSAGES["en-US"]]  # ... and only the notice stands
    [record] = [r async for r in PromptRecord.objects.all()]
    assert record.error == "provider returned HTTP 500" and record.reply_text == ""


async def test_an_alter_streams_through_the_webhooks_edit_endpoint(harness, clocked):
    await run_db(setup_server, harness.guild)
    text = "Rain is lovely. " * 40
    use(harness, StreamingProvider(text, clocked))

    await dpytest.message("ellen, what do you think of the rain?", member=harness.member(0))

    hook = harness.webhooks.hooks[harness.channel.id]
    [send] = hook.standing
    assert send.username == "Ellen" and send.content == text.strip()
    assert send.edits >= 1
    assert bot_messages() == []


async def test_with_streaming_off_the_reply_is_posted_once_complete(harness, clocked, edits):
    await run_db(setup_server, harness.guild)
    await run_db(
        lambda: m.ServerSettings.objects.filter(server__server_disc_id=str(harness.guild.id)).update(
            stream_replies=False
        )
    )
    provider = StreamingProvider(LONG_REPLY, clocked)
    use(harness, provider)

    await dpytest.message("tomori, write me a script", member=harness.member(0))

    assert not provider.visible_while_writing and edits == []
    assert [d["content"] for d in bot_messages()] == split_message(LONG_REPLY)


def test_the_first_message_waits_for_about_a_sentence():
    pacing = Pacing()
    assert not worth_showing("Well", pacing)
    assert not worth_showing("Hi. ", pacing)  # too short to be worth a message
    assert worth_showing("Well, that is a good question. ", pacing)
    assert worth_showing("x" * pacing.first_chars, pacing)
