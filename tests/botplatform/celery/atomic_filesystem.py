"""kombu's filesystem transport with a message file that appears whole.

kombu writes a message in place (``open`` then ``write``), and a worker polling the folder may move
and read the file between the two: it reads an empty file, fails to decode it and the worker stops
("Unrecoverable error: JSONDecodeError"). Writing under a name the consumer skips (it takes only
``<time>_<uuid>.<queue>.msg``) and renaming within the folder, which is atomic, removes the window.
"""

from __future__ import annotations

import os
import uuid
from time import monotonic
from typing import Any

from kombu.transport import TRANSPORT_ALIASES, filesystem
from kombu.utils.encoding import str_to_bytes
from kombu.utils.json import dumps

ALIAS = "atomicfs"


class Channel(filesystem.Channel):
    def _put(self, queue: str, payload: Any, **kwargs: Any) -> None:
        name = f"{round(monotonic() * 1000)}_{uuid.uuid4()}.{queue}.msg"
        final = os.path.join(self.data_folder_out, name)
        partial = f"{final}.partial"
        with open(partial, "wb") as f:
            f.write(str_to_bytes(dumps(payload)))
        os.replace(partial, final)


class Transport(filesystem.Transport):
    Channel = Channel


TRANSPORT_ALIASES[ALIAS] = f"{__name__}:Transport"
