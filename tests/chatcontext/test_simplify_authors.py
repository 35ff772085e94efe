"""Author resolution and @trigger stripping (BC3-10/11; scenarios 25–28)."""

from __future__ import annotations

from dataclasses import replace

from tests.chatcontext.builders import ANN, BOT, ELLEN, TOMORI, U1, WEBHOOK, msg, run_history, webhook_msg

TOMO = replace(TOMORI, trigger_words=("Tomo",))


def test_s25_bc3_11_at_trigger_is_stripped_from_user_text_only() -> None:
    text = "hey @tomo, mail a@Tomo"
    run = run_history([msg("m1", ANN, text), msg("m2", BOT, text)], persona=TOMO, personas=(TOMO, ELLEN))
    assert run.contents == ["hey Tomo, mail a@Tomo", text]


def test_bc3_11_quoted_trigger_words_are_unquoted() -> None:
    quoted = replace(TOMORI, trigger_words=('"Miss T"',))
    run = run_history([msg("m1", ANN, "hi @miss t!")], persona=quoted, personas=(quoted,))
    assert run.contents == ["hi Miss T!"]


def test_s26_bc3_10_persona_webhook() -> None:
    run = run_history([webhook_msg("m1", "Ellen", "hello")])
    entry = run.entries[0]
    assert (entry.author_id, entry.author_type, entry.author_name, entry.persona_name) == (
        "2",
        "persona",
        "Ellen",
        "Ellen",
    )
    assert (entry.author_persona_id, entry.author_persona_lineage_id) == (2, 20)
    # As a participant the persona is typed (U-4): a Discord user with the id "2" is someone else.
    assert run.result.synthetic_users == {"persona:2": {"display_name": "Ellen", "type": "persona"}}
    assert "persona:2" in run.result.user_ids and "2" not in run.result.user_ids


def test_s27_bc3_10_render_modifier() -> None:
    run = run_history([webhook_msg("m1", "Ann (Ellen)", "hi")])
    entry = run.entries[0]
    assert (entry.author_id, entry.author_name, entry.persona_name) == ("2", "Ellen (Ann)", "Ellen")
    assert run.result.synthetic_users == {"persona:2": {"display_name": "Ellen (Ann)", "type": "persona"}}


def test_bc3_10_render_modifier_outer_persona() -> None:
    run = run_history([webhook_msg("m1", "Ellen (shy)", "hi")])
    assert (run.entries[0].author_id, run.entries[0].author_name) == ("2", "Ellen (shy)")


def test_bc3_10_sprite_label_from_recorded_sprite() -> None:
    run = run_history([webhook_msg("m1", "Ellen", "hi")], sprite_labels={"m1": (2, "smug")})
    assert run.entries[0].author_name == "Ellen (smug)"
    # A sprite recorded for another persona does not decorate this one.
    run = run_history([webhook_msg("m1", "Ellen", "hi")], sprite_labels={"m1": (1, "smug")})
    assert run.entries[0].author_name == "Ellen"


def test_s28_bc3_10_matrix_webhook() -> None:
    run = run_history([webhook_msg("m1", "[Matrix|@al:mx.org] Al", "hi")])
    entry = run.entries[0]
    assert (entry.author_id, entry.author_name, entry.author_type) == (WEBHOOK, "Al", "user")
    assert run.result.matrix_users == {"@al:mx.org": "Al"}
    assert run.result.synthetic_users == {}


def test_bc3_10_plain_webhook_is_a_synthetic_webhook_user() -> None:
    run = run_history([webhook_msg("m1", "GitHub", "push")])
    assert run.result.synthetic_users == {WEBHOOK: {"display_name": "GitHub", "type": "webhook"}}


def test_bc3_10_impersonation_relay_is_attributed_to_the_user() -> None:
    run = run_history([webhook_msg("m1", "Annie", "as ann")], relays={WEBHOOK: U1})
    assert (run.entries[0].author_id, run.entries[0].author_name) == (U1, "Annie")
    assert run.result.synthetic_users == {}


def test_bc3_10_bot_user_is_the_main_persona() -> None:
    run = run_history([msg("m1", BOT, "hello")], persona=ELLEN)
    entry = run.entries[0]
    assert (entry.author_id, entry.author_name, entry.author_type, entry.author_persona_id) == (
        "900",
        "Tomori",
        "persona",
        1,
    )


def test_bc3_10_human_name_order() -> None:
    run = run_history([msg("m1", ANN, "a")], user_rows={})
    assert run.entries[0].author_name == "Annie"
    run = run_history([msg("m1", ANN, "a", member_display_name="Ann of Cafe")], user_rows={})
    assert run.entries[0].author_name == "Ann of Cafe"
    run = run_history([msg("m1", ANN, "a", member_display_name="Ann of Cafe")])
    assert run.entries[0].author_name == "Ann"
