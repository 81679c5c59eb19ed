"""HTTP to the service: the standard library on CPython, (u)requests on MicroPython.

Every error answer becomes a typed SentinelError; a 429 `rate_limited` is retried after the
server's Retry-After, a few times, before it is raised.
"""
import json

from ._compat import MICROPYTHON, compact_json, sleep
from .errors import ConnectionFailed, RateLimited, SentinelError, error_from

if MICROPYTHON:
    try:
        import requests
    except ImportError:
        import urequests as requests

    def _send(method, url, headers, body, timeout):
        try:
            r = requests.request(method, url, data=body, headers=headers)
        except OSError as e:
            raise ConnectionFailed("cannot reach %s: %s" % (_origin(url), e))
        try:
            # Older urequests parse no response headers.
            headers = getattr(r, "headers", None) or {}
            return r.status_code, {k.lower(): v for k, v in headers.items()}, r.content
        finally:
            r.close()

else:
    import http.client
    import urllib.error
    import urllib.request

    def _send(method, url, headers, body, timeout):
        req = urllib.request.Request(url, data=body, headers=headers, method=method)
        try:
            with urllib.request.urlopen(req, timeout=timeout) as r:
                return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
        except urllib.error.HTTPError as e:
            with e:
                return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()
        except urllib.error.URLError as e:
            raise ConnectionFailed("cannot reach %s: %s" % (_origin(url), e.reason)) from e
        except (OSError, http.client.HTTPException) as e:
            # A timeout or reset while reading the answer, or a reply that is not HTTP.
            raise ConnectionFailed("cannot reach %s: %s" % (_origin(url), e or type(e).__name__)) from e


def _origin(url):
    """scheme://host:port of a URL: the path and query (ids, tags) stay out of error messages."""
    rest = url.split("://", 1)
    if len(rest) != 2:
        return url
    return rest[0] + "://" + rest[1].split("/", 1)[0].split("?", 1)[0]


def quote(s):
    """Percent-encodes a query value (urllib.parse is not on MicroPython)."""
    safe = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~"
    out = []
    for b in str(s).encode("utf-8"):
        out.append(chr(b) if b in safe else "%%%02X" % b)
    return "".join(out)


def _retry_after(headers, body):
    value = headers.get("retry-after")
    try:
        return max(0, int(value))
    except (TypeError, ValueError):
        return body.get("retry_after", 1) if isinstance(body, dict) else 1


class HttpClient:
    def __init__(self, base_url, api_key, timeout=30, max_retries=3, sender=None):
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key
        self.timeout = timeout
        self.max_retries = max_retries
        self.send = sender or _send

    def request(self, method, path, json_body=None, body=None, content_type=None, query=None):
        """(status, headers, bytes) of a successful answer; raises the typed error otherwise."""
        url = self.base_url + path
        if query:
            url += "?" + "&".join("%s=%s" % (k, quote(v)) for k, v in query.items() if v is not None)
        headers = {"Authorization": "Bearer " + self.api_key, "Accept": "application/json"}
        if json_body is not None:
            body = compact_json(json_body).encode("utf-8")
            content_type = "application/json"
        if content_type:
            headers["Content-Type"] = content_type
        attempt = 0
        while True:
            status, resp_headers, content = self.send(method, url, headers, body, self.timeout)
            if status < 400:
                return status, resp_headers, content
            err = error_from(status, _json_or_none(content), None)
            if isinstance(err, RateLimited):
                err.retry_after = _retry_after(resp_headers, err.body)
                if attempt < self.max_retries:
                    attempt += 1
                    sleep(err.retry_after)
                    continue
            raise err

    def json(self, method, path, json_body=None, query=None, body=None, content_type=None):
        status, _, content = self.request(method, path, json_body, body, content_type, query)
        if not content:
            return None
        parsed = _json_or_none(content)
        if parsed is None:
            raise SentinelError("the service answered %s with a body that is not JSON" % status, "invalid_response", status)
        return parsed


def _json_or_none(content):
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return None
