"""Direct media and hints (BC3-15..20, BC3-23; scenarios 31–33)."""

from __future__ import annotations

from dataclasses import replace

from chatcontext.core.transcripts import MemoryTranscriptCache
from chatcontext.core.types import Attachment, StickerRef
from tests.chatcontext.builders import ANN, BOB, NOW, SERVER, msg, png, run_history


def audio(name: str = "v.ogg", content_type: str | None = "audio/ogg") -> Attachment:
    return Attachment(id="au1", name=name, url=f"https://cdn.example/{name}", content_type=content_type)


def test_s31_bc3_18_file_hint_registers_a_media_key() -> None:
    pdf = Attachment(id="f1", name="notes.pdf", url="https://cdn.example/notes.pdf", content_type="application/pdf")
    run = run_history([msg("m1", ANN, "see attached", attachments=(pdf,))])
    assert run.entries[0].content == (
        "see attached [System: A file named `notes.pdf` is attached (message ID: media_1). "
        "Use `read_file` with this message ID to read its contents, only if needed.]"
    )
    assert run.id_map.resolve("media_1") == "m1"


def _cache_with(transcript: str, source: str = "user_stt") -> MemoryTranscriptCache:
    cache = MemoryTranscriptCache()
    cache.put("m1", transcript, source, now_ms=NOW)  # type: ignore[arg-type]
    return cache


def test_s32_bc3_18_voice_transcript_rendering() -> None:
    off = replace(SERVER, voice_transcript_chat_mode=False)
    voice = msg("m1", ANN, "", attachments=(audio(),))
    run = run_history([voice], server=off, cache=_cache_with("hi there"))
    assert run.entries[0].content == "[System: This was sent as a voice message.]\nhi there"
    run = run_history([voice], server=off)
    assert run.entries[0].content == "[System: An audio file named `v.ogg` was sent here but was not transcribed.]"
    run = run_history([voice], server=replace(SERVER, voice_transcript_chat_mode=True), cache=_cache_with("hi"))
    assert run.entries == []
    assert run.result.exclusions == [{"message_id": "m1", "author_id": ANN.id, "reason": "dropped_empty"}]


def test_bc3_18_unset_chat_mode_renders_transcripts() -> None:
    """[QUIRK] BC3-18 vs BC11-01 decision: one default; unset means transcripts are rendered."""
    run = run_history([msg("m1", ANN, "", attachments=(audio(),))], cache=_cache_with("hello"))
    assert run.entries[0].content == "[System: This was sent as a voice message.]\nhello"


def test_bc11_02_tts_captions_are_not_rendered() -> None:
    run = run_history([msg("m1", ANN, "", attachments=(audio(),))], cache=_cache_with("a caption", "tts"))
    assert run.entries[0].content == "[System: An audio file named `v.ogg` was sent here but was not transcribed.]"


def test_bc11_01_audio_detection_ignores_video_container_names() -> None:
    """[QUIRK] BC11-01 decision: `.mp4`/`.webm` are audio only when the declared type says so."""
    clip = Attachment(id="c", name="clip.webm", url="https://cdn.example/clip.webm", content_type=None)
    mp3 = audio("song.mp3", None)
    voice_mp4 = audio("memo.mp4", "audio/mp4")
    run = run_history([msg("m1", ANN, "", attachments=(clip, mp3, voice_mp4))])
    entry = run.entries[0]
    assert [v.filename for v in entry.video_attachments] == ["clip.webm"]
    assert entry.content == (
        "[System: An audio file named `song.mp3` was sent here but was not transcribed.] "
        "[System: An audio file named `memo.mp4` was sent here but was not transcribed.]"
    )


def test_s33_bc3_19_stickers_emoji_and_youtube() -> None:
    text = "<:pog:123456789012345678> https://youtu.be/abcdefghijk https://youtube.com/watch?v=ZZZZZZZZZZZ"
    run = run_history([msg("m1", ANN, text, stickers=(StickerRef("55", "wave"),))])
    entry = run.entries[0]
    assert [(i.url, i.filename, i.is_emoji, i.mime_type) for i in entry.image_attachments] == [
        ("https://cdn.discordapp.com/stickers/55.png", "wave.png", False, "image/png"),
        (
            "https://cdn.discordapp.com/emojis/123456789012345678.png",
            "emoji_pog_123456789012345678.png",
            True,
            "image/png",
        ),
    ]
    assert [(v.filename, v.url, v.mime_type, v.is_youtube_link) for v in entry.video_attachments] == [
        ("youtube_video_ZZZZZZZZZZZ.mp4", "https://youtube.com/watch?v=ZZZZZZZZZZZ", "video/youtube", True)
    ]
    assert entry.media_source_message_ids == ["m1"]
    assert entry.remote_media_source_kind is None


def test_bc3_19_emoji_first_occurrence_per_id() -> None:
    text = "<a:dance:123456789012345678> <:dance:123456789012345678> <:short:12>"
    run = run_history([msg("m1", ANN, text)])
    assert [i.filename for i in run.entries[0].image_attachments] == ["emoji_dance_123456789012345678.png"]


def test_bc3_15_extension_inference_and_unsupported_types() -> None:
    untyped = Attachment(id="1", name="photo.JPG", url="https://cdn.example/photo.JPG")
    bmp = Attachment(id="2", name="x.bmp", url="https://cdn.example/x.bmp", content_type="image/bmp")
    run = run_history([msg("m1", ANN, "", attachments=(untyped, bmp))])
    entry = run.entries[0]
    assert [(i.filename, i.mime_type) for i in entry.image_attachments] == [("photo.JPG", "image/jpeg")]
    assert "A file named `x.bmp` is attached (message ID: media_1)" in (entry.content or "")


def test_bc3_18_component_media_recursive_deduplicated_and_attachment_refs() -> None:
    picture = png("pic.png", "p1")
    components = (
        {
            "type": 17,
            "components": [
                {"type": 12, "items": [{"media": {"url": "attachment://pic.png"}}, {"media": {"url": picture.url}}]},
                {
                    "type": 9,
                    "components": [{"type": 10, "content": "caption"}],
                    "accessory": {"type": 11, "media": {"url": "https://img.example/t.webp"}},
                },
                {"type": 13, "file": {"url": "https://files.example/readme.txt"}},
            ],
        },
    )
    run = run_history([msg("m1", ANN, "gallery", attachments=(picture,), components=components)])
    assert [i.filename for i in run.entries[0].image_attachments] == ["pic.png", "t.webp"]


def test_bc3_17_rendered_table_replaces_its_image() -> None:
    run = run_history([msg("m1", ANN, "the table", attachments=(png(),))], rendered_tables={"m1": "| a | b |"})
    entry = run.entries[0]
    assert entry.content == "the table [System: This was sent as a rendered markdown table image.]\n| a | b |"
    assert entry.image_attachments == []


def test_bc3_23_local_media_with_reply_media_lists_the_message_first() -> None:
    run = run_history(
        [
            msg("m1", BOB, "q", attachments=(png(),)),
            msg("m2", ANN, "a", reply_to="m1", attachments=(png("b.png", "att2"),)),
        ]
    )
    reply = run.entry("m2")
    assert reply.media_source_message_ids == ["m2", "m1"]
    assert reply.remote_media_source_kind is None
    assert [(i.filename, i.source_message_id) for i in reply.image_attachments] == [("a.png", "m1"), ("b.png", None)]
