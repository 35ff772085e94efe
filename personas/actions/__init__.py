"""Every mutation a moderator, the API, a slash command or a task makes to personalization data.

Zulip-style actions: one function per intent, each one database transaction, so the admin, the API
and the bot cannot drift apart in how they enforce limits (data-model.md §2.11, §3) or what
forget-me deletes of personas' rows (the whole of forget-me is ``community.forget``). Callers pass
model instances or snowflake strings and the ``Actor`` making the write (recorded by the audit
trail); nothing here reads a request.
"""

from personas.actions.actor import (
    Actor,
    current_actor,
    recording,
)
from personas.actions.errors import (
    ActionError,
    InvalidLineage,
    MemoryLimitReached,
    MemoryTooLong,
    ModeratorAccountRefused,
    ReminderNotCancellable,
    ReminderNotRetryable,
)
from personas.actions.forget import (
    ForgottenRows,
    forget_user_rows,
)
from personas.actions.memories import (
    add_personal_memory,
    add_server_memory,
    check_lineage,
    check_new_personal_memory,
    check_new_server_memory,
    delete_personal_memories,
    delete_personal_memory,
    delete_server_memory,
    persona_memory_lineage,
    restore_personal_memory,
    restore_server_memory,
    update_personal_memory,
    update_server_memory,
)
from personas.actions.moderation import (
    add_to_blacklist,
    block_user,
    remove_from_blacklist,
    unblock_user,
)
from personas.actions.moderators import (
    ModeratorGrant,
    add_moderator,
    check_moderator_username,
)
from personas.actions.presets import import_preset
from personas.actions.reminders import (
    cancel_reminder,
    retry_reminder,
)
from personas.actions.servers import (
    register_server,
)
from personas.actions.steering import (
    NoteWrite,
    SummaryWrite,
    clean_short_term_memory,
    record_summary,
    replace_short_term_memory,
)
from personas.actions.users import (
    EDITABLE_USER_FIELDS,
    NewUser,
    add_user,
    delete_naming_preference,
    delete_user,
    ensure_user,
    register_user,
    register_users,
    set_naming_preference,
    set_privacy_level,
    update_profile,
)

__all__ = [
    "EDITABLE_USER_FIELDS",
    "ActionError",
    "Actor",
    "ForgottenRows",
    "InvalidLineage",
    "MemoryLimitReached",
    "MemoryTooLong",
    "ModeratorAccountRefused",
    "ModeratorGrant",
    "NewUser",
    "NoteWrite",
    "ReminderNotCancellable",
    "ReminderNotRetryable",
    "SummaryWrite",
    "add_moderator",
    "add_personal_memory",
    "add_server_memory",
    "add_to_blacklist",
    "add_user",
    "block_user",
    "cancel_reminder",
    "check_lineage",
    "check_moderator_username",
    "check_new_personal_memory",
    "check_new_server_memory",
    "clean_short_term_memory",
    "current_actor",
    "delete_naming_preference",
    "delete_personal_memories",
    "delete_personal_memory",
    "delete_server_memory",
    "delete_user",
    "ensure_user",
    "forget_user_rows",
    "import_preset",
    "persona_memory_lineage",
    "record_summary",
    "recording",
    "register_server",
    "register_user",
    "register_users",
    "remove_from_blacklist",
    "replace_short_term_memory",
    "restore_personal_memory",
    "restore_server_memory",
    "retry_reminder",
    "set_naming_preference",
    "set_privacy_level",
    "unblock_user",
    "update_personal_memory",
    "update_profile",
    "update_server_memory",
]
