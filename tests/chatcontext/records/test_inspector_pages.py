"""What the inspector shows (issue 5): the prompt block by block, the simplified history with its
`ref_N` ids, the exclusion log without excluded text, diagnostics, the reply, the diff against the
previous turn, and "replay now" against today's memories and privacy settings."""

from __future__ import annotations

from datetime import timedelta
from html import unescape

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from chatcontext.models import PromptRecord
from chatcontext.records.admin import channel_names
from chatcontext.records.inspector import assemble_live, prompt_blocks
from personas import actions
from personas.models import DiscordUser, PersonalMemory, PrivacyLevel, Reminder, ServerMember
from tests.actors import TEST_ACTOR
from tests.chatcontext.records.conftest import A_MARKUP, A_NEW_SERVER_MEMORY, World, example_doc

pytestmark = pytest.mark.django_db(databases=["default", "replay"])

DOC = example_doc()
MESSAGE = [m["id"] for m in DOC["messages"]]
USER = {u["username"]: u["disc_id"] for u in DOC["users"]}
CHANNEL = DOC["channel"]["id"]
SERVER = DOC["server"]["disc_id"]
# Wren (privacy FULL) wrote this; it is in the snapshot but must never reach a page.
WREN_TEXT = "4471"


def detail(world: World, record: PromptRecord, who: str = "alice") -> str:
    response = world.client(who).get(reverse("admin:chatcontext_promptrecord_change", args=[record.pk]))
    assert response.status_code == 200
    return response.content.decode()


def replay(world: World, record: PromptRecord, who: str = "alice") -> str:
    response = world.client(who).post(reverse("admin:chatcontext_promptrecord_replay", args=[record.pk]))
    assert response.status_code == 200
    return unescape(response.content.decode())


def test_detail_shows_every_block_with_role_tag_tokens_and_text(world: World) -> None:
    html = unescape(detail(world, world.record_a))
    blocks = prompt_blocks(world.record_a.context_items, world.record_a.message_id_map)
    assert len(blocks) == len(world.record_a.context_items) > 5
    for block, item in zip(blocks, world.record_a.context_items, strict=True):
        assert block.tokens == item["token_estimate"]
        row = f'<td>{block.position}</td>\n    <td>{block.role}</td>\n    <td class="tag">{block.tag}</td>\n'
        assert row + f"    <td>{block.tokens}</td>" in html
        assert f"<pre>{item['text']}</pre>" in html
    assert "<details><summary>" in html


def test_detail_escapes_user_text(world: World) -> None:
    html = detail(world, world.record_a)
    assert A_MARKUP not in html
    assert "&lt;script&gt;alert(&#x27;bench&#x27;)&lt;/script&gt;" in html


def test_detail_history_names_entries_by_ref_ids(world: World) -> None:
    html = unescape(detail(world, world.record_a))
    reply, said, image = MESSAGE[6], MESSAGE[5], MESSAGE[7]  # Tobias replies to Sprocket; Priya's image
    assert world.record_a.message_id_map == {"ref_1": reply, "ref_2": said, "media_1": image}
    assert f'<td class="tag">ref_1</td>\n    <td>{reply}</td>' in html
    assert f'<td class="tag">ref_2</td>\n    <td>{said}</td>' in html
    assert f'<td class="tag">media_1</td>\n    <td>{image}</td>' in html
    # A merged entry lists every message it combines (BC4-02): Dario's two messages.
    assert f"<td>{MESSAGE[2]}, {MESSAGE[3]}</td>" in html


def user_page(disc_id: str) -> str:
    return reverse("admin:personas_discorduser_change", args=[DiscordUser.objects.get(user_disc_id=disc_id).pk])


def discord_link(message_id: str) -> str:
    return f"https://discord.com/channels/{SERVER}/{CHANNEL}/{message_id}"


def exclusion_rows(html: str) -> list[str]:
    return [" ".join(row.split()) for row in html.split('<tr class="exclusion">')[1:]]


def test_detail_exclusion_log_says_who_and_why_never_what(world: World) -> None:
    html = unescape(detail(world, world.record_a))
    rows = exclusion_rows(html)
    # Issue 16: people by their Discord username, linked to their page; messages to Discord.
    wren_id, wren_said = USER["wrenfield"], MESSAGE[1]
    wren_cell = f'<a href="{user_page(wren_id)}">wrenfield</a> <span class="muted">({wren_id})</span>'
    wren = f"<td>message</td> <td>{wren_cell}</td>"
    wren_message = f'<a href="{discord_link(wren_said)}" target="_blank" rel="noopener">{wren_said}</a>'
    assert any(row.startswith(wren) and wren_message in row and "privacy_full" in row for row in rows), rows
    dario = f'<td>profile</td> <td><a href="{user_page(USER["dario_m"])}">dario_m</a>'
    assert any(dario in r and "privacy_partial" in r for r in rows)
    tobias = f"({USER['tobias.r']})"
    assert any("<td>profile</td>" in r and tobias in r and "blacklisted" in r for r in rows), rows
    assert WREN_TEXT not in html
    assert "night shifts at the bakery" not in html
    # Wren is privacy FULL: the nickname she saved never reaches the page, her Discord username does.
    assert "Birdie" not in html


