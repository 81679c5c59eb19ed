"""Errors a device can act on: the service's {reason, code} answers, over HTTP and over MQTT."""


class SentinelError(Exception):
    """An answer of the service. `status` is the HTTP status (None when unknown), `code` its machine code."""

    def __init__(self, reason, code=None, status=None, body=None):
        super().__init__(reason)
        self.reason = reason
        self.code = code
        self.status = status
        self.body = body or {}

    def __str__(self):
        return "%s (%s, %s)" % (self.reason, self.status, self.code)


class BadRequest(SentinelError):
    """400: the message or request is malformed (e.g. an unsupported msg_type)."""


class Unauthorized(SentinelError):
    """401: the key is missing, wrong, rotated or deleted. Retrying will not help."""


class PermissionDenied(SentinelError):
    """403: the key's role lacks the permission, or the plan lacks the feature."""


class NotFound(SentinelError):
    """404: unknown destination entity, file or message."""


class PayloadTooLarge(SentinelError):
    """413: message data over 5 KB, or a file over the plan's size limit."""


class RateLimited(SentinelError):
    """429 rate_limited: more than 50 requests per second; `retry_after` seconds to wait."""

    def __init__(self, reason, code=None, status=429, body=None, retry_after=1):
        super().__init__(reason, code, status, body)
        self.retry_after = retry_after


class DataLimitExceeded(SentinelError):
    """429 data_limit_exceeded: the monthly data limit; telemetry pauses until next month or a plan change."""


class ServerError(SentinelError):
    """5xx."""


class NotConnected(SentinelError):
    """An MQTT operation while the connection is down (and the message may not be queued)."""

    def __init__(self, reason="not connected to the MQTT broker"):
        super().__init__(reason, "not_connected")


class ConnectionFailed(SentinelError):
    """The service could not be reached over HTTP: name not resolved, connection refused or reset,
    timed out, TLS failed. Nothing was answered; `__cause__` holds the network error. Retrying
    later may help (unlike Unauthorized)."""

    def __init__(self, reason):
        super().__init__(reason, "connection_failed")


_BY_STATUS = {400: BadRequest, 401: Unauthorized, 403: PermissionDenied, 404: NotFound, 413: PayloadTooLarge}


def error_from(status, body, retry_after=None):
    """The typed exception for an error answer. `body` is the decoded JSON body (or None)."""
    if not isinstance(body, dict):
        body = {}
    reason = body.get("reason") or body.get("error") or ("HTTP %s" % status if status else "error")
    code = body.get("code")
    if status is None:
        status = body.get("status")
    if status == 429 or code in ("rate_limited", "data_limit_exceeded"):
        if code == "data_limit_exceeded":
            return DataLimitExceeded(reason, code, status, body)
        if retry_after is None:
            retry_after = body.get("retry_after", 1)
        return RateLimited(reason, code, status, body, retry_after)
    cls = _BY_STATUS.get(status)
    if cls is None:
        cls = ServerError if status is not None and status >= 500 else SentinelError
    return cls(reason, code, status, body)
