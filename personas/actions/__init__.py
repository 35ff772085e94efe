"""Every mutation a moderator, the API, a slash command or a task makes to personalization data.

Zulip-style actions: one function per intent, each one database transaction, so the admin, the API
and the bot cannot drift apart in how they enforce limits (data-model.md §2.11, §3) or what
"forget me" deletes. Callers pass model instances or snowflake strings; nothing here reads a request.
"""

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
    ForgetResult,
    forget_user,
    records_about,
    user_forgotten,
)
from personas.actions.memories import (
    add_personal_memory,
    add_server_memory,
    check_new_personal_memory,
    check_new_server_memory,
    delete_personal_memories,
    delete_personal_memory,
    persona_memory_lineage,
    update_personal_memory,
    update_server_memory,
)
from personas.actions.moderation import (
    add_to_blacklist,
    remove_from_blacklist,
)
from personas.actions.moderators import (
    ModeratorGrant,
    add_moderator,
    check_moderator_username,
)
from personas.actions.reminders import (
    cancel_reminder,
    retry_reminder,
)
from personas.actions.servers import (
    register_server,
)
from personas.actions.users import (
    register_user,
    set_privacy_level,
)

__all__ = [
    "ActionError",
    "ForgetResult",
    "InvalidLineage",
    "MemoryLimitReached",
    "MemoryTooLong",
    "ModeratorAccountRefused",
    "ModeratorGrant",
    "ReminderNotCancellable",
    "ReminderNotRetryable",
    "add_moderator",
    "add_personal_memory",
    "add_server_memory",
    "add_to_blacklist",
    "cancel_reminder",
    "check_moderator_username",
    "check_new_personal_memory",
    "check_new_server_memory",
    "delete_personal_memories",
    "delete_personal_memory",
    "forget_user",
    "persona_memory_lineage",
    "records_about",
    "register_server",
    "register_user",
    "remove_from_blacklist",
    "retry_reminder",
    "set_privacy_level",
    "update_personal_memory",
    "update_server_memory",
    "user_forgotten",
]
