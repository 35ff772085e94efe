"""BC7-03/04: impersonation identity and its effects on the builder."""

from __future__ import annotations

from chatcontext.core.builder import build_context
from chatcontext.core.impersonation import ImpersonationIdentity, impersonation_tail_directive, resolve_impersonation
from chatcontext.core.types import Author, ChatIncoming, ContextItemTag, MemberInfo, UserRow
from tests.chatcontext.turn_factory import U1, U2, entry, inputs, message, tomori_entry

IMPERSONATING_BOB = ChatIncoming(message=message(), is_user_impersonation=True, impersonated_user_id=U2)


def test_bc7_03_not_an_impersonation_turn() -> None:
    assert resolve_impersonation(ChatIncoming(message=message()), user_row=None) is None
    assert resolve_impersonation(ChatIncoming(message=message(), is_user_impersonation=True), user_row=None) is None


def test_bc7_03_name_ladder() -> None:
    row = UserRow(user_id=2, user_disc_id=U2, user_nickname="Bobby", impersonation_prompt="Bob is terse.")
    member = MemberInfo(user_disc_id=U2, username="bob01", global_name="Bob G", display_name="Bob Server")
    user = Author(id=U2, username="bob01", global_name="Bob G", display_name="Bob Display")

    identity = resolve_impersonation(IMPERSONATING_BOB, user_row=row, member=member, user=user)
    assert identity == ImpersonationIdentity(U2, "Bob Server", "Bob is terse.")
    assert resolve_impersonation(IMPERSONATING_BOB, user_row=row, user=user).nickname == "Bob Display"  # type: ignore[union-attr]
    no_display = Author(id=U2, username="bob01", global_name="Bob G")
    assert resolve_impersonation(IMPERSONATING_BOB, user_row=row, user=no_display).nickname == "Bob G"  # type: ignore[union-attr]
    assert resolve_impersonation(IMPERSONATING_BOB, user_row=row).nickname == "Bobby"  # type: ignore[union-attr]
    assert resolve_impersonation(IMPERSONATING_BOB, user_row=None).nickname == "User"  # type: ignore[union-attr]


def test_bc7_03_history_label_overrides_the_ladder() -> None:
    member = MemberInfo(user_disc_id=U2, username="bob01", display_name="Bob Server")
    identity = resolve_impersonation(
        IMPERSONATING_BOB, user_row=None, member=member, history_user_labels={U2: "Sir Bob"}
    )
    assert identity is not None and identity.nickname == "Sir Bob"


def test_bc7_04_tail_directive_and_fallback() -> None:
    assert impersonation_tail_directive("Bob") == "Imitate Bob, start your message with Bob:"
    assert impersonation_tail_directive("  ") == "Imitate User, start your message with User:"


def test_bc7_04_builder_writes_as_the_impersonated_user() -> None:
    identity = ImpersonationIdentity(U2, "Bob", "Bob is terse and sarcastic.")
    history = [entry("m1", U1, "Ann", "hey bob"), entry("m2", U2, "Bob", "what"), tomori_entry("m3", "hi both")]
    output = build_context(inputs(history, impersonation=identity))

    assert output.tail_directives == ["Imitate Bob, start your message with Bob:"]
    personality = next(i for i in output.items if i.metadata_tag == ContextItemTag.SYSTEM_PERSONALITY)
    assert personality.text == "Bob is terse and sarcastic."
    everything = "\n".join(i.text for i in output.items)
    # The persona is not speaking: its prompt and private attributes stay out of the prompt.
    assert "afraid of thunder" not in everything
    roles = {i.message_id: i.role for i in output.items if i.metadata_tag == ContextItemTag.DIALOGUE_HISTORY}
    assert roles == {"m1": "user", "m2": "model", "m3": "user"}
