"""The Device: one entity of the service, talking HTTP and MQTT (docs/contract.md §9)."""
import json

from . import framing
from ._compat import MICROPYTHON, compact_json, elapsed_ms, epoch_ms, make_lock, monotonic_ms, rfc3339, sleep, warn
from .errors import NotConnected, PayloadTooLarge
from .files import FilesMixin
from .http import HttpClient
from .localdb import USER, LocalDB
from .outbox import Outbox
from .routing import Router

if MICROPYTHON:
    from .mqtt_micro import MqttTransport
else:
    from .mqtt_paho import MqttTransport

MAX_DATA_BYTES = 5120


class Device(FilesMixin):
    """A device of the service.

    Device(api_key, base_url, *, on_message=None, managed=False, db_path=None)

    Without connect() everything goes over HTTP. After connect() publishes and state updates go
    over MQTT and inbound messages arrive through the routes. `managed=True` enables the offline
    queue (publish(..., write_offline=True)).
    """

    def __init__(self, api_key, base_url, *, on_message=None, managed=False, db_path=None, mqtt_url=None,
                 max_offline=1000, drain_rate=20, timeout=30):
        self.http = HttpClient(base_url, api_key, timeout=timeout)
        self.api_key = api_key
        self.managed = managed
        self.router = Router(on_message)
        self.on_state = None
        self.on_error = None
        self.db = LocalDB(db_path)
        self.outbox = Outbox(self.db, max_offline) if managed else None
        if drain_rate <= 0:
            raise ValueError("drain_rate is messages per second, above 0")
        self.drain_interval_ms = int(1000 / drain_rate)
        self._last_drain = None
        self._drainer = None
        self._lock = make_lock()
        self._last_ts = 0
        self._streaming = False
        self.me = self.http.json("GET", "/api/entities/me")
        self.name = self.me["name"]
        self.topics = self.me["mqtt"]["topics"]
        self.mqtt_url = mqtt_url or self.me["mqtt"]["url"]
        self.mqtt = None

    # ---------------------------------------------------------------- connection
    def connect(self, timeout=10):
        """Connects to the broker and subscribes to the messages and state topics; returns once connected."""
        if self.mqtt is not None:
            return
        self.mqtt = MqttTransport(self.me["resourcePath"], self.me["apiKeyId"], self.api_key, self.mqtt_url,
                                  [self.topics["messages"], self.topics["state"]], self._on_mqtt, self._on_connected,
                                  on_refused=self._error, on_unstable=self._error)
        try:
            self.mqtt.connect(timeout)
        except Exception:
            self.mqtt = None
            raise

    @property
    def connected(self):
        return self.mqtt is not None and self.mqtt.connected

    def close(self):
        self._streaming = False
        if self.mqtt is not None:
            self.mqtt.close()
            self.mqtt = None
        if self._drainer is not None:
            self._drainer.join(5)
            self._drainer = None

    def check_msg(self):
        """MicroPython: handle what arrived, keep the link up, send a due queued message. Call it often."""
        if self.mqtt is None:
            raise NotConnected("call connect() first")
        self.mqtt.poll()
        self._drain_due()

    def run_forever(self, idle=0.05):
        """MicroPython: check_msg() in a loop."""
        while self.mqtt is not None:
            self.check_msg()
            sleep(idle)

    # ---------------------------------------------------------------- sending
    def publish(self, data, tags=None, entity="", write_offline=False, db_ttl=0):
        """Publishes telemetry; `entity` names a destination device (empty: a plain publish of this device).

        Over HTTP it returns the message id; over MQTT (QoS 0) None. With write_offline=True
        (managed mode) a publish made while the broker is out of reach is queued in the local
        database, expiring after db_ttl seconds (0: never), and sent in order on reconnect.
        """
        if write_offline and not self.managed:
            raise ValueError("write_offline=True needs Device(..., managed=True)")
        msg = framing.build("publish", data, tags, dest=entity or None)
        self._check_size(msg)
        if self.mqtt is None and not write_offline:
            return self._send_http(msg)
        with self._lock:
            if write_offline and (not self.connected or len(self.outbox)):
                self._queue(msg, db_ttl)
                return None
            if self.mqtt is not None and self.mqtt.publish(self.topics["publish"], framing.encode(msg)):
                return None
            if write_offline:
                # Kept in the local database even for a dead key: a Device with the new key and the
                # same db_path sends it.
                self._queue(msg, db_ttl)
                return None
        dead = self.mqtt.dead if self.mqtt is not None else None
        if dead is not None:
            raise dead
        raise NotConnected()

    def update_state(self, data, tags=None):
        """Merges `data` into the state table. Sent at once (MQTT when connected, else HTTP), never queued."""
        return self._send_state("state_update", data, tags)

    def replace_state(self, data, tags=None):
        """Replaces the whole state table. Sent at once, never queued."""
        return self._send_state("state_new", data, tags)

    def heartbeat(self, mem_free=None, mem_total=None, disk_free=None, disk_size=None):
        """Marks the device online and records the metrics given (HTTP)."""
        data = {}
        for k, v in (("mem_free", mem_free), ("mem_total", mem_total), ("disk_free", disk_free), ("disk_size", disk_size)):
            if v is not None:
                data[k] = v
        self.http.request("POST", "/api/entities/message", json_body={"msg_type": "heartbeat", "data": data})

    def check_messages(self, limit=1):
        """Polls waiting directed messages over HTTP, routes each one, and returns them."""
        body = self.http.json("GET", "/api/entities/check_messages", query={"limit": limit})
        messages = body.get("messages") or []
        for m in messages:
            if m.get("tags") is None:
                m["tags"] = []
            self._dispatch(m)
        return messages

    def _send_state(self, msg_type, data, tags):
        if not isinstance(data, dict):
            raise TypeError("the state table is a dict")
        msg = framing.build(msg_type, data, tags)
        self._check_size(msg)
        if self.connected and self.mqtt.publish(self.topics["publish"], framing.encode(msg)):
            return None
        return self._send_http(msg)

    def _send_http(self, msg):
        body = self.http.json("POST", "/api/entities/message", json_body=msg)
        return body.get("content") if body else None

    def _check_size(self, msg):
        # Measured as the service measures it: compact UTF-8 JSON (escaped non-ASCII text and ", "
        # separators once counted up to three times the bytes). Raises ValueError for NaN/Infinity.
        size = len(compact_json(msg.get("data", {})).encode("utf-8"))
        if size > MAX_DATA_BYTES:
            raise PayloadTooLarge("message data is %d bytes; the limit is %d" % (size, MAX_DATA_BYTES), "payload_too_large", 413)

    # ---------------------------------------------------------------- offline queue
    def _timestamp(self):
        """Strictly increasing RFC 3339 times, so queued messages keep their order in history."""
        now = epoch_ms()
        if now is None:
            return None
        if now <= self._last_ts:
            now = self._last_ts + 1
        self._last_ts = now
        return rfc3339(now)

    def _queue(self, msg, ttl):
        # The time the reading was taken, not the time the link came back.
        msg["timestamp"] = self._timestamp()
        if msg["timestamp"] is None:
            del msg["timestamp"]
        self.outbox.add(msg, ttl)

    def _drain_due(self):
        """Sends the oldest queued message when connected and the pacing allows; True if one went out."""
        mqtt = self.mqtt  # close() may clear it from another thread
        if self.outbox is None or mqtt is None or not mqtt.connected:
            return False
        if self._last_drain is not None and elapsed_ms(self._last_drain) < self.drain_interval_ms:
            return False
        with self._lock:
            head = self.outbox.oldest()
            if head is None:
                return False
            key, msg = head
            if not mqtt.publish(self.topics["publish"], framing.encode(msg)):
                return False
            self.outbox.remove(key)
        self._last_drain = monotonic_ms()
        return True

    def _on_connected(self):
        if self.outbox is None or MICROPYTHON:
            return
        # paho calls this on its network thread, which must keep reading: drain on a thread of our own,
        # paced under the service's 50 requests per second per key.
        import threading

        if self._drainer is not None and self._drainer.is_alive():
            return
        self._drainer = threading.Thread(target=self._drain_loop, name="sentinel-outbox", daemon=True)
        self._drainer.start()

    def _drain_loop(self):
        while self.connected and len(self.outbox):
            if not self._drain_due():
                sleep(self.drain_interval_ms / 4000)

    def pending_offline(self):
        """How many publishes wait in the offline queue."""
        return len(self.outbox) if self.outbox is not None else 0

    # ---------------------------------------------------------------- receiving
    def route(self, msg_type=None, tag=None, tags=None, tags_all=None):
        """Decorator: @device.route(msg_type=..., tag=..., tags=[...], tags_all=[...])."""

        def register(handler):
            return self.router.add(handler, msg_type, tag, tags, tags_all)

        return register

    def default_handler(self, handler):
        """Decorator: takes messages no route matched."""
        self.router.default = handler
        return handler

    def state_handler(self, handler):
        """Decorator: called with the whole state table after each remote change (MQTT)."""
        self.on_state = handler
        return handler

    def error_handler(self, handler):
        """Decorator: called with a SentinelError for each error the service sends over MQTT."""
        self.on_error = handler
        return handler

    def _on_mqtt(self, topic, payload):
        # Runs on the network loop (paho's thread, or check_msg): nothing a payload holds may raise
        # out of here, or the loop would end while `connected` stays True.
        try:
            if topic == self.topics["state"]:
                table = framing.decode_state(payload)
                if self.on_state is not None:
                    _guarded(self.on_state, table)
                return
            msg, err = framing.decode_inbound(payload)
            if err is not None:
                self._error(err)
            else:
                self._dispatch(msg)
        except Exception as e:
            warn("ignored an inbound MQTT payload that is not a message: %r" % e)

    def _dispatch(self, msg):
        handler = self.router.handler_for(msg)
        if handler is None:
            warn("no handler for a %s message from %s" % (msg.get("msg_type"), msg.get("source")))
        else:
            _guarded(handler, msg)

    def _error(self, err):
        if self.on_error is not None:
            _guarded(self.on_error, err)
        else:
            warn("the service refused a message: %s" % err)

    # ---------------------------------------------------------------- local database
    def db_put(self, data, ttl=0):
        """Stores `data` (anything JSON can hold); returns the generated key. ttl seconds, 0 = no expiry."""
        return self.db.put(USER, data, ttl)

    def db_get(self, key):
        """The stored value, or None when absent or expired."""
        return self.db.get(USER, key)

    def db_query(self, where=None, limit=0):
        """[(key, value)] oldest first; `where` is a dict of fields to equal or a function of the value."""
        return self.db.query(USER, where, limit)

    def db_delete(self, key):
        """True when the key existed."""
        return self.db.delete(USER, key)


def _guarded(handler, arg):
    """Runs a user callback; one that raises must not take the network loop down with it."""
    try:
        handler(arg)
    except Exception as e:
        warn("handler %s raised %r" % (getattr(handler, "__name__", "?"), e))
