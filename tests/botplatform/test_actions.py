"""personas.actions: memory limits (data-model.md §2.11, §3), privacy, blacklist, reminders, forget_user."""

from __future__ import annotations

import pytest
from django.utils import timezone

from chatcontext.models import PromptRecord, VoiceTranscript
from community.forget import forget_user
from personas import actions
from personas.actions import forget as forget_module
from personas.models import (
    GLOBAL_LINEAGE_ID,
    ConversationSummary,
    DiscordUser,
    Persona,
    PersonalizationBlacklist,
    PersonalMemory,
    PersonaUserBlock,
    PrivacyLevel,
    Reminder,
    Server,
    ServerMember,
    ServerMemory,
    ShortTermMemory,
    StatCounter,
    UserPersonaNamingPreference,
)
from tests.actors import TEST_ACTOR

pytestmark = pytest.mark.django_db

TOMORI, PIP = 10000, 10001


@pytest.fixture
def tomori_and_pip(server: Server) -> None:
    """Personas holding the lineages the memory tests write to (a memory needs a lineage some persona holds)."""
    Persona.objects.create(server=server, persona_nickname="Tomori", persona_lineage_id=TOMORI)
    Persona.objects.create(server=server, persona_nickname="Pip", is_alter=True, persona_lineage_id=PIP)


@pytest.fixture
def limit_three(settings, tomori_and_pip):
    settings.TOMORI = {**settings.TOMORI, "MAX_PERSONAL_MEMORIES": 3, "MAX_MEMORY_LENGTH": 20}


def test_memory_limit_counts_global_rows_toward_each_lineage(limit_three, user: DiscordUser) -> None:
    actions.add_personal_memory(user, GLOBAL_LINEAGE_ID, "likes tea", actor=TEST_ACTOR)
    actions.add_personal_memory(user, TOMORI, "exam on friday", actor=TEST_ACTOR)
    actions.add_personal_memory(user, TOMORI, "owns a cat", actor=TEST_ACTOR)
    with pytest.raises(actions.MemoryLimitReached):
        actions.add_personal_memory(user, TOMORI, "one too many", actor=TEST_ACTOR)
    # Another lineage sees only its own rows plus the one global row.
    actions.add_personal_memory(user, PIP, "taught a whistle", actor=TEST_ACTOR)
    actions.add_personal_memory(user, PIP, "likes crackers", actor=TEST_ACTOR)
    assert PersonalMemory.objects.filter(user=user).count() == 5


def test_global_memory_refused_when_it_would_overflow_the_fullest_lineage(limit_three, user: DiscordUser) -> None:
    for text in ("a", "b", "c"):
        actions.add_personal_memory(user, TOMORI, text, actor=TEST_ACTOR)
    with pytest.raises(actions.MemoryLimitReached):
        actions.add_personal_memory(user, GLOBAL_LINEAGE_ID, "global", actor=TEST_ACTOR)
    actions.add_personal_memory(user, PIP, "pip only", actor=TEST_ACTOR)
    assert not PersonalMemory.objects.filter(user=user, persona_lineage_id=GLOBAL_LINEAGE_ID).exists()


def test_memory_length_limit_and_empty_content(limit_three, user: DiscordUser) -> None:
    actions.add_personal_memory(user, TOMORI, "x" * 20, actor=TEST_ACTOR)
    with pytest.raises(actions.MemoryTooLong):
        actions.add_personal_memory(user, TOMORI, "x" * 21, actor=TEST_ACTOR)
    with pytest.raises(actions.ActionError):
        actions.add_personal_memory(user, TOMORI, "   ", actor=TEST_ACTOR)
    memory = PersonalMemory.objects.get(user=user)
    with pytest.raises(actions.MemoryTooLong):
        actions.update_personal_memory(memory, content="y" * 21, actor=TEST_ACTOR)
    memory.refresh_from_db()
    assert memory.content == "x" * 20


@pytest.mark.parametrize("lineage", [-1, 1, 9999])
def test_memory_lineage_must_be_global_or_drawn(user: DiscordUser, lineage: int) -> None:
    with pytest.raises(actions.InvalidLineage):
        actions.add_personal_memory(user, lineage, "x", actor=TEST_ACTOR)


