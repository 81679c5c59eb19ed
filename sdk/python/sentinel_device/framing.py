"""The JSON messages a device sends and receives (docs/contract.md §5 "Messages"), the same over HTTP and MQTT."""
import json

from ._compat import compact_json
from .errors import error_from

MAX_TAGS = 10
STATE_TYPES = ("state_update", "state_new")


def normalize_data(data):
    """publish takes a dict or a string. A string holding a JSON object is sent as that object;
    any other string is sent as {"message": text}, since the service requires an object."""
    if isinstance(data, dict):
        return data
    if isinstance(data, str):
        try:
            parsed = json.loads(data)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            return parsed
        return {"message": data}
    raise TypeError("data must be a dict or a str")


def check_tags(tags):
    if tags is None:
        return []
    if isinstance(tags, str):
        raise TypeError("tags is a list of strings")
    tags = list(tags)
    if len(tags) > MAX_TAGS:
        raise ValueError("at most %d tags per message (got %d)" % (MAX_TAGS, len(tags)))
    for t in tags:
        if not isinstance(t, str):
            raise TypeError("every tag is a string")
    return tags


def build(msg_type, data, tags=None, dest=None, timestamp=None):
    """One message as a dict. `dest` (an entity name) makes it a directed message."""
    msg = {"msg_type": msg_type}
    if data is not None:
        msg["data"] = normalize_data(data)
    tags = check_tags(tags)
    if tags:
        msg["context"] = {"tags": tags}
    if dest:
        msg["dest"] = dest
    if timestamp:
        msg["timestamp"] = timestamp
    return msg


def encode(msg):
    """The wire form: compact UTF-8 JSON, NaN and Infinity refused (ValueError) before sending."""
    return compact_json(msg)


def decode_inbound(payload):
    """A payload from the `messages` topic: (message dict, None) or (None, SentinelError) for
    {msg_type: "error", data: {reason, code}}."""
    if isinstance(payload, (bytes, bytearray)):
        payload = payload.decode("utf-8")
    msg = json.loads(payload)
    if not isinstance(msg, dict):
        raise ValueError("a message is a JSON object")
    if msg.get("msg_type") == "error":
        data = msg.get("data") or {}
        if not isinstance(data, dict):
            raise ValueError("an error message's data is an object")
        return None, error_from(data.get("status"), data, data.get("retry_after"))
    if msg.get("tags") is None:
        msg["tags"] = []
    if not isinstance(msg["tags"], list):
        raise ValueError("a message's tags are a list")
    return msg, None


def decode_state(payload):
    """A payload from the retained `state` topic: {"statusTable": {...}} -> the table."""
    if isinstance(payload, (bytes, bytearray)):
        payload = payload.decode("utf-8")
    body = json.loads(payload)
    if isinstance(body, dict) and isinstance(body.get("statusTable"), dict):
        return body["statusTable"]
    raise ValueError("a state payload is {\"statusTable\": {...}}")


def parse_url(url):
    """(host, port, tls) of mqtt://, mqtts://, tcp:// or ssl:// URLs."""
    scheme, _, rest = url.partition("://")
    if scheme not in ("mqtt", "mqtts", "tcp", "ssl"):
        raise ValueError("unsupported MQTT URL scheme %r (mqtt:// or mqtts://)" % scheme)
    tls = scheme in ("mqtts", "ssl")
    hostport = rest.split("/", 1)[0]
    if hostport.startswith("["):
        host, _, port = hostport[1:].partition("]")
        port = port.lstrip(":")
    else:
        host, _, port = hostport.rpartition(":") if ":" in hostport else (hostport, "", "")
    return host, int(port) if port else (8883 if tls else 1883), tls
