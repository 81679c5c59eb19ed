"""Helpers for the end-to-end modules: the real service named by the environment."""
import json
import time
import urllib.error
import urllib.request
import uuid

from conftest import stack_env


def call(method, path, key, body=None):
    """(status, decoded JSON or raw bytes) of one request to the running service."""
    env = stack_env()
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(env["base_url"] + path, data=data, method=method,
                                 headers={"Authorization": "Bearer " + key, "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            status, raw = r.status, r.read()
    except urllib.error.HTTPError as e:
        status, raw = e.code, e.read()
    try:
        return status, json.loads(raw)
    except ValueError:
        return status, raw


def new_devices(count, prefix="py"):
    """Creates `count` entities in the test account; returns [{name, apiKey, ...}]."""
    env = stack_env()
    names = ["%s-%s-%d" % (prefix, uuid.uuid4().hex[:8], i) for i in range(count)]
    status, body = call("POST", "/api/entities/bulk", env["account_key"], {"entities": [{"name": n, "tags": []} for n in names]})
    assert status == 200 and body["created"] == count, body
    return body["results"]


def history(entity_name, limit=100):
    """Publish messages of a sender, oldest first."""
    env = stack_env()
    status, body = call("GET", "/api/entities/messages?entity_name=%s&limit=%d" % (entity_name, limit), env["account_key"])
    assert status == 200, body
    return list(reversed(body["messages"]))


def wait_for(fn, timeout=20, what="condition"):
    """Polls fn() every 0.1 s until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = fn()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError("timed out after %s s waiting for %s" % (timeout, what))
        time.sleep(0.1)