def test_memory_write_refuses_a_persona_stuck_on_lineage_zero(server: Server) -> None:
    broken = Persona(server=server, persona_nickname="Broken", persona_lineage_id=0)
    with pytest.raises(actions.InvalidLineage):
        actions.persona_memory_lineage(broken)
    assert actions.persona_memory_lineage(Persona.objects.create(server=server, persona_nickname="Ok")) >= 10000


def test_update_memory_cleans_tags_and_keeps_lineage(tomori_and_pip, user: DiscordUser) -> None:
    memory = actions.add_personal_memory(user, TOMORI, " exam ", tags=["school", " school", ""], actor=TEST_ACTOR)
    assert (memory.content, memory.tags) == ("exam", ["school"])
    actions.update_personal_memory(memory, tags=["#lounge"], actor=TEST_ACTOR)
    memory.refresh_from_db()
    assert (memory.content, memory.tags, memory.persona_lineage_id) == ("exam", ["#lounge"], TOMORI)
    actions.delete_personal_memory(memory, actor=TEST_ACTOR)
    assert not PersonalMemory.objects.exists()


def test_set_privacy_level(user: DiscordUser) -> None:
    actions.set_privacy_level(user, PrivacyLevel.FULL, actor=TEST_ACTOR)
    user.refresh_from_db()
    assert user.privacy_level == PrivacyLevel.FULL
    with pytest.raises(actions.ActionError):
        actions.set_privacy_level(user, 3, actor=TEST_ACTOR)


def test_blacklist_add_is_idempotent_and_remove_reports(server: Server) -> None:
    first = actions.add_to_blacklist(server, "14", "asked", actor=TEST_ACTOR)
    again = actions.add_to_blacklist(server, "14", actor=TEST_ACTOR)
    assert first.pk == again.pk and again.reason == "asked"
    assert actions.remove_from_blacklist(server, "14", actor=TEST_ACTOR) is True
    assert actions.remove_from_blacklist(server, "14", actor=TEST_ACTOR) is False


def test_cancel_reminder_pending_and_refuses_fired(make_reminder) -> None:
    pending = make_reminder(status=Reminder.Status.FAILED, next_attempt_at=timezone.now())
    cancelled = actions.cancel_reminder(pending, actor=TEST_ACTOR)
    assert (cancelled.status, cancelled.next_attempt_at) == (Reminder.Status.CANCELLED, None)
    assert actions.cancel_reminder(pending, actor=TEST_ACTOR).status == Reminder.Status.CANCELLED
    with pytest.raises(actions.ReminderNotCancellable):
        actions.cancel_reminder(make_reminder(status=Reminder.Status.FIRED), actor=TEST_ACTOR)


def _record(server: Server, subjects: list[object], messages: list[dict[str, object]] | None = None) -> PromptRecord:
    return PromptRecord.objects.create(
        server=server,
        channel_disc_id="4200",
        created_at=timezone.now(),
        subject_user_ids=subjects,
        snapshot={"messages": messages or []},
    )


