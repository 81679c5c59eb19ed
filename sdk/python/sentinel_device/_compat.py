"""What differs between CPython and MicroPython, in one place. Only modules both have are imported here."""
import sys
import time

MICROPYTHON = sys.implementation.name == "micropython"
# OpenMV firmware ships its own MQTT module; its subscriptions must be QoS 0 (docs/contract.md §9 "Transport").
OPENMV = MICROPYTHON and "OpenMV" in getattr(sys.implementation, "_machine", "")
SUBSCRIBE_QOS = 0 if OPENMV else 1
PUBLISH_QOS = 0


def warn(message):
    """warnings.warn where it exists (CPython, so tests and -W flags see it); a printed line elsewhere."""
    if MICROPYTHON:
        print("sentinel_device warning:", message)
    else:
        import warnings

        warnings.warn(message, stacklevel=3)


def deprecated(message):
    if MICROPYTHON:
        print("sentinel_device deprecated:", message)
    else:
        import warnings

        warnings.warn(message, DeprecationWarning, stacklevel=3)


def monotonic_ms():
    if MICROPYTHON:
        return time.ticks_ms()
    return int(time.monotonic() * 1000)


def elapsed_ms(since):
    if MICROPYTHON:
        return time.ticks_diff(time.ticks_ms(), since)
    return monotonic_ms() - since


def sleep(seconds):
    time.sleep(seconds)


def epoch_ms():
    """Unix time in ms, or None when the board's clock was never set (MicroPython boots in 2000)."""
    if MICROPYTHON and hasattr(time, "time_ns"):
        ms = time.time_ns() // 1000000
        # Ports with a 2000 epoch count from there; gmtime below takes the same epoch.
    else:
        ms = int(time.time() * 1000)
    if time.gmtime(ms // 1000)[0] < 2024:
        return None
    return ms


def rfc3339(ms):
    t = time.gmtime(ms // 1000)
    return "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ" % (t[0], t[1], t[2], t[3], t[4], t[5], ms % 1000)


class _NoLock:
    """MicroPython's device loop is single-threaded (check_msg / run_forever)."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def make_lock():
    if MICROPYTHON:
        return _NoLock()
    import threading

    return threading.RLock()


def compact_json(value):
    """JSON as the service measures and parses it: compact separators, UTF-8 text as is, and no NaN
    or Infinity (refused with ValueError here instead of by the service later). MicroPython's json
    takes none of these keywords; its output is compact and unescaped already."""
    if MICROPYTHON:
        return json_module().dumps(value)
    import json

    return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def json_module():
    import json

    return json