def test_detail_names_the_trigger_message_and_its_author(world: World) -> None:
    html = " ".join(unescape(detail(world, world.record_a)).split())
    trigger = world.record_a.trigger_message_disc_id
    author = world.doc_a["turn"].get("trigger_author_id") or next(
        m["author"]["id"] for m in world.doc_a["messages"] if m["id"] == trigger
    )
    username = DiscordUser.objects.get(user_disc_id=author).username
    link = f'<a href="{discord_link(trigger)}" target="_blank" rel="noopener">{trigger}</a>'
    assert f'{link} by <a href="{user_page(author)}">{username}</a>' in html


def test_replay_result_has_its_own_exclusion_log(world: World) -> None:
    priya = DiscordUser.objects.get(user_disc_id=USER["priya.k"])
    actions.set_privacy_level(priya, PrivacyLevel.FULL, actor=TEST_ACTOR)
    html = replay(world, world.record_a)
    assert "Exclusion log of the replay" in html
    rows = exclusion_rows(html.split("Exclusion log of the replay")[1])
    priya_link = f'<a href="{user_page(USER["priya.k"])}">priya.k</a>'
    assert any(priya_link in row and "privacy_full" in row for row in rows), rows
    assert not any(priya_link in row for row in exclusion_rows(unescape(detail(world, world.record_a))))
    assert "Pree" not in html.split("Exclusion log of the replay")[1]


def test_a_replayed_record_names_people_but_links_no_discord_message(world: World) -> None:
    """A replay has no live message to link. People bob's servers do not know get the name the record
    itself rendered (Dario, PARTIAL: his messages were kept) or their id, never a link he cannot open."""
    bob = world.client("bob")
    html = unescape(detail(world, world.record_b, who="bob"))
    assert "discord.com/channels" not in html
    rows = exclusion_rows(html)
    assert any("Dario" in row and f"({USER['dario_m']})" in row and "privacy_partial" in row for row in rows), rows
    links = [part.split('"')[0] for row in rows for part in row.split('<a href="')[1:]]
    assert all(bob.get(link).status_code == 200 for link in links), links
    assert "Birdie" not in html


def test_detail_shows_diagnostics_and_reply(world: World) -> None:
    record = PromptRecord.objects.create(
        server=world.server_a,
        channel_disc_id=CHANNEL,
        channel_name="workbench",
        persona_nickname="Tomori",
        created_at=timezone.now(),
        diagnostics={"history": {"entry_count": 7}},
        reply_text="The workshop opens at ten on Sunday.",
        latency_ms=812,
        usage={"prompt_tokens": 900, "completion_tokens": 12},
        error="",
    )
    html = unescape(detail(world, record))
    assert '"entry_count": 7' in html
    assert "<pre>The workshop opens at ten on Sunday.</pre>" in html
    assert "812 ms" in html
    assert '"completion_tokens": 12' in html
    assert "No turn snapshot was stored" in html


def test_detail_diffs_against_the_previous_turn_of_the_channel_and_persona(world: World) -> None:
    html = unescape(detail(world, world.record_a))
    previous_url = reverse("admin:chatcontext_promptrecord_change", args=[world.first_a.pk])
    assert f'<a href="{previous_url}">prompt record {world.first_a.pk}</a>' in html
    assert f'<div class="add">+- {A_NEW_SERVER_MEMORY}</div>' in html
    assert '<div class="del">' not in html
    first = unescape(detail(world, world.first_a))
    assert "This is the first recorded turn" in first


def test_replay_now_is_unchanged_when_nothing_changed(world: World) -> None:
    html = replay(world, world.record_a)
    assert "The prompt would be exactly the same today." in html


def test_replay_now_shows_the_edited_memory(world: World) -> None:
    extractor = PersonalMemory.objects.get(content="{user} is building a fume extractor for the soldering bench")
    screws = PersonalMemory.objects.get(content="{user} prefers metric screws")
    actions.update_personal_memory(screws, content="{user} prefers imperial screws", actor=TEST_ACTOR)
    html = replay(world, world.record_a)
    memories = (
        f"- Memories: ID:{extractor.pk} Pree is building a fume extractor for the soldering bench; "
        f"ID:{screws.pk} Pree prefers"
    )
    assert f'<div class="del">-{memories} metric screws</div>' in html
    assert f'<div class="add">+{memories} imperial screws</div>' in html
    # Replaying neither edits the record nor stores a new one.
    assert PromptRecord.objects.filter(server=world.server_a).count() == 2


