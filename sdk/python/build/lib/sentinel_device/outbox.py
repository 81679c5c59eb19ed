"""Managed mode's offline queue: publishes made with write_offline=True while the broker is out of
reach wait in the local database and go out in order once the connection is back."""
from ._compat import warn
from .localdb import OUTBOX


class Outbox:
    def __init__(self, db, max_messages=1000):
        if max_messages < 1:
            raise ValueError("max_offline must be at least 1")
        self.db = db
        self.max_messages = max_messages

    def add(self, message, ttl=0):
        """Queues one message dict; when full, the oldest is dropped with a warning."""
        waiting = self.db.query(OUTBOX)
        dropped = 0
        while len(waiting) - dropped >= self.max_messages:
            self.db.delete(OUTBOX, waiting[dropped][0])
            dropped += 1
        if dropped:
            warn("offline queue full (%d messages): dropped the %d oldest" % (self.max_messages, dropped))
        return self.db.put(OUTBOX, message, ttl)

    def oldest(self):
        """(key, message) of the next message to send, or None."""
        first = self.db.query(OUTBOX, limit=1)
        return first[0] if first else None

    def remove(self, key):
        self.db.delete(OUTBOX, key)

    def __len__(self):
        return self.db.count(OUTBOX)
