"""The size limit both ends of the wire share: the largest request message.

The API server reads requests up to it (gRPC's receive limit) and the client sends nothing larger: a
bigger request is the client's own error, naming the request, before anything is sent. An object is
refused far below it (1.5 MiB serialized, etcd's request limit, with the server's Invalid naming the
size); the request limit sits well above that so that an oversized object still arrives and gets
that answer rather than a transport error.
"""

from __future__ import annotations

MAX_REQUEST_BYTES = 16 * 1024 * 1024
#: MAX_REQUEST_BYTES as people write it, for messages.
MAX_REQUEST_SIZE = "16 MiB"

#: The most items one Batch call carries (the server refuses more): as many as a BindGroup binds.
MAX_BATCH_ITEMS = 1000
#: How large a client lets one Batch call grow before it starts another: a quarter of the request limit,
#: so that a batch of objects near the object size limit still goes out in a few calls.
MAX_BATCH_BYTES = MAX_REQUEST_BYTES // 4
