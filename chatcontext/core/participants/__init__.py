"""The participant contributor's pure rules: names, aliases, mentions, triggers, presence, the
target index and the profile rendering (docs/behaviour/participants.md)."""
