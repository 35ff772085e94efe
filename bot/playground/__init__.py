"""The playground (issue 8): talk to a persona in the browser through the real pipeline, without Discord.

- ``models``: its stored channels and messages (app label ``bot``; ``bot/models.py`` imports them).
- ``transport``: ``PlaygroundTransport``, the ``ChatTransport`` over a stored playground channel.
- ``store``: channels, messages, reactions and uploads in the database (synchronous).
- ``service``: a message in → the same admission, turn planning and turn runner as a Discord turn
  (``bot.conversation``), spoken through ``outlet.PlaygroundOutlet``.
- ``live``: the channel-layer events of a playground channel; ``consumers``: its websocket.
- ``views`` / ``urls``: the staff-only page under ``/playground/``.

It imports ``bot.conversation``, never ``bot.discord`` or discord.py.
"""
