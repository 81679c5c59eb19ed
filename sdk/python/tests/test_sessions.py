"""SessionWatch: sessions the broker ends within seconds slow the reconnects and, three in a row, tell the device."""
import sentinel_device.sessions as sessions
from sentinel_device.sessions import SHORT_SESSION_MS, SessionWatch


def test_short_sessions_double_the_wait_and_the_third_in_a_row_is_reported_once(monkeypatch):
    clock = [0]
    monkeypatch.setattr(sessions, "monotonic_ms", lambda: clock[0])
    monkeypatch.setattr(sessions, "elapsed_ms", lambda since: clock[0] - since)
    w = SessionWatch(1, 60)
    assert w.closed() == (1, None)  # no session yet: the plain delay
    waits = []
    notices = []
    for _ in range(8):
        w.opened()
        clock[0] += 500  # taken over half a second after CONNACK
        delay, notice = w.closed()
        waits.append(delay)
        notices.append(notice)
    assert waits == [2, 4, 8, 16, 32, 60, 60, 60]
    reported = [n for n in notices if n is not None]
    assert len(reported) == 1 and notices[2] is reported[0]
    assert reported[0].code == "session_unstable"

    w.opened()
    clock[0] += SHORT_SESSION_MS  # a session that lasted: back to the plain delay, count reset
    assert w.closed() == (1, None)
    for _ in range(3):
        w.opened()
        clock[0] += 100
        delay, notice = w.closed()
    assert notice is not None  # a new run of short sessions is reported again
