"""The playground (issue 8): talk to a persona in the browser through the real pipeline, without Discord.

- ``transport``: ``PlaygroundTransport``, the ``ChatTransport`` over a stored playground channel.
- ``store``: channels, messages, reactions and uploads in the database (synchronous).
- ``service``: a message in → the same admission, turn planning, Build Context, generation and
  prompt record path as a Discord turn.
- ``live``: the channel-layer events of a playground channel; ``consumers``: its websocket.
- ``views`` / ``urls``: the staff-only page under ``/playground/``.
"""
