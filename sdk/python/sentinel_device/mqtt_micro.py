"""MQTT on MicroPython: the vendored umqtt.simple, driven by the application's loop.

No threads: Device.check_msg() (or run_forever()) calls poll() here, which reads what arrived,
keeps the connection alive with pings, and after a failure reconnects with a doubling delay and
subscribes again.
"""
from ._compat import OPENMV, PUBLISH_QOS, SUBSCRIBE_QOS, elapsed_ms, monotonic_ms
from .errors import NotConnected, SentinelError, Unauthorized
from .framing import parse_url
from .sessions import SessionWatch

if OPENMV:
    # OpenMV firmware ships its own umqtt-style `mqtt` module (docs/contract.md §9 "Transport").
    from mqtt import MQTTClient, MQTTException
else:
    from .vendor.umqtt.simple import MQTTClient, MQTTException


class MqttTransport:
    def __init__(self, client_id, username, password, url, topics, on_message, on_connect, keepalive=30,
                 min_backoff=1, max_backoff=60, on_refused=None, on_unstable=None):
        host, port, tls = parse_url(url)
        self.on_unstable_cb = on_unstable
        self.watch = SessionWatch(min_backoff, max_backoff)
        ssl = None
        if tls:
            import ssl as ssl_module

            ssl = ssl_module.SSLContext(ssl_module.PROTOCOL_TLS_CLIENT)
        self.topics = topics
        self.on_refused_cb = on_refused
        # Set when the broker refused the key on a reconnect (rotated or deleted): retrying cannot help.
        self.dead = None
        self.on_connect_cb = on_connect
        self.keepalive = keepalive
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.backoff = min_backoff
        self.connected = False
        self.retry_at = None
        self.last_io = monotonic_ms()
        self.client = MQTTClient(client_id, host, port, user=username, password=password, keepalive=keepalive, ssl=ssl)
        self.client.set_callback(lambda topic, msg: on_message(topic.decode("utf-8"), msg))

    def _open(self, timeout):
        try:
            self.client.connect(clean_session=True, timeout=timeout)
        except MQTTException as e:
            code = e.args[0] if e.args else None
            if code in (4, 5):
                raise Unauthorized("MQTT connection refused (CONNACK %s)" % code, "not_authorized", 401)
            raise SentinelError("MQTT connection refused (CONNACK %s)" % code, "connack_refused")
        for t in self.topics:
            self.client.subscribe(t, SUBSCRIBE_QOS)
        self.client.sock.settimeout(None)
        self.connected = True
        self.watch.opened()
        self.last_io = monotonic_ms()
        self.on_connect_cb()

    def connect(self, timeout=10):
        try:
            self._open(timeout)
        except OSError as e:
            raise NotConnected("cannot reach the MQTT broker: %s" % e)

    def _lost(self):
        unstable = None
        if self.connected:
            # A session ended: wait as long as its length says (SessionWatch), doubling from there
            # while reconnects fail.
            self.backoff, unstable = self.watch.closed()
        self.connected = False
        try:
            self.client.sock.close()
        except Exception:
            pass
        self.retry_at = monotonic_ms() + self.backoff * 1000
        self.backoff = min(self.backoff * 2, self.max_backoff)
        if unstable is not None and self.on_unstable_cb is not None:
            self.on_unstable_cb(unstable)

    def poll(self):
        """Handles what arrived (callbacks run here) and keeps the link up. Never raises on a lost link."""
        if not self.connected:
            if self.retry_at is not None and elapsed_ms(self.retry_at) >= 0:
                try:
                    self._open(10)
                except Unauthorized as e:
                    # The key was rotated or deleted: retrying cannot help; stop and tell the device.
                    self._lost()
                    self.retry_at = None
                    self.dead = e
                    if self.on_refused_cb is not None:
                        self.on_refused_cb(e)
                except (OSError, SentinelError):
                    self._lost()
            return
        try:
            while self.client.check_msg() is not None:
                self.last_io = monotonic_ms()
            if elapsed_ms(self.last_io) > self.keepalive * 500:
                self.client.ping()
                self.last_io = monotonic_ms()
        except (OSError, IndexError):
            # IndexError: umqtt indexes an empty read when the peer closed the socket.
            self._lost()

    def publish(self, topic, payload, retain=False):
        if not self.connected:
            return False
        try:
            self.client.publish(topic, payload, retain, PUBLISH_QOS)
            self.last_io = monotonic_ms()
            return True
        except OSError:
            self._lost()
            return False

    def close(self):
        if self.connected:
            try:
                self.client.disconnect()
            except OSError:
                pass
        self.connected = False
        self.retry_at = None