def test_replay_now_applies_todays_privacy_level(world: World) -> None:
    priya = DiscordUser.objects.get(user_disc_id=USER["priya.k"])
    actions.set_privacy_level(priya, PrivacyLevel.FULL, actor=TEST_ACTOR)
    html = replay(world, world.record_a)
    greeting = "Pree: afternoon everyone, the resin printer finally arrived"
    assert f'<div class="del">-{greeting}</div>' in html
    assert greeting not in html.split("What changed")[1].replace(f"-{greeting}", "")


def test_replay_now_leaves_the_live_database_as_it_was(world: World) -> None:
    DiscordUser.objects.filter(user_disc_id=USER["tobias.r"]).delete()  # now unknown: hydration registers him (H-04)
    models = (DiscordUser, PersonalMemory, Reminder, ServerMember, PromptRecord)
    before = {m.__name__: m.objects.count() for m in models}
    ctx = assemble_live(world.doc_a, world.server_a)
    assert ctx.diagnostics["participants"]["hydration"]["external_calls"]["registrations"] == 1
    replay(world, world.record_a)
    assert {m.__name__: m.objects.count() for m in models} == before


def test_replay_now_without_snapshot_explains_why(world: World) -> None:
    bare = PromptRecord.objects.create(
        server=world.server_a, channel_disc_id=CHANNEL, persona_nickname="Tomori", created_at=timezone.now()
    )
    client = world.client("alice")
    response = client.post(reverse("admin:chatcontext_promptrecord_replay", args=[bare.pk]), follow=True)
    assert "This record has no stored snapshot to replay." in response.content.decode()


def test_replay_now_when_the_persona_is_gone(world: World) -> None:
    world.server_a.personas.filter(persona_nickname="Tomori").update(persona_nickname="Tomo")
    response = world.client("alice").post(
        reverse("admin:chatcontext_promptrecord_replay", args=[world.record_a.pk]), follow=True
    )
    assert "The persona of this turn no longer exists on the server." in unescape(response.content.decode())


def test_changelist_costs_the_same_queries_at_1_and_100_rows(world: World) -> None:
    client = world.client("alice")
    url = reverse("admin:chatcontext_promptrecord_changelist")
    PromptRecord.objects.exclude(pk=world.record_a.pk).delete()
    client.get(url)
    with CaptureQueriesContext(connection) as one:
        assert len(client.get(url).context["cl"].result_list) == 1
    start = timezone.now()
    PromptRecord.objects.bulk_create(
        PromptRecord(
            server=world.server_a,
            channel_disc_id=CHANNEL,
            channel_name=f"room-{i}",
            persona_id=world.record_a.persona_id,
            persona_nickname="Tomori",
            created_at=start + timedelta(seconds=i),
            error="timeout" if i % 2 else "",
            # Each row previews its trigger from its history, as the first does.
            trigger_message_disc_id=world.record_a.trigger_message_disc_id,
            simplified_messages=world.record_a.simplified_messages,
        )
        for i in range(99)
    )
    with CaptureQueriesContext(connection) as hundred:
        response = client.get(url + "?all=")
    assert len(response.context["cl"].result_list) == 100
    assert len(hundred.captured_queries) == len(one.captured_queries)
    assert response.content.decode().count('class="turn-trigger" title="–"') == 0


def test_the_channel_filter_reads_one_row_per_channel_with_its_latest_name(world: World) -> None:
    start = timezone.now()
    PromptRecord.objects.bulk_create(
        PromptRecord(
            server=world.server_a,
            channel_disc_id="777",
            channel_name=name,
            persona_id=world.record_a.persona_id,
            created_at=start + timedelta(seconds=i),
        )
        for i, name in enumerate(["old-name", "new-name", "", "new-name"])
    )
    rows = list(channel_names(PromptRecord.objects.filter(server=world.server_a)))
    assert len(rows) == len({r[0] for r in rows}) == 2
    assert ("777", "new-name") in rows
    response = world.client("alice").get(reverse("admin:chatcontext_promptrecord_changelist"))
    channel_filter = next(
        f for f in response.context["cl"].filter_specs if getattr(f, "parameter_name", "") == "channel"
    )
    assert dict(channel_filter.lookup_choices)["777"] == "#new-name"


def test_changelist_search_and_filters(world: World) -> None:
    client = world.client("root")
    url = reverse("admin:chatcontext_promptrecord_changelist")

    def ids(query: str) -> set[int]:
        return {r.pk for r in client.get(url + query).context["cl"].result_list}

    assert ids("?q=porch") == {world.record_b.pk}
    assert ids(f"?q={DOC['turn']['trigger_message_id']}") == {world.first_a.pk, world.record_a.pk, world.record_b.pk}
    assert ids(f"?server__server_id__exact={world.server_b.pk}") == {world.record_b.pk}
    assert ids("?source__exact=replay") == {world.record_b.pk}
    assert ids(f"?persona__persona_id__exact={world.record_a.persona_id}") == {world.first_a.pk, world.record_a.pk}
