import json
import warnings

import pytest

from sentinel_device.localdb import OUTBOX, USER, LocalDB
from sentinel_device.outbox import Outbox


class Clock:
    def __init__(self):
        self.t = 1000.0

    def __call__(self):
        return self.t


def test_put_get_query_delete_with_ttl(tmp_path):
    clock = Clock()
    db = LocalDB(str(tmp_path / "db.json"), clock)
    k1 = db.put(USER, {"room": "a", "t": 1})
    k2 = db.put(USER, {"room": "b", "t": 2}, ttl=10)
    k3 = db.put(USER, "plain")
    assert len({k1, k2, k3}) == 3
    assert db.get(USER, k2) == {"room": "b", "t": 2}
    assert [k for k, _ in db.query(USER)] == [k1, k2, k3]
    assert db.query(USER, {"room": "b"}) == [(k2, {"room": "b", "t": 2})]
    assert db.query(USER, lambda v: isinstance(v, str)) == [(k3, "plain")]
    assert db.query(USER, limit=1) == [(k1, {"room": "a", "t": 1})]
    clock.t += 10
    assert db.get(USER, k2) is None
    assert [k for k, _ in db.query(USER)] == [k1, k3]
    assert db.delete(USER, k1) is True
    assert db.delete(USER, k1) is False
    # A reopened database sees the same entries and keeps generating new keys.
    again = LocalDB(str(tmp_path / "db.json"), clock)
    assert again.query(USER) == [(k3, "plain")]
    assert again.put(USER, 1) not in (k1, k2, k3)
    with pytest.raises(ValueError):
        db.put(USER, 1, ttl=-1)


def test_outbox_is_ordered_bounded_and_drops_the_oldest_with_a_warning(tmp_path):
    db = LocalDB(str(tmp_path / "q.json"))
    box = Outbox(db, max_messages=3)
    for i in range(3):
        box.add({"seq": i})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        box.add({"seq": 3})
    assert any("dropped the 1 oldest" in str(w.message) for w in caught)
    assert len(box) == 3
    seen = []
    while box.oldest() is not None:
        key, msg = box.oldest()
        seen.append(msg["seq"])
        box.remove(key)
    assert seen == [1, 2, 3]
    # The queue lives in its own table: user queries never see it.
    box.add({"seq": 9})
    assert db.query(USER) == []
    assert json.load(open(tmp_path / "q.json"))[OUTBOX]


def test_threads_writing_at_once_keep_the_file_whole(tmp_path):
    # An outside probe: db_put from the app thread while the outbox drained on its own thread broke
    # the rewrite (dictionary changed size, a missing .tmp) and killed the drain thread.
    import threading

    path = str(tmp_path / "db.json")
    db = LocalDB(path)
    errors = []

    def writer(table, n):
        try:
            for i in range(n):
                key = db.put(table, {"i": i, "pad": "x" * 50})
                if table == OUTBOX and i % 2:
                    db.delete(table, key)
        except Exception as e:  # noqa: BLE001 - any exception is the failure
            errors.append(e)

    threads = [threading.Thread(target=writer, args=(t, 150)) for t in (USER, USER, OUTBOX, OUTBOX)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    again = LocalDB(path)
    assert again.count(USER) == 300
    assert again.count(OUTBOX) == 150
