"""MQTT on CPython: paho-mqtt 2.x, its network loop in a background thread.

paho reconnects by itself (loop_start) with a growing delay (reconnect_delay_set); every
successful CONNACK subscribes again, so a broker restart or a dropped link heals without the
application doing anything.
"""
import threading

import paho.mqtt.client as paho
from paho.mqtt.enums import CallbackAPIVersion

from ._compat import PUBLISH_QOS, SUBSCRIBE_QOS
from .errors import NotConnected, SentinelError, Unauthorized
from .framing import parse_url
from .sessions import SessionWatch


class MqttTransport:
    def __init__(self, client_id, username, password, url, topics, on_message, on_connect, keepalive=30,
                 min_backoff=1, max_backoff=60, on_refused=None, on_unstable=None):
        self.topics = topics
        self.on_unstable_cb = on_unstable
        self.min_backoff = min_backoff
        self.max_backoff = max_backoff
        self.watch = SessionWatch(min_backoff, max_backoff)
        self.on_message_cb = on_message
        self.on_connect_cb = on_connect
        self.on_refused_cb = on_refused
        # Set when the broker refused the key on a reconnect (rotated or deleted): retrying cannot help.
        self.dead = None
        self.host, self.port, tls = parse_url(url)
        self.keepalive = keepalive
        self.connected = False
        self._first = threading.Event()
        self._refused = None
        c = paho.Client(CallbackAPIVersion.VERSION2, client_id=client_id, clean_session=True, protocol=paho.MQTTv311)
        c.username_pw_set(username, password)
        if tls:
            c.tls_set()
        c.reconnect_delay_set(min_delay=min_backoff, max_delay=max_backoff)
        c.on_connect = self._on_connect
        c.on_disconnect = self._on_disconnect
        c.on_message = self._on_message
        self.client = c

    def _on_connect(self, client, userdata, flags, reason_code, properties):
        if reason_code.is_failure:
            self._refused = reason_code
            if self._first.is_set() and _not_authorized(reason_code):
                # A reconnect refused for the key (rotated or deleted): stop retrying and tell the device.
                self.dead = Unauthorized("MQTT connection refused on reconnect: %s (the key was rotated or deleted)" % reason_code, "not_authorized", 401)
                client.disconnect()
                if self.on_refused_cb is not None:
                    self.on_refused_cb(self.dead)
            self._first.set()
            return
        client.subscribe([(t, SUBSCRIBE_QOS) for t in self.topics])
        self.watch.opened()
        self.connected = True
        self._first.set()
        self.on_connect_cb()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties):
        self.connected = False
        delay, unstable = self.watch.closed()
        # paho waits min_delay before its next attempt (and doubles it while attempts fail).
        client.reconnect_delay_set(min_delay=delay, max_delay=max(delay, self.max_backoff))
        if unstable is not None and self.on_unstable_cb is not None:
            self.on_unstable_cb(unstable)

    def _on_message(self, client, userdata, msg):
        self.on_message_cb(msg.topic, msg.payload)

    def connect(self, timeout=10):
        self.client.connect_async(self.host, self.port, keepalive=self.keepalive)
        self.client.loop_start()
        if not self._first.wait(timeout):
            self.close()
            raise NotConnected("no CONNACK from %s:%d within %s s" % (self.host, self.port, timeout))
        if self._refused is not None:
            self.close()
            reason = "MQTT connection refused: %s" % self._refused
            if _not_authorized(self._refused):
                raise Unauthorized(reason, "not_authorized", 401)
            raise SentinelError(reason, "connack_refused")

    def publish(self, topic, payload, retain=False):
        """True when the packet went to the connection; False when the link is down."""
        if not self.connected:
            return False
        info = self.client.publish(topic, payload, qos=PUBLISH_QOS, retain=retain)
        return info.rc == paho.MQTT_ERR_SUCCESS

    def close(self):
        self.connected = False
        try:
            self.client.disconnect()
        finally:
            self.client.loop_stop()


def _not_authorized(reason_code):
    """CONNACK 4/5 (MQTT 3.1.1: bad user name or password, not authorised), 0x86/0x87 as MQTT 5 spells them."""
    return reason_code.value in (0x04, 0x05, 0x86, 0x87)
