"""Runs inside MicroPython (test/unit/sdk/micropython.test.ts) with the fake socket and requests
modules of this folder: imports the package, then exercises routing, the local database, the
offline queue, the message framing over the vendored umqtt, and streaming under asyncio. It uses a
top-level await (run with the port's runPythonAsync), so it is not a module for other interpreters. Prints one line `RESULT <json>`:
{"checks": {name: true | "failure text"}}."""
import json
import sys
import time

checks = {}


def check(name, fn):
    try:
        got = fn()
        checks[name] = True if got is True else "returned %r" % (got,)
    except Exception as e:
        checks[name] = "raised %s: %s" % (type(e).__name__, e)


import socket as fake_socket  # noqa: E402  (the fake, from this folder)
import requests as fake_http  # noqa: E402

import sentinel_device  # noqa: E402
from sentinel_device import Device, NotFound, RateLimited  # noqa: E402
from sentinel_device.localdb import USER, LocalDB  # noqa: E402
from sentinel_device.routing import Router  # noqa: E402

BROKER = fake_socket.BROKER


def imports():
    mods = set(sys.modules)
    assert sys.implementation.name == "micropython"
    assert "sentinel_device.mqtt_micro" in mods and "sentinel_device.vendor.umqtt.simple" in mods, sorted(mods)
    assert "sentinel_device.mqtt_paho" not in mods
    for cpython_only in ("threading", "urllib", "paho", "warnings", "zipfile", "email", "logging"):
        assert cpython_only not in mods, cpython_only
    return True


def routing_table():
    import routing_cases

    f1, n1 = routing_cases.run(lambda r, h, c: r.add(h, **c), lambda r, h: setattr(r, "default", h), lambda fb: Router(fb),
                               routing_cases.router_dispatch)
    f2, n2 = routing_cases.run(lambda d, h, c: d.route(**c)(h), lambda d, h: d.default_handler(h),
                               lambda fb: Device("k", "http://svc.test", on_message=fb), routing_cases.device_dispatch)
    assert (n1, n2) == (12, 12), (n1, n2)
    assert f1 == [] and f2 == [], (f1, f2)
    return True


def local_database():
    now = [100]
    db = LocalDB("/tmp/mp-db.json", lambda: now[0])
    k1 = db.put(USER, {"room": "a"})
    k2 = db.put(USER, {"room": "b"}, 5)
    assert db.get(USER, k2) == {"room": "b"}
    assert db.query(USER, {"room": "b"}) == [(k2, {"room": "b"})]
    now[0] += 5
    assert db.get(USER, k2) is None and [k for k, _ in db.query(USER)] == [k1]
    assert db.delete(USER, k1) and not db.delete(USER, k1)
    dev = Device("k", "http://svc.test", db_path="/tmp/mp-dev-db.json")
    key = dev.db_put({"reading": 3}, ttl=60)
    assert dev.db_get(key) == {"reading": 3}
    assert dev.db_query(lambda v: v["reading"] > 2) == [(key, {"reading": 3})]
    assert LocalDB("/tmp/mp-dev-db.json").get(USER, key) == {"reading": 3}, "not persisted"
    assert dev.db_delete(key) and dev.db_get(key) is None
    return True


def http_framing():
    dev = Device("secret", "http://svc.test")
    fake_http.CALLS[:] = []
    mid = dev.publish("hello", tags=["a"], entity="other")
    method, url, body, headers = fake_http.CALLS[-1]
    assert (method, url) == ("POST", "http://svc.test/api/entities/message"), url
    assert headers["Authorization"] == "Bearer secret"
    assert json.loads(body) == {"msg_type": "publish", "data": {"message": "hello"}, "context": {"tags": ["a"]}, "dest": "other"}
    assert mid == "m1", mid
    fake_http.ANSWERS.append((404, {}, {"reason": 'Destination entity "x" not found', "code": "not_found"}))
    try:
        dev.publish({}, entity="x")
        return "no NotFound"
    except NotFound as e:
        assert e.code == "not_found"
    return True


def pump(dev, until, seconds=10):
    deadline = time.ticks_add(time.ticks_ms(), seconds * 1000)
    while not until():
        if time.ticks_diff(deadline, time.ticks_ms()) < 0:
            raise AssertionError("timed out")
        dev.check_msg()
        time.sleep(0.02)


