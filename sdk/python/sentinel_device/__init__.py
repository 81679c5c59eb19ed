"""sentinel-device: the device library of the Sentinel service, for CPython (paho-mqtt) and MicroPython (umqtt)."""
from .device import Device
from .errors import (
    BadRequest,
    ConnectionFailed,
    DataLimitExceeded,
    NotConnected,
    NotFound,
    PayloadTooLarge,
    PermissionDenied,
    RateLimited,
    SentinelError,
    ServerError,
    Unauthorized,
)

__version__ = "0.1.0"
__all__ = [
    "Device", "SentinelError", "BadRequest", "Unauthorized", "PermissionDenied", "NotFound", "PayloadTooLarge",
    "RateLimited", "DataLimitExceeded", "ServerError", "NotConnected", "ConnectionFailed",
]
