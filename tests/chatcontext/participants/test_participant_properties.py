"""Property tests of the participant contributor (issue 4 acceptance; participants.md P-02..P-07, H-14,
R-03, R-07, D-09). Every secret is a distinctive generated token, so "absent" means absent."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from hypothesis import given
from hypothesis import strategies as st

from chatcontext.core.participants.model import normalize_alias
from chatcontext.core.participants.target_index import ParticipantTargetIndex
from chatcontext.core.types import Activity, MemberInfo, PersonaInfo, PrivacyLevel, UserRow
from tests.chatcontext.participants.builders import NOW_MS, lilya, ren, tomori
from tests.chatcontext.participants.hydration_builders import (
    FakeDeps,
    alice_snapshot,
    all_item_text,
    bot_seed,
    build,
    matrix_seed,
    memory,
    prepared,
    public_profile,
    reminder,
    server,
    user_seed,
)

LINEAGES = (0, 10001, 10002, 10003, 10099)
PERSONAS = (tomori(), lilya(), ren())
DAY_MS = 86_400_000


def disc(i: int) -> str:
    return f"4000000000000001{i:02d}"


@dataclass
class Secret:
    owner: int
    lineage: int
    text: str


@dataclass
class World:
    deps: FakeDeps
    seeds: list
    persona: PersonaInfo
    impersonated: str | None
    triggerer: int | None
    personalization: bool
    privacy: dict[int, int]
    blacklisted: set[int]
    nicknames: dict[int, str]
    pronouns: dict[int, str]
    appearance: dict[int, str]
    memories: list[Secret]
    matrix: dict[str, str]
    public: list
    count: int

    def items(self, **kwargs):  # type: ignore[no-untyped-def]
        snapshot = alice_snapshot(triggerer_id=None, triggerer_row=None, preloaded_member=None)
        if self.triggerer is not None:
            t = disc(self.triggerer)
            snapshot = alice_snapshot(
                triggerer_id=t,
                triggerer_row=self.deps.rows[t],
                preloaded_member=self.deps.members.get(t),
                triggerer_privacy_level=self.privacy[self.triggerer],
                is_triggerer_blacklisted=self.triggerer in self.blacklisted,
            )
        prep = prepared(self.seeds, matrix_users=self.matrix, public=self.public)
        return build(
            prep,
            self.deps,
            persona=self.persona,
            impersonated=self.impersonated,
            snapshot=snapshot,
            srv=server(personal_memories_enabled=self.personalization, memory_tagging_enabled=False),
            **kwargs,
        )


tokens = st.text(alphabet="bcdfghjkmnpqrstvwxz", min_size=3, max_size=6)
NAME_POOL = ("sam", "Sam", "kim", "KIM", "al", "Al ", "bo", "@bo")


@st.composite
def worlds(draw, names: st.SearchStrategy[str] | None = None) -> World:  # type: ignore[no-untyped-def]
    count = draw(st.integers(min_value=1, max_value=5))
    deps = FakeDeps(guild_available=True, presence_intent=True, leak_all_lineages=True)
    privacy: dict[int, int] = {}
    blacklisted: set[int] = set()
    nicknames: dict[int, str] = {}
    pronouns: dict[int, str] = {}
    appearance: dict[int, str] = {}
    memories: list[Secret] = []
    name = names if names is not None else st.builds(lambda t: f"Lv{t}", tokens)
    memory_id = 1
    for i in range(count):
        token = draw(tokens)
        privacy[i] = draw(st.sampled_from(list(PrivacyLevel)))
        if draw(st.booleans()):
            blacklisted.add(i)
        nicknames[i] = f"Nk{i}q{token}z"
        pronouns[i] = f"Pr{i}q{token}z"
        appearance[i] = f"Ap{i}q{token}z"
        deps.rows[disc(i)] = UserRow(
            user_id=i + 1,
            user_disc_id=disc(i),
            username=f"user{i}",
            privacy_level=privacy[i],
            user_nickname=nicknames[i] if names is None else draw(st.one_of(st.none(), name)),
            pronouns=pronouns[i],
            gender_identity=f"Gi{i}q{token}z",
            physical_appearance_tags=(appearance[i],),
            timezone_offset=draw(st.one_of(st.none(), st.integers(-12, 14))),
        )
        if names is not None:
            nicknames[i] = deps.rows[disc(i)].user_nickname or ""
        if draw(st.booleans()):
            deps.members[disc(i)] = MemberInfo(
                disc(i),
                username=draw(name) if names is not None else f"user{i}",
                global_name=draw(st.one_of(st.none(), name)),
                nickname=draw(st.one_of(st.none(), name)),
                display_name=draw(st.one_of(st.none(), name)),
                presence_status=draw(st.sampled_from([None, "online", "idle", "dnd"])),
            )
        for k in range(draw(st.integers(min_value=0, max_value=3))):
            lineage = draw(st.sampled_from(LINEAGES))
            other = draw(st.integers(min_value=0, max_value=count - 1))
            text = f"Mm{i}q{token}k{k}z"
            content = f"{text} near <@{disc(other)}>" if draw(st.booleans()) else text
            deps.memories.append(memory(memory_id, i + 1, content, lineage=lineage, created=memory_id))
            memories.append(Secret(i, lineage, text))
            memory_id += 1
        deps.reminders.append(reminder(memory_id, disc(i), f"Rm{i}q{token}z", at_ms=NOW_MS + 100 * DAY_MS))
    deps.blacklisted = {disc(i) for i in blacklisted}
    seeds = [user_seed(disc(i), mentionable=draw(st.booleans())) for i in range(count)]
    if draw(st.booleans()):
        seeds.append(bot_seed())
    matrix: dict[str, str] = {}
    for j in range(draw(st.integers(min_value=0, max_value=2))):
        matrix_id = f"@m{j}:host"
        matrix[matrix_id] = draw(name) if names is not None else f"mx{j}"
        seeds.append(matrix_seed(matrix_id))
    persona = draw(st.sampled_from(PERSONAS))
    public = [public_profile(p) for p in PERSONAS if p.persona_id == 3 and persona.persona_id != 3]
    impersonated = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=count - 1)))
    triggerer = draw(st.one_of(st.none(), st.integers(min_value=0, max_value=count - 1)))
    return World(
        deps=deps,
        seeds=seeds,
        persona=persona,
        impersonated=disc(impersonated) if impersonated is not None else None,
        triggerer=triggerer,
        personalization=draw(st.booleans()),
        privacy=privacy,
        blacklisted=blacklisted,
        nicknames=nicknames,
        pronouns=pronouns,
        appearance=appearance,
        memories=memories,
        matrix=matrix,
        public=public,
        count=count,
    )


@given(worlds())
def test_property_p02_p03_full_users_leave_no_personal_trace(world: World) -> None:
    items = world.items()
    text = all_item_text(items)
    for i, level in world.privacy.items():
        if level != PrivacyLevel.FULL:
            continue
        assert world.nicknames[i] not in text
        assert world.pronouns[i] not in text
        assert world.appearance[i] not in text
        for secret in world.memories:
            if secret.owner == i:
                assert secret.text not in text


@given(worlds())
def test_property_p05_p06_blacklisted_users_memories_never_appear(world: World) -> None:
    text = all_item_text(world.items())
    for secret in world.memories:
        if secret.owner in world.blacklisted:
            assert secret.text not in text


@given(worlds())
def test_property_h14_no_memory_of_another_lineage_appears(world: World) -> None:
    text = all_item_text(world.items())
    allowed = {0, world.persona.persona_lineage_id}
    for secret in world.memories:
        if secret.lineage not in allowed:
            assert secret.text not in text


HANDLE = re.compile(r"@\{([^}]*)\}")


@given(worlds(names=st.sampled_from(NAME_POOL)))
def test_property_r07_d09_no_offered_handle_is_claimed_by_two_participants(world: World) -> None:
    items = world.items()
    index = ParticipantTargetIndex.from_json(items.target_index)
    claims: dict[str, set[str]] = {}
    for target in index.targets:
        for alias in target.aliases_for("output_mention"):
            claims.setdefault(alias.normalized, set()).add(target.serialized_key)
    entries = items.profile.text.split("\n\n")[2:]
    offered_by: dict[str, set[str]] = {}
    for target, entry in zip(index.targets, entries, strict=False):
        heading = entry.splitlines()[0]
        for handle in HANDLE.findall(heading):
            normalized = normalize_alias(handle)
            assert claims.get(normalized) == {target.serialized_key}
            offered_by.setdefault(normalized, set()).add(target.serialized_key)
    assert all(len(owners) == 1 for owners in offered_by.values())


activities = st.lists(
    st.builds(
        Activity,
        type=st.sampled_from(["playing", "streaming", "listening", "watching", "custom", "competing", "other"]),
        name=tokens,
        details=st.one_of(st.none(), tokens),
        state=st.one_of(st.none(), tokens),
        started_at_ms=st.one_of(st.none(), st.integers(min_value=NOW_MS - 30 * DAY_MS, max_value=NOW_MS)),
    ),
    max_size=2,
)


@given(
    worlds(),
    st.integers(min_value=0, max_value=10 * DAY_MS),
    st.lists(
        st.tuples(st.sampled_from([None, "online", "idle", "dnd", "offline"]), activities), min_size=5, max_size=5
    ),
    st.booleans(),
)
def test_property_r03_profile_text_ignores_clock_and_presence(world: World, later: int, presences, intent) -> None:  # type: ignore[no-untyped-def]
    before = world.items()
    for n, (member_id, member) in enumerate(sorted(world.deps.members.items())):
        status, acts = presences[n % len(presences)]
        world.deps.members[member_id] = replace(member, presence_status=status, activities=tuple(acts))
    world.deps.presence_intent = intent
    after = world.items(now_ms=NOW_MS + later)
    assert after.profile.text == before.profile.text