@pytest.fixture
def forgotten_world(server: Server, main_persona: Persona, make_user, make_reminder):
    """User "12" with data in every table forget_user touches, plus user "123" who must be untouched."""
    mina = make_user(user_disc_id="12", user_nickname="Minnie", pronouns="she/her", privacy_level=2)
    other = make_user(user_disc_id="123", user_nickname="Other")
    lineage = main_persona.persona_lineage_id
    for who in (mina, other):
        PersonalMemory.objects.create(user=who, persona_lineage_id=lineage, content="exam")
        PersonalMemory.objects.create(user=who, persona_lineage_id=GLOBAL_LINEAGE_ID, content="tea")
        UserPersonaNamingPreference.objects.create(user=who, persona_lineage_id=lineage, nickname_override="N")
        ServerMemory.objects.create(server=server, persona_lineage_id=lineage, user=who, content="taught")
        ServerMember.objects.create(server=server, user_disc_id=who.user_disc_id, display_name="x")
        StatCounter.objects.create(
            server=server, user=who, metric="message_sent", bucket=timezone.now().date(), count=3
        )
        make_reminder(user_discord_id=who.user_disc_id)
    make_reminder(user_discord_id="999", created_by_user=mina)
    PersonalizationBlacklist.objects.create(server=server, user_disc_id="12")
    PersonaUserBlock.objects.create(
        server=server, persona=main_persona, user_disc_id="12", reason="r", expires_at=timezone.now()
    )
    voice_message = {"id": "6009", "author": {"id": "12"}, "attachments": [{"id": "7301"}]}
    other_message = {"id": "6010", "author": {"id": "123"}, "attachments": []}
    VoiceTranscript.objects.create(message_disc_id="6009", transcript="hello", cached_at=timezone.now())
    VoiceTranscript.objects.create(
        message_disc_id="6999", attachment_disc_id="7301", transcript="copy", cached_at=timezone.now()
    )
    VoiceTranscript.objects.create(message_disc_id="6010", transcript="other", cached_at=timezone.now())
    _record(server, ["12", "123"], [voice_message, other_message])
    _record(server, [12])  # a number, as a careless writer might store it
    _record(server, ["123"], [other_message])
    _record(server, ["1", "2"])
    # Summaries and notes drawn from their messages; "123" and "1234" are other people, not a prefix match.
    for authors in (["12"], ["123"], ["1234", "123"]):
        ConversationSummary.objects.create(
            server=server,
            persona=main_persona,
            channel_disc_id="4200",
            kind="summary",
            content="s",
            author_disc_ids=authors,
        )
    for channel, authors in (("4200", ["123", "12"]), ("4201", ["123"])):
        ShortTermMemory.objects.create(
            server=server, persona=main_persona, channel_disc_id=channel, content="n", author_disc_ids=authors
        )
    return mina, other


def test_forget_user_removes_everything_about_them_and_nothing_else(forgotten_world) -> None:
    mina, other = forgotten_world
    result = forget_user("12", actor=TEST_ACTOR)
    assert result.as_dict() == {
        "personal_memories": 2,
        "server_memories": 1,
        "naming_preferences": 1,
        "reminders": 2,
        "voice_transcripts": 2,
        "prompt_records": 2,
        "channel_messages": 0,  # no playground messages in this world (tests/bot/playground/test_forget.py)
        "member_snapshots": 1,
        "stat_counters": 1,
        "summaries": 1,
        "short_term_memories": 1,
        "profile_cleared": True,
    }
    assert sorted(ConversationSummary.objects.values_list("author_disc_ids", flat=True)) == [["123"], ["1234", "123"]]
    assert list(ShortTermMemory.objects.values_list("channel_disc_id", flat=True)) == ["4201"]
    mina.refresh_from_db()
    assert (mina.user_nickname, mina.pronouns, mina.privacy_level) == (None, None, PrivacyLevel.FULL)
    assert not PersonalMemory.objects.filter(user=mina).exists()
    assert not Reminder.objects.filter(user_discord_id="12").exists()
    assert not Reminder.objects.filter(created_by_user=mina).exists()
    assert set(VoiceTranscript.objects.values_list("message_disc_id", flat=True)) == {"6010"}
    assert sorted(map(sorted, PromptRecord.objects.values_list("subject_user_ids", flat=True))) == [
        ["1", "2"],
        ["123"],
    ]
    # Moderation decisions stay; the other user "123" keeps everything.
    assert PersonalizationBlacklist.objects.filter(user_disc_id="12").exists()
    assert PersonaUserBlock.objects.filter(user_disc_id="12").exists()
    assert PersonalMemory.objects.filter(user=other).count() == 2
    assert ServerMember.objects.filter(user_disc_id="123").exists()
    assert Reminder.objects.filter(user_discord_id="123").exists()
    other.refresh_from_db()
    assert other.user_nickname == "Other"


def test_forget_user_is_one_transaction(forgotten_world, monkeypatch) -> None:
    """A failure on the last step (personas' user-row counter) leaves every earlier deletion undone,
    the prompt records' (chatcontext's, deleted first) too."""
    mina, _ = forgotten_world
    records = PromptRecord.objects.count()

    def fail(*args: object, **kwargs: object) -> None:
        raise RuntimeError("disk full")

    monkeypatch.setattr(forget_module, "bump_user_rows", fail)
    with pytest.raises(RuntimeError):
        forget_user("12", actor=TEST_ACTOR)
    assert PromptRecord.objects.count() == records
    assert PersonalMemory.objects.filter(user=mina).count() == 2
    assert Reminder.objects.filter(user_discord_id="12").exists()
    mina.refresh_from_db()
    assert mina.user_nickname == "Minnie"


