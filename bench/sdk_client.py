"""One CPython sentinel_device client publishing as fast as the library lets it (bench/sdk.ts).

HTTP: N sequential publish() calls; each is one request, and the library waits out 429s with the
server's Retry-After, so the rate is what one client gets end to end under the 50 requests per
second per key limit. MQTT: N publish() calls in a tight loop (QoS 0, paho queues them), then the
time until the service has stored them; errors the service sends back (rate_limited) are counted.
Prints one JSON line.
"""
import json
import os
import sys
import time
import urllib.request
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "sdk", "python"))
import sentinel_device.http as sd_http  # noqa: E402
from sentinel_device import Device  # noqa: E402

BASE = os.environ["SENTINEL_BASE_URL"]
ACCOUNT_KEY = os.environ["SENTINEL_ACCOUNT_KEY"]
N = int(os.environ.get("BENCH_SDK_MESSAGES", "500"))


def account(method, path, body=None):
    req = urllib.request.Request(BASE + path, method=method, data=json.dumps(body).encode() if body is not None else None,
                                 headers={"Authorization": "Bearer " + ACCOUNT_KEY, "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def new_device():
    name = "bench-%s" % uuid.uuid4().hex[:8]
    result = account("POST", "/api/entities/bulk", {"entities": [{"name": name, "tags": []}]})["results"][0]
    return Device(result["apiKey"], BASE)


def stored(name):
    count, offset = 0, 0
    while True:
        page = account("GET", "/api/entities/messages?entity_name=%s&limit=100&offset=%d" % (name, offset))
        count += len(page["messages"])
        if page["next_cursor"] is None:
            return count
        offset = page["next_cursor"]


def bench_http():
    dev = new_device()
    waits = []
    real_sleep = sd_http.sleep
    sd_http.sleep = lambda s: (waits.append(s), real_sleep(s))
    latencies = []
    t0 = time.perf_counter()
    for i in range(N):
        t = time.perf_counter()
        dev.publish({"seq": i, "temp": 20.5}, tags=["bench"])
        latencies.append(time.perf_counter() - t)
    elapsed = time.perf_counter() - t0
    sd_http.sleep = real_sleep
    latencies.sort()
    fast = sorted(l for l in latencies if l < 0.5)
    return {"messages": N, "seconds": round(elapsed, 2), "per_second": round(N / elapsed, 1), "retry_after_waits": len(waits),
            "call_p50_ms": round(fast[len(fast) // 2] * 1000, 2) if fast else None, "stored": stored(dev.name)}


def bench_mqtt(rate=None):
    """A burst (rate None) or a steady `rate` per second; then waits until every publish is stored
    or came back refused with an error message."""
    dev = new_device()
    errors = []
    dev.error_handler(errors.append)
    dev.connect()
    t0 = time.perf_counter()
    for i in range(N):
        if rate:
            delay = t0 + i / rate - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        dev.publish({"seq": i, "temp": 20.5}, tags=["bench"])
    handed = time.perf_counter() - t0
    deadline = time.monotonic() + 120
    while True:
        count = stored(dev.name)
        if count + len(errors) >= N or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    done = time.perf_counter() - t0
    codes = {}
    for e in errors:
        codes[e.code] = codes.get(e.code, 0) + 1
    dev.close()
    return {"rate_offered": rate, "messages": N, "publish_calls_per_second": round(N / handed, 1), "stored": count,
            "stored_per_second": round(count / done, 1), "refused": codes, "seconds_until_all_accounted": round(done, 2)}


print(json.dumps({"http": bench_http(), "mqtt_burst": bench_mqtt(), "mqtt_paced": bench_mqtt(45)}))
