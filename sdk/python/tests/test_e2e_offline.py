"""Managed mode across a broker restart, end to end.

The local stack's broker is embedded in the service process, and stopping that process would stop
the HTTP API the test reads history from. So this test starts a second service process of its own
with ROLES=mqtt (an embedded broker on a port of its own, the same database and keys as the
test stack), connects the device to it, stops it with SIGTERM (a real broker shutdown: the TCP
session ends), publishes 100 messages with write_offline=True, starts the process again on the
same port and checks that all 100 are stored once and in order.
"""
import ctypes
import json
import os
import signal
import socket
import subprocess
import threading

import pytest

from conftest import stack_env
from service import call, history, new_devices, wait_for
from sentinel_device import Device, NotConnected


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def _die_with_parent():
    """Linux: the broker process gets SIGTERM if pytest is killed before its fixture can stop it."""
    ctypes.CDLL(None).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class BrokerProcess:
    """`node --import tsx src/main.ts` with ROLES=mqtt on the test stack's records."""

    def __init__(self):
        root = os.environ["SENTINEL_ROOT"]
        with open(os.path.join(os.environ["SENTINEL_DATA_DIR"], "secrets.json")) as f:
            secrets = json.load(f)
        self.port = free_port()
        self.root = root
        # The stack's records as test/support/service.ts storageEnvOf gives them: its DATA_DIR on the
        # embedded store, which an MQTT-only process shares without starting local children there.
        storage = json.loads(os.environ["SENTINEL_STORAGE_ENV"])
        self.env = dict(os.environ, ROLES="mqtt", MQTT_PORT=str(self.port), PORT=str(free_port()),
                        ENTITY_KEY_SECRET=secrets["entityKeySecret"], DATA_ENCRYPTION_KEY=secrets["dataEncryptionKey"],
                        LOG_LEVEL="warn", **storage)
        self.proc = None
        self.log = []

    @property
    def url(self):
        return "mqtt://127.0.0.1:%d" % self.port

    def start(self, timeout=90):
        node = os.environ.get("SENTINEL_NODE", "node")
        self.proc = subprocess.Popen([node, "--import", "tsx", os.path.join(self.root, "src", "main.ts")], cwd=self.root,
                                     env=self.env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                     preexec_fn=_die_with_parent)
        ready = threading.Event()

        def read(proc):
            for line in proc.stdout:
                self.log.append(line)
                if line.startswith("ready"):
                    ready.set()

        threading.Thread(target=read, args=(self.proc,), daemon=True).start()
        if not ready.wait(timeout):
            self.stop()
            raise AssertionError("the broker process was not ready within %s s:\n%s" % (timeout, "".join(self.log[-30:])))

    def stop(self):
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(30)
        self.proc = None


@pytest.fixture
def broker():
    stack_env()
    b = BrokerProcess()
    b.start()
    yield b
    b.stop()


def test_write_offline_survives_a_broker_restart_in_order_once(broker, tmp_path):
    env = stack_env()
    sender, watcher = new_devices(2, "offline")
    dev = Device(sender["apiKey"], env["base_url"], managed=True, db_path=str(tmp_path / "device.json"), mqtt_url=broker.url)
    got = []
    dev.route(tag="after-restart")(got.append)
    dev.connect()
    try:
        dev.publish({"seq": -1}, tags=["online"], write_offline=True)
        wait_for(lambda: [m for m in history(dev.name) if m["data"] == {"seq": -1}], what="the publish before the restart")

        broker.stop()
        wait_for(lambda: not dev.connected, what="the device to notice the broker is gone")
        with pytest.raises(NotConnected):
            dev.publish({"lost": True})  # without write_offline nothing is queued
        # State updates are never queued: with the broker gone this one goes over HTTP at once.
        dev.update_state({"offline": True})
        assert call("GET", "/api/entities/status-table", sender["apiKey"])[1]["statusTable"] == {"offline": True}
        for i in range(100):
            dev.publish({"seq": i}, tags=["offline"], write_offline=True)
        assert dev.pending_offline() == 100
        # The queue is in the local database file: a reboot now would not lose it.
        with open(str(tmp_path / "device.json")) as f:
            assert len(json.load(f)["outbox"]) == 100
        assert [m for m in history(dev.name) if m["data"].get("seq", -1) >= 0] == []

        broker.start()
        wait_for(lambda: dev.connected, timeout=60, what="the automatic reconnect")
        wait_for(lambda: dev.pending_offline() == 0, timeout=60, what="the queue to drain")
        seqs = wait_for(lambda: (lambda s: s if len(s) >= 100 else None)(
            [m["data"]["seq"] for m in history(dev.name, limit=100) if m["data"].get("seq", -1) >= 0]),
            timeout=30, what="100 stored messages")
        assert seqs == list(range(100))
        assert len([m for m in history(dev.name, limit=100) if m["data"] == {"lost": True}]) == 0

        # The subscriptions came back with the connection: a directed message is routed again.
        other = Device(watcher["apiKey"], env["base_url"])
        other.publish({"hello": 1}, tags=["after-restart"], entity=dev.name)
        wait_for(lambda: got, what="a directed message after the restart")
        assert got[0]["data"] == {"hello": 1}
    finally:
        dev.close()
    # Exactly once: the 100 plus the one sent before the restart, nothing twice (the directed
    # round trip above gave any late duplicate time to land).
    status, body = call("GET", "/api/entities/messages?entity_name=%s&limit=100&offset=100" % dev.name, env["account_key"])
    assert status == 200 and [m["data"] for m in body["messages"]] == [{"seq": -1}]