def mqtt_and_offline_queue():
    BROKER.reset()
    dev = Device("secret", "http://svc.test", managed=True, db_path="/tmp/mp-queue.json", max_offline=5)
    routed, states, errors = [], [], []
    dev.route(tag="cmd")(routed.append)
    dev.state_handler(states.append)
    dev.error_handler(errors.append)
    dev.connect()
    t = dev.topics
    assert BROKER.connects == [("accounts/a1/entities/mp-dev", "kid-mp", "secret")], BROKER.connects
    assert BROKER.subscriptions == [(t["messages"], 1), (t["state"], 1)], BROKER.subscriptions

    # Inbound framing: a directed message, a state table and an error, as the service sends them.
    BROKER.inject(t["messages"], b'{"msg_type":"publish","data":{"go":1},"tags":["cmd"],"source":"accounts/a1/entities/x"}', pid=11)
    BROKER.inject(t["state"], b'{"statusTable":{"led":"on"}}', qos=0)
    BROKER.inject(t["messages"], b'{"msg_type":"error","data":{"reason":"slow","code":"rate_limited","status":429,"retry_after":2}}', pid=12)
    pump(dev, lambda: routed and states and errors)
    assert routed[0]["data"] == {"go": 1} and states == [{"led": "on"}], (routed, states)
    assert isinstance(errors[0], RateLimited) and errors[0].retry_after == 2
    assert BROKER.pubacks == [11, 12], BROKER.pubacks

    # Online: published at once, QoS 0; state updates never queue.
    dev.publish({"seq": -1}, tags=["x"], write_offline=True)
    dev.update_state({"fw": 2})
    topic, payload, qos, retain = BROKER.published[-2]
    assert (topic, qos, retain) == (t["publish"], 0, 0)
    assert json.loads(payload) == {"msg_type": "publish", "data": {"seq": -1}, "context": {"tags": ["x"]}}
    assert json.loads(BROKER.published[-1][1]) == {"msg_type": "state_update", "data": {"fw": 2}}

    # Offline: the link drops; 7 publishes into a queue of 5 keep the newest 5, in order.
    BROKER.go_down()
    pump(dev, lambda: not dev.connected)
    for i in range(7):
        dev.publish({"seq": i}, write_offline=True)
    assert dev.pending_offline() == 5
    before = len(BROKER.published)
    BROKER.come_up()
    pump(dev, lambda: dev.pending_offline() == 0)
    sent = [json.loads(p[1])["data"]["seq"] for p in BROKER.published[before:]]
    assert sent == [2, 3, 4, 5, 6], sent
    stamps = [json.loads(p[1]).get("timestamp") for p in BROKER.published[before:]]
    assert all(stamps) and stamps == sorted(stamps), stamps
    # Reconnected with the same identity and subscribed again.
    assert len(BROKER.connects) == 2 and BROKER.subscriptions[2:] == [(t["messages"], 1), (t["state"], 1)]
    dev.close()
    return True


def zip_and_multipart():
    import binascii
    import struct

    from sentinel_device.packing import multipart, stored_zip

    z = stored_zip([("frame_000000.jpg", b"\xff\xd8a\xff\xd9"), ("frame_000001.jpg", b"\xff\xd8b\xff\xd9")])
    sig, _, _, _, _, _, crc, size = struct.unpack("<IHHHHHII", z[:22])
    assert sig == 0x04034B50 and crc == binascii.crc32(b"\xff\xd8a\xff\xd9") and size == 5
    assert z[-22:-18] == b"PK\x05\x06"
    body, ctype = multipart([("kind", "clip")], "file", "c.zip", z, "application/zip")
    boundary = ctype.split("boundary=")[1].encode()
    assert body.startswith(b"--" + boundary) and body.endswith(b"--" + boundary + b"--\r\n") and z in body
    return True


async def streaming():
    dev = Device("k", "http://svc.test")
    fake_http.CALLS[:] = []
    accepted = (202, {}, {"id": "c", "status": "scanning"})
    fake_http.ANSWERS[:] = [accepted, accepted]
    taken = []

    def capture(framesize, quality):
        taken.append((framesize, quality))
        if len(taken) == 4:
            dev.stop_streaming()
        return b"\xff\xd8frame\xff\xd9"

    ids = await dev.start_streaming(capture, target_fps=30, framesize="QQVGA", segment_seconds=0.1)
    uploads = [c for c in fake_http.CALLS if c[1].endswith("/api/entities/files")]
    assert ids == ["c", "c"] and taken[0] == ("QQVGA", 70), (ids, taken)
    assert len(uploads) == 2 and b'name="kind"\r\n\r\nclip' in uploads[0][2] and b"jpeg_burst" in uploads[0][2]
    return True


check("imports only MicroPython modules", imports)
check("routing table: 12 cases on Router and Device", routing_table)
check("local database: put/get/query/delete with TTL, persisted", local_database)
check("HTTP framing and typed errors through requests", http_framing)
check("MQTT framing, routing, offline queue, reconnect and resubscribe", mqtt_and_offline_queue)
check("stored zip and multipart", zip_and_multipart)
# The WebAssembly port's asyncio runs on the JavaScript event loop: the runner executes this file
# with runPythonAsync, so a top-level await drives the coroutine.
try:
    checks["streaming uploads jpeg_burst segments under asyncio"] = await streaming()  # noqa: F704
except Exception as e:
    checks["streaming uploads jpeg_burst segments under asyncio"] = "raised %s: %s" % (type(e).__name__, e)
print("RESULT " + json.dumps({"checks": checks, "version": sentinel_device.__version__}))
