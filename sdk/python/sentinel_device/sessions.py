"""Sessions the broker ends within seconds of accepting them.

The MQTT client id is fixed by the key, so a second connection with the same key takes the
session and the broker closes the first; two devices sharing one key then take it from each other
at every reconnect. MQTT 3.1.1 gives no reason for the close, so the pattern is what tells: each
session that lasted under SHORT_SESSION_MS doubles the wait before the next reconnect, and after
UNSTABLE_AFTER of them in a row the device is told once (until a session lasts).
"""
from ._compat import elapsed_ms, monotonic_ms
from .errors import SentinelError

SHORT_SESSION_MS = 10000
UNSTABLE_AFTER = 3


class SessionWatch:
    def __init__(self, min_backoff, max_backoff):
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.short = 0
        self.started = None

    def opened(self):
        self.started = monotonic_ms()

    def closed(self):
        """(seconds to wait before reconnecting, an error to tell the device now or None)."""
        if self.started is None:
            return self.min_backoff, None
        lasted = elapsed_ms(self.started)
        self.started = None
        if lasted >= SHORT_SESSION_MS:
            self.short = 0
            return self.min_backoff, None
        self.short += 1
        delay = min(self.min_backoff * (2 ** self.short), self.max_backoff)
        if self.short != UNSTABLE_AFTER:
            return delay, None
        return delay, SentinelError(
            "the broker closed the MQTT session within %d s of accepting it %d times in a row: another "
            "connection may be using this device's key (each takes the session from the other); "
            "reconnecting after up to %s s" % (SHORT_SESSION_MS // 1000, UNSTABLE_AFTER, self.max_backoff),
            "session_unstable")
