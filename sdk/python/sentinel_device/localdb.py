"""The device's local database: a small key-value store with expiry, kept in one JSON file (or in
memory without a path). It also holds the managed-mode offline queue, in a table of its own, so
queued publishes survive a reboot.

The whole file is rewritten on each change (write to a temporary name, then rename): devices keep
tens to a few thousand small entries, and one format that both CPython and MicroPython read
matters more here than write cost.

Every operation holds one lock (CPython): the offline queue drains on a thread of its own while
the application calls db_* from its threads, and two writers at once once broke the file's
rewrite (and killed the drain thread, stalling the queue).
"""
import json
import os
import time

from ._compat import make_lock, warn

USER = "kv"
OUTBOX = "outbox"


def _now():
    return time.time()


class LocalDB:
    def __init__(self, path=None, clock=_now):
        self.path = path
        self.clock = clock
        self.seq = 0
        self.tables = {USER: {}, OUTBOX: {}}
        self._lock = make_lock()
        if path:
            self._load()

    def _load(self):
        try:
            with open(self.path) as f:
                saved = json.load(f)
        except OSError:
            return
        except ValueError:
            warn("local database %s is not valid JSON; starting empty" % self.path)
            return
        self.seq = saved.get("seq", 0)
        for name in self.tables:
            self.tables[name] = saved.get(name, {})

    def _save(self):
        if not self.path:
            return
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            saved = {"seq": self.seq}
            saved.update(self.tables)
            json.dump(saved, f)
        try:
            os.rename(tmp, self.path)
        except OSError:
            # MicroPython's VFS and Windows refuse to rename over an existing file.
            os.remove(self.path)
            os.rename(tmp, self.path)

    def _new_key(self):
        self.seq += 1
        return "%010d" % self.seq

    def _live(self, table):
        """Entries of a table in insertion order, expired ones removed."""
        now = self.clock()
        t = self.tables[table]
        dead = [k for k, e in t.items() if e[0] and e[0] <= now]
        for k in dead:
            del t[k]
        if dead:
            self._save()
        return sorted(t.items())

    def _put(self, table, value, ttl=0):
        if not isinstance(ttl, int) or ttl < 0:
            raise ValueError("ttl is a whole number of seconds, 0 for no expiry")
        key = self._new_key()
        self.tables[table][key] = [self.clock() + ttl if ttl else 0, value]
        self._save()
        return key

    def _get(self, table, key):
        entry = self.tables[table].get(key)
        if entry is None:
            return None
        if entry[0] and entry[0] <= self.clock():
            del self.tables[table][key]
            self._save()
            return None
        return entry[1]

    def _query(self, table, where=None, limit=0):
        """[(key, value)] oldest first. `where`: a dict every given field of a dict value must equal,
        or a function of the value returning True to keep it."""
        out = []
        for key, entry in self._live(table):
            value = entry[1]
            if where is not None:
                if callable(where):
                    if not where(value):
                        continue
                elif not isinstance(value, dict) or any(value.get(k) != v for k, v in where.items()):
                    continue
            out.append((key, value))
            if limit and len(out) >= limit:
                break
        return out

    def _delete(self, table, key):
        if key in self.tables[table]:
            del self.tables[table][key]
            self._save()
            return True
        return False

    def _count(self, table):
        return len(self._live(table))

    def put(self, table, value, ttl=0):
        with self._lock:
            return self._put(table, value, ttl)

    def get(self, table, key):
        with self._lock:
            return self._get(table, key)

    def query(self, table, where=None, limit=0):
        """[(key, value)] oldest first. `where`: a dict every given field of a dict value must equal,
        or a function of the value returning True to keep it."""
        with self._lock:
            return self._query(table, where, limit)

    def delete(self, table, key):
        with self._lock:
            return self._delete(table, key)

    def count(self, table):
        with self._lock:
            return self._count(table)
