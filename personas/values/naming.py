"""The addressing styles a user may choose for how personas refer to them (``DiscordUser.addressing_style``).

Free of Django, so the pure pipeline (``chatcontext.core.participants.naming``) reads the same tuple the
admin offers.
"""

ADDRESSING_STYLES = ("masculine", "feminine", "neutral")
