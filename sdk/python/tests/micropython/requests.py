"""A fake `requests` module for the MicroPython run: records requests and answers like the service's
/api/entities/me and /api/entities/message, so the HTTP code path runs on MicroPython too."""
import json

ME = {
    "name": "mp-dev", "resourcePath": "accounts/a1/entities/mp-dev", "apiKeyId": "kid-mp", "accountId": "a1",
    "region": "local", "tags": [],
    "mqtt": {"url": "mqtt://broker.test:1883", "topics": {
        "publish": "a1/local/kid-mp/publish", "messages": "a1/local/kid-mp/messages", "state": "a1/local/kid-mp/state"}},
}
CALLS = []
ANSWERS = []  # (status, headers, body) to answer the next requests with, before the defaults


class Response:
    def __init__(self, status, headers, body):
        self.status_code = status
        self.headers = headers
        self.content = body if isinstance(body, bytes) else json.dumps(body).encode()

    def close(self):
        pass


def request(method, url, data=None, headers=None):
    CALLS.append((method, url, data, headers))
    if ANSWERS:
        return Response(*ANSWERS.pop(0))
    if url.endswith("/api/entities/me"):
        return Response(200, {}, ME)
    if url.endswith("/api/entities/message"):
        return Response(200, {"Content-Type": "application/json"}, {"code": 200, "content": "m%d" % len(CALLS)})
    return Response(404, {}, {"reason": "not found", "code": "not_found"})