def test_forget_unknown_user_still_removes_reminders_and_records(server: Server, make_reminder) -> None:
    make_reminder(user_discord_id="77")
    _record(server, ["77"])
    result = forget_user("77", actor=TEST_ACTOR)
    assert (result.reminders, result.prompt_records, result.profile_cleared) == (1, 1, False)


# --- lineages a memory may be written to (data-model.md §2.9) ----------------------------------


def test_personal_memory_refuses_a_lineage_no_persona_holds(user: DiscordUser, make_server) -> None:
    """Issue 13 item 10: 99999 was stored although no persona reads it; 0 and any persona's lineage are fine."""
    elsewhere = Persona.objects.create(server=make_server(), persona_nickname="Pip")
    with pytest.raises(actions.InvalidLineage, match="99999"):
        actions.add_personal_memory(user, 99999, "likes tea", actor=TEST_ACTOR)
    with pytest.raises(actions.InvalidLineage):
        actions.check_new_personal_memory(user, 99999, "likes tea")
    assert not PersonalMemory.objects.exists()
    actions.add_personal_memory(user, GLOBAL_LINEAGE_ID, "global", actor=TEST_ACTOR)
    actions.add_personal_memory(user, elsewhere.persona_lineage_id, "for Pip", actor=TEST_ACTOR)
    # A deleted persona's lineage keeps its memories (a re-import restores them) but takes no new ones.
    lineage = elsewhere.persona_lineage_id
    elsewhere.delete()
    with pytest.raises(actions.InvalidLineage):
        actions.add_personal_memory(user, lineage, "too late", actor=TEST_ACTOR)
    assert PersonalMemory.objects.filter(user=user).count() == 2


def test_server_memory_goes_to_lineage_zero_or_a_lineage_of_the_servers_personas(
    server: Server, main_persona: Persona, make_server, user: DiscordUser
) -> None:
    other = Persona.objects.create(server=make_server(), persona_nickname="Pip")
    for lineage in (99999, other.persona_lineage_id, 1):
        with pytest.raises(actions.InvalidLineage):
            actions.add_server_memory(server, lineage, "the cafe opens at 9", actor=TEST_ACTOR)
    assert not ServerMemory.objects.exists()
    own = actions.add_server_memory(
        server, main_persona.persona_lineage_id, " the cafe opens at 9 ", user=user, actor=TEST_ACTOR
    )
    shared = actions.add_server_memory(
        server, GLOBAL_LINEAGE_ID, "quiet hours after midnight", tags=["a", " a"], actor=TEST_ACTOR
    )
    assert (own.content, own.user) == ("the cafe opens at 9", user)
    assert own.persona_lineage_id == main_persona.persona_lineage_id
    assert (shared.tags, shared.persona_lineage_id) == (["a"], GLOBAL_LINEAGE_ID)


def test_server_memory_length_and_per_lineage_limit(settings, server: Server, main_persona: Persona) -> None:
    settings.TOMORI = {**settings.TOMORI, "MAX_SERVER_MEMORIES": 2, "MAX_MEMORY_LENGTH": 20}
    lineage = main_persona.persona_lineage_id
    with pytest.raises(actions.MemoryTooLong):
        actions.add_server_memory(server, lineage, "x" * 21, actor=TEST_ACTOR)
    first = actions.add_server_memory(server, lineage, "one", actor=TEST_ACTOR)
    actions.add_server_memory(server, lineage, "two", actor=TEST_ACTOR)
    with pytest.raises(actions.MemoryLimitReached):
        actions.add_server_memory(server, lineage, "three", actor=TEST_ACTOR)
    actions.add_server_memory(server, GLOBAL_LINEAGE_ID, "global counts apart", actor=TEST_ACTOR)
    with pytest.raises(actions.MemoryTooLong):
        actions.update_server_memory(first, content="y" * 21, actor=TEST_ACTOR)
    actions.update_server_memory(first, content=" uno ", tags=["#lounge"], actor=TEST_ACTOR)
    first.refresh_from_db()
    assert (first.content, first.tags) == ("uno", ["#lounge"])
