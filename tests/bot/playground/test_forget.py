"""Forget-me reaches the playground (issue 5 forget-me, issue 8 stored channels): after
``community.forget.forget_user`` no text column of any model holds what the user wrote in a
playground channel, their uploads are gone and their reactions are taken back; other people's
messages stay."""

from __future__ import annotations

from django.core.files.uploadedfile import SimpleUploadedFile

from bot.playground import store
from bot.playground.models import PlaygroundMessage
from chatcontext.models import PromptRecord, VoiceTranscript
from chatcontext.voice.cache import shared_cache
from community.forget import forget_user
from tests.actors import TEST_ACTOR
from tests.bot.playground.conftest import JUN, MINA
from tests.bot.playground.turns import post
from tests.chatcontext.records.traces import traces

MINA_SAYS = "my cat is called Professor Whiskers"
MINA_VOICE = "transcript of the cat song"
JUN_SAYS = "the vending machine eats coins"


def test_forget_me_removes_a_users_playground_messages_replies_uploads_transcripts_and_reactions(
    demo, uploads_dir, django_capture_on_commit_callbacks
):
    jun = post(demo, JUN, f"{demo.mention()} {JUN_SAYS}")
    photo = SimpleUploadedFile("cat.png", b"\x89PNG-cat", "image/png")
    mina = post(demo, MINA, f"{demo.mention()} {MINA_SAYS}", attachments=[photo])
    shared_cache.put(mina.message.disc_id, MINA_VOICE, "user_stt", now_ms=0)
    store.toggle_reaction(jun.message, "🦉", MINA)
    assert traces(MINA_SAYS) and traces(MINA_VOICE) and (uploads_dir / mina.message.disc_id).is_dir()

    with django_capture_on_commit_callbacks(execute=True):  # the files go once the deletion commits
        result = forget_user(MINA, actor=TEST_ACTOR)

    assert result.channel_messages == 2  # her message and the echo reply that quoted it
    assert traces(MINA_SAYS) == set() and traces(MINA_VOICE) == set()
    assert not (uploads_dir / mina.message.disc_id).exists()
    assert PlaygroundMessage.objects.get(pk=jun.message.pk).reactions == []
    assert not VoiceTranscript.objects.filter(message_disc_id=mina.message.disc_id).exists()
    assert not PromptRecord.objects.filter(pk__in=[r.pk for r in mina.records]).exists()
    kept = list(PlaygroundMessage.objects.values_list("content", flat=True))
    assert len(kept) == 2 and JUN_SAYS in kept[0] and JUN_SAYS in kept[1]
