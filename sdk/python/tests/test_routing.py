import routing_cases
from sentinel_device import Device
from sentinel_device.routing import Router


def test_routing_table_on_the_router():
    failures, count = routing_cases.run(
        lambda r, h, c: r.add(h, **c), lambda r, h: setattr(r, "default", h), lambda fb: Router(fb),
        routing_cases.router_dispatch)
    assert count == 12
    assert failures == []


def test_routing_table_through_the_device_decorators(fake_service):
    def make(fallback):
        return Device("k", fake_service.url, on_message=fallback)

    failures, count = routing_cases.run(
        lambda d, h, c: d.route(**c)(h), lambda d, h: d.default_handler(h), make, routing_cases.device_dispatch)
    assert count == 12
    assert failures == []


def test_a_case_that_should_fail_does_fail():
    """The runner reports a wrong answer (guards against a table that passes vacuously)."""
    failures, _ = routing_cases.run(lambda r, h, c: None, lambda r, h: None, lambda fb: Router(None),
                                      routing_cases.router_dispatch)
    assert len(failures) == 12


def test_tags_must_be_a_list():
    r = Router()
    try:
        r.add(print, tags="a")
    except TypeError:
        return
    raise AssertionError("a string for tags= was accepted")


def test_a_raising_handler_is_reported_and_the_next_message_still_routes(fake_service):
    import warnings

    d = Device("k", fake_service.url)
    got = []

    @d.route(tag="bad")
    def bad(msg):
        raise RuntimeError("boom")

    d.default_handler(got.append)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        d._on_mqtt(d.topics["messages"], b'{"msg_type":"publish","data":{},"tags":["bad"]}')
        d._on_mqtt(d.topics["state"], b'{"statusTable":{"a":1}}')  # no state handler: ignored
        d._on_mqtt(d.topics["messages"], b'{"msg_type":"publish","data":{"n":2}}')
    assert any("boom" in str(w.message) for w in caught)
    assert [m["data"] for m in got] == [{"n": 2}]
