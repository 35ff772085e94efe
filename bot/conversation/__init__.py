"""A conversation turn with no transport in it: admission (``admission``), per-channel planning
(``planner``), the one turn runner and its outlet protocol (``runner``), the rows a turn routes by
(``state``), the database seam (``db``), reminder turns (``reminders``), the platform's own words
(``texts``) and the LLM providers (``providers``).

``bot.discord`` and ``bot.playground`` are the surfaces over it: they import it, and it imports
neither of them, nor discord.py (README, Architecture; ``tests/bot/test_package_imports.py``).
"""
