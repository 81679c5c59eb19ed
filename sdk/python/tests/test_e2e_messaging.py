"""End to end against the running service: HTTP and MQTT publishes, directed messages through the
routes, state updates both ways, and the service's errors as typed exceptions and callbacks."""
import pytest

from conftest import stack_env
from service import call, history, new_devices, wait_for
from sentinel_device import Device, NotFound, PayloadTooLarge, Unauthorized


@pytest.fixture
def pair():
    env = stack_env()
    a, b = new_devices(2)
    devs = [Device(a["apiKey"], env["base_url"]), Device(b["apiKey"], env["base_url"])]
    yield devs
    for d in devs:
        d.close()


def test_http_publish_directed_message_and_check_messages(pair):
    a, b = pair
    msg_id = a.publish({"temp": 21.5}, tags=["telemetry"])
    assert isinstance(msg_id, str) and len(msg_id) == 24
    assert [m["data"] for m in history(a.name)] == [{"temp": 21.5}]
    got = []
    b.route(tag="cmd")(lambda m: got.append(("cmd", m["data"])))
    b.default_handler(lambda m: got.append(("default", m["data"])))
    a.publish({"action": "blink"}, tags=["cmd"], entity=b.name)
    a.publish("plain text", entity=b.name)
    assert len(b.check_messages(limit=10)) == 2
    assert got == [("cmd", {"action": "blink"}), ("default", {"message": "plain text"})]
    with pytest.raises(NotFound):
        a.publish({"x": 1}, entity="no-such-device")


def test_mqtt_publish_routes_state_and_errors(pair):
    a, b = pair
    routed, states, errors = [], [], []

    @b.route(msg_type="publish", tags_all=["alert", "door"])
    def door(msg):
        routed.append(("door", msg["data"], msg["source"]))

    @b.route(tags=["alert"])
    def alert(msg):
        routed.append(("alert", msg["data"], msg["source"]))

    b.state_handler(states.append)
    a.error_handler(errors.append)
    a.connect()
    b.connect()
    assert a.connected and b.connected

    # The retained table arrives on subscribe; a remote change arrives after it.
    wait_for(lambda: states, what="the state table on subscribe")
    status, _ = call("PATCH", "/api/entities/status-table", b.api_key, {"led": "on", "mode": "auto"})
    assert status == 200
    wait_for(lambda: any(s.get("led") == "on" for s in states), what="the remote state update")

    a.publish({"door": "open"}, tags=["alert", "door"], entity=b.name)
    a.publish({"smoke": True}, tags=["alert"], entity=b.name)
    wait_for(lambda: len(routed) == 2, what="two directed messages")
    source = "accounts/%s/entities/%s" % (a.me["accountId"], a.name)
    assert routed == [("door", {"door": "open"}, source), ("alert", {"smoke": True}, source)]

    # Telemetry over MQTT reaches history.
    a.publish({"rpm": 1200}, tags=["motor"])
    wait_for(lambda: [m for m in history(a.name) if m["data"] == {"rpm": 1200}], what="the MQTT publish in history")

    # State changes from the device over MQTT: merged, then replaced.
    b.update_state({"fw": "1.2"})
    wait_for(lambda: call("GET", "/api/entities/status-table", b.api_key)[1]["statusTable"] == {"led": "on", "mode": "auto", "fw": "1.2"},
             what="the merged state table")
    b.replace_state({"fw": "1.3"})
    wait_for(lambda: call("GET", "/api/entities/status-table", b.api_key)[1]["statusTable"] == {"fw": "1.3"},
             what="the replaced state table")

    # A refused MQTT publish comes back as a typed error to the error handler.
    a.publish({"x": 1}, entity="no-such-device")
    wait_for(lambda: errors, what="the MQTT error message")
    assert isinstance(errors[0], NotFound) and errors[0].code == "not_found"


def test_errors_a_device_can_act_on():
    env = stack_env()
    with pytest.raises(Unauthorized):
        Device("not-a-key", env["base_url"])
    (d,) = new_devices(1)
    dev = Device(d["apiKey"], env["base_url"])
    with pytest.raises(PayloadTooLarge):
        dev.publish({"blob": "x" * 6000})
    # Rotating the key revokes it: the next call is Unauthorized.
    status, _ = call("POST", "/api/entities/%s/keys/rotate" % d["name"], stack_env()["account_key"])
    assert status == 200
    with pytest.raises(Unauthorized):
        dev.publish({"t": 1})
    # The broker refuses the revoked key too (CONNACK not authorized).
    with pytest.raises(Unauthorized):
        dev.connect()
    assert not dev.connected


def test_a_key_rotated_while_connected_is_reported_and_reconnecting_stops():
    # An outside probe: the library retried the dead key forever; publish() said NotConnected and
    # the error handler never heard of it.
    env = stack_env()
    (d,) = new_devices(1)
    dev = Device(d["apiKey"], env["base_url"])
    errors = []
    dev.error_handler(errors.append)
    dev.connect()
    try:
        status, _ = call("POST", "/api/entities/%s/keys/rotate" % d["name"], env["account_key"])
        assert status == 200
        wait_for(lambda: any(isinstance(e, Unauthorized) for e in errors), what="Unauthorized in the error handler")
        assert not dev.connected
        err = [e for e in errors if isinstance(e, Unauthorized)][0]
        assert (err.status, err.code) == (401, "not_authorized")
        with pytest.raises(Unauthorized):
            dev.publish({"t": 1})
    finally:
        dev.close()


def test_two_devices_sharing_a_key_are_told_and_back_off():
    # An outside probe: two Devices with one key took the MQTT session from each other every
    # second, for ever, without a word.
    env = stack_env()
    (d,) = new_devices(1)
    errors = []
    twins = [Device(d["apiKey"], env["base_url"]) for _ in range(2)]
    for t in twins:
        t.error_handler(errors.append)
        t.connect()
    try:
        wait_for(lambda: any(getattr(e, "code", None) == "session_unstable" for e in errors), timeout=60,
                 what="session_unstable in an error handler")
        err = [e for e in errors if getattr(e, "code", None) == "session_unstable"][0]
        assert "another connection may be using this device's key" in err.reason
    finally:
        for t in twins:
            t.close()
