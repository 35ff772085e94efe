"""BC7-05/06: capability-neutral media descriptors, the rendered-image limit and attribution hints
(§12 scenarios 49–50)."""

from __future__ import annotations

from chatcontext.core.builder import MediaConfig, build_context
from chatcontext.core.descriptors import attribution_hint, media_window, plan_history_media
from chatcontext.core.idmap import MessageIdMap
from chatcontext.core.types import ContextItem, ContextItemTag, SimplifiedMessage
from tests.chatcontext.turn_factory import entry, image, inputs, video

OMITTED_ONE = "[System: 1 image omitted due to rendered-image limit. Do not claim to see it.]"


def history_items(items: list[ContextItem]) -> dict[str, ContextItem]:
    return {i.message_id: i for i in items if i.metadata_tag == ContextItemTag.DIALOGUE_HISTORY and i.message_id}


def test_s49_bc7_05_06_rendered_image_limit() -> None:
    history = [entry(f"m{n}", content=f"pic {n}", image_attachments=[image(f"p{n}.png")]) for n in range(1, 6)]
    for oldest in history[:2]:
        oldest.image_attachments.append(image(f"s{oldest.id}", sticker=True))
    output = build_context(inputs(history, media=MediaConfig(image_message_limit=3, fetch_limit=80)))
    items = history_items(output.items)

    for old in ("m1", "m2"):
        assert items[old].parts[0].text == OMITTED_ONE  # type: ignore[union-attr]
        descriptors = items[old].media_descriptors or []
        assert [d.filename for d in descriptors] == [f"s{old}.png"]  # stickers are never limited
    for new in ("m3", "m4", "m5"):
        assert OMITTED_ONE not in items[new].text
        assert [d.filename for d in items[new].media_descriptors or []] == [f"p{new[1]}.png"]
        assert all(d.within_window for d in items[new].media_descriptors or [])


def test_bc7_06_plural_omitted_notice() -> None:
    history = [
        entry("m1", image_attachments=[image("a.png"), image("b.png")]),
        entry("m2", image_attachments=[image("c.png")]),
    ]
    plans = plan_history_media(
        history, window=10, image_message_limit=1, id_map=MessageIdMap(), author_label=lambda e: e.author_name
    )
    assert plans[0].omitted_notice == (
        "[System: 2 images omitted due to rendered-image limit. Do not claim to see them.]"
    )
    assert plans[0].descriptors == []
    assert plans[1].omitted_notice is None


def test_bc7_06_hint_attributes_only_rendered_media() -> None:
    """An entry whose images were all left out by the limit gets no attribution hint, so the prompt
    never says "This image … was sent by" beside "Do not claim to see it"."""
    history = [
        entry("m1", image_attachments=[image("a.png"), image("b.png")]),
        entry("m2", image_attachments=[image("c.png"), image("d.png")]),
    ]
    plans = plan_history_media(
        history, window=10, image_message_limit=1, id_map=MessageIdMap(), author_label=lambda e: e.author_name
    )
    assert plans[0].omitted_notice is not None
    assert plans[0].attribution_hint is None
    assert plans[1].attribution_hint is not None
    assert plans[1].attribution_hint.startswith("[System: These images (Media ID: ")


def test_s50_bc7_05_duplicate_image_last_occurrence_wins() -> None:
    history = [
        entry("m1", content="a"),
        entry("m2", content="b"),
        entry("m3", content="look", image_attachments=[image("same.png")]),
        entry("m4", content="c"),
        entry("m5", content="again", image_attachments=[image("same.png")]),
    ]
    items = history_items(build_context(inputs(history)).items)
    assert items["m3"].media_descriptors is None
    assert OMITTED_ONE not in items["m3"].text
    assert [d.uri for d in items["m5"].media_descriptors or []] == ["https://proxy.example/same.png"]


def test_bc7_05_out_of_window_descriptors_without_hint() -> None:
    history = [
        entry("m1", content="old", image_attachments=[image("old.png")], video_attachments=[video("v.mp4")]),
        entry("m2", content="new", image_attachments=[image("new.png"), image("kek", emoji=True)]),
    ]
    id_map = MessageIdMap()
    plans = plan_history_media(history, window=1, image_message_limit=3, id_map=id_map, author_label=lambda e: "Ann")
    old = plans[0]
    assert [(d.kind, d.within_window) for d in old.descriptors] == [("image", False), ("video", False)]
    assert old.attribution_hint is None and old.omitted_notice is None
    assert old.descriptors[0].uri == "https://proxy.example/old.png"
    assert old.descriptors[0].fallback_uri == "https://cdn.example/old.png"
    assert old.descriptors[1].uri == "https://proxy.example/v.mp4"
    new = plans[1]
    assert [d.filename for d in new.descriptors] == ["new.png"]  # emoji images are never descriptors
    assert new.attribution_hint == "[System: This image (Media ID: media_2) was sent by Ann]"
    assert id_map.as_dict() == {"media_1": "m1", "media_2": "m2"}


def test_bc7_05_youtube_uses_the_url() -> None:
    history = [entry("m1", content="watch", video_attachments=[video("abcdefghijk", youtube=True)])]
    (plan,) = plan_history_media(
        history, window=5, image_message_limit=3, id_map=MessageIdMap(), author_label=lambda e: "Ann"
    )
    (descriptor,) = plan.descriptors
    assert (descriptor.uri, descriptor.is_youtube_link, descriptor.fallback_uri) == (
        "https://youtu.be/abcdefghijk",
        True,
        None,
    )
    assert plan.attribution_hint == "[System: This video (Media ID: media_1) was sent by Ann]"


def hint(e: SimplifiedMessage) -> str | None:
    return attribution_hint(e, MessageIdMap(), "Ann")


def test_bc7_06_attribution_hint_variants() -> None:
    assert hint(entry("m1", image_attachments=[image("a.png"), image("b.png")])) == (
        "[System: These images (Media ID: media_1) were sent by Ann]"
    )
    assert hint(entry("m1", image_attachments=[image("a.png")], video_attachments=[video("v.mp4")])) == (
        "[System: These media files (Media ID: media_1) were sent by Ann]"
    )
    assert hint(entry("m2", image_attachments=[image("a.png", source="m1")])) == (
        "[System: This image (Media ID: media_1) was included in the message being replied to]"
    )
    assert hint(entry("m2", image_attachments=[image("a.png", source="m1"), image("b.png")])) == (
        "[System: These images (Media IDs: media_1, media_2) were sent by Ann]"
    )
    forwarded = entry("m3", image_attachments=[image("a.png", source="m3")], remote_media_source_kind="forwarded")
    assert (
        hint(forwarded)
        == "[System: This image (Media ID: media_1) was attached to the forwarded message described above]"
    )
    assert hint(entry("m4", image_attachments=[image("kek", emoji=True)])) is None


def test_bc7_05_window_is_min_of_memory_pressure_and_fetch_limit() -> None:
    assert (media_window(80), media_window(80, 10), media_window(20, 50)) == (80, 10, 20)


def test_bc7_05_media_only_entry_text() -> None:
    history = [entry("m1", content=None, image_attachments=[image("a.png")])]
    items = history_items(build_context(inputs(history)).items)
    assert items["m1"].text == "[System: This image (Media ID: media_1) was sent by Ann]"
    out_of_window = history_items(
        build_context(inputs(history, media=MediaConfig(fetch_limit=80, memory_pressure_window=0))).items
    )
    assert out_of_window["m1"].text == "[System: Ann sent this image]"
