"""Property tests of the history over generated channels (issue 3 acceptance).

Every generated message carries a token naming its author kind (`FULLTOKEN7`, `BLOCKEDTOKEN3` …) in
its text, its link-preview title and its forwarded copies, so a leak anywhere is visible.
"""

from __future__ import annotations

import re
from dataclasses import replace

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.types import (
    Attachment,
    Author,
    DiscordMessage,
    Embed,
    ForwardSnapshot,
    MessageReference,
    PrivacyLevel,
    Reaction,
    ReactionEmoji,
    UserRow,
)
from tests.chatcontext.builders import ANN, BOB, BOT, SERVER, USER_ROWS, at, block, msg, png, run_history, webhook_msg

FULL = Author(id="777777777777777777", username="fulluser", global_name="Fullname")
BLOCKED = Author(id="888888888888888888", username="blockeduser", global_name="Blockname")
ROWS = {
    **USER_ROWS,
    FULL.id: UserRow(user_id=7, user_disc_id=FULL.id, user_nickname="FullNick", privacy_level=PrivacyLevel.FULL),
    BLOCKED.id: UserRow(user_id=8, user_disc_id=BLOCKED.id, user_nickname="BlockNick"),
}
FULL_MARKS = ("FULLTOKEN", "Fullname", "fulluser", "FullNick")
HUMANS = {"ann": ANN, "bob": BOB, "full": FULL, "blocked": BLOCKED, "bot": BOT}
KINDS = [*HUMANS, "ellen", "hook"]
PDF = Attachment(id="f", name="notes.pdf", url="https://cdn.example/notes.pdf", content_type="application/pdf")
# Outside the window: reply targets and forward origins by hidden authors.
EXTRAS = (msg("xfull", FULL, "FULLTOKENX old words"), msg("xblocked", BLOCKED, "BLOCKEDTOKENX old words"))

_REF = re.compile(r"\b(?:ref|media)_\d+\b")


def _author_message(kind: str, message_id: str, text: str, **changes: object) -> DiscordMessage:
    if kind == "ellen":
        return webhook_msg(message_id, "Ellen", text, **changes)
    if kind == "hook":
        return webhook_msg(message_id, "Hooky", text, **changes)
    return msg(message_id, HUMANS[kind], text, **changes)


@st.composite
def channels(draw: st.DrawFn) -> list[DiscordMessage]:
    messages: list[DiscordMessage] = []
    clock = at(8)
    for index in range(draw(st.integers(1, 18))):
        kind = draw(st.sampled_from(KINDS))
        clock += draw(st.sampled_from([0, 60_000, 3_600_000, 10 * 3_600_000]))
        token = f"{kind.upper()}TOKEN{index}"
        text = draw(st.sampled_from([token, f"hello {token}", f"$: {token}", ""]))
        changes: dict[str, object] = {"ts": clock}
        shape = draw(st.sampled_from(["plain", "reply", "forward", "join", "preview"]))
        if shape == "reply":
            targets = [m.id for m in messages] + [e.id for e in EXTRAS]
            changes["reply_to"] = draw(st.sampled_from(targets))
        elif shape == "forward" and messages:
            origin = draw(st.sampled_from([*messages, *EXTRAS]))
            in_window = origin in messages
            # Discord omits the author of cross-channel forwards; the cached origin then names it.
            author = draw(st.sampled_from([origin.author, None])) if in_window else origin.author
            snapshot = ForwardSnapshot(content=origin.content, attachments=origin.attachments, author=author)
            changes["reference"] = MessageReference(type="forward", message_id=origin.id)
            changes["message_snapshots"] = (snapshot,)
        elif shape == "join":
            changes["type"] = "user_join"
        elif shape == "preview":
            changes["embeds"] = (Embed(title=f"Preview {token}", description=f"about {token}"),)
        changes["attachments"] = draw(st.sampled_from([(), (png(f"p{index}.png", f"a{index}"),), (PDF,)]))
        reactors = draw(st.lists(st.sampled_from([ANN, BOB, FULL, BLOCKED, BOT]), unique=True, max_size=3))
        if reactors:
            extra = draw(st.integers(0, 2))
            users = tuple(u.id for u in reactors)
            changes["reactions"] = (Reaction(ReactionEmoji(name="👍"), len(users) + extra, users=users),)
        messages.append(_author_message(kind, f"m{index}", text, **changes))
    return messages


def _run(messages: list[DiscordMessage], **options: object):  # type: ignore[no-untyped-def]
    return run_history(
        messages,
        extra_messages=EXTRAS,
        users=(ANN, BOB, FULL, BLOCKED, BOT),
        user_rows=ROWS,
        blocks=[block(BLOCKED.id, 90)],
        **options,  # type: ignore[arg-type]
    )


@given(channels())
def test_property_no_full_author_text_and_no_blocked_content_reaches_history(messages: list[DiscordMessage]) -> None:
    run = _run(messages)
    for entry in run.entries:
        content = entry.content or ""
        assert not any(mark in content for mark in FULL_MARKS)
        assert "BLOCKEDTOKEN" not in content
        for image in entry.image_attachments:
            assert image.source_message_id not in {"xfull", "xblocked"}
        assert entry.author_id != FULL.id
    assert FULL.id not in run.result.user_ids
    assert BLOCKED.id not in run.result.user_ids
    assert all(m.author.id not in (FULL.id, BLOCKED.id) for m in run.result.raw_messages)
    assert all(x.keys() == {"message_id", "author_id", "reason"} for x in run.result.exclusions)


@given(channels())
def test_property_every_compact_id_in_any_content_resolves(messages: list[DiscordMessage]) -> None:
    run = _run(messages)
    known = {m.id for m in [*messages, *EXTRAS]}
    for entry in run.entries:
        for key in _REF.findall(entry.content or ""):
            assert run.id_map.resolve(key) in known
    assert all(not re.search(r"\d{17,20}", v) or v in known for v in run.id_map.as_dict().values())


@given(channels(), st.sampled_from([0.0, 9.0, -5.5]), st.booleans())
def test_property_merged_entries_keep_one_id_and_one_time_per_message(
    messages: list[DiscordMessage], offset: float, time_awareness: bool
) -> None:
    server = replace(SERVER, timezone_offset=offset, time_awareness_enabled=time_awareness)
    run = _run(messages, server=server)
    times = {m.id: m.created_timestamp for m in messages}
    seen: list[str] = []
    for entry in run.entries:
        if entry.combined_message_ids is None:
            assert entry.individual_contents is None and entry.combined_created_ats is None
            seen.append(entry.id)
            continue
        ids = entry.combined_message_ids
        assert entry.individual_contents is not None and entry.combined_created_ats is not None
        assert len(ids) == len(entry.individual_contents) == len(entry.combined_created_ats) >= 2
        assert ids[0] == entry.id
        assert entry.combined_created_ats == [times[i] for i in ids]
        assert entry.content == "\n".join(entry.individual_contents)
        assert not entry.has_media
        seen.extend(ids)
    originals = [s.removeprefix("synthetic-user-block-") for s in seen]
    assert len(originals) == len(set(originals))
    order = [m.id for m in messages]
    assert originals == sorted(originals, key=order.index)
