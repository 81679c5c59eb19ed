import io
import json
import zipfile
from email.parser import BytesParser
from email.policy import HTTP

import pytest

from sentinel_device import DataLimitExceeded, NotFound, RateLimited, Unauthorized
from sentinel_device.errors import error_from
from sentinel_device.framing import build, decode_inbound, decode_state, parse_url
from sentinel_device.packing import frame_names, multipart, stored_zip


def test_publish_message_shape():
    assert build("publish", {"t": 1}, ["a"], dest="dev-2") == {
        "msg_type": "publish", "data": {"t": 1}, "context": {"tags": ["a"]}, "dest": "dev-2"}
    assert build("publish", '{"t": 2}') == {"msg_type": "publish", "data": {"t": 2}}
    assert build("publish", "hello") == {"msg_type": "publish", "data": {"message": "hello"}}
    assert build("state_update", {"x": 1}, []) == {"msg_type": "state_update", "data": {"x": 1}}
    build("publish", {}, ["t%d" % i for i in range(10)])
    with pytest.raises(ValueError):
        build("publish", {}, ["t%d" % i for i in range(11)])
    with pytest.raises(TypeError):
        build("publish", {}, "one-tag")
    with pytest.raises(TypeError):
        build("publish", 5)


def test_inbound_messages_and_mqtt_errors():
    msg, err = decode_inbound(b'{"msg_type":"publish","data":{"a":1},"source":"accounts/x/entities/y"}')
    assert err is None and msg["tags"] == [] and msg["data"] == {"a": 1}
    _, err = decode_inbound(json.dumps({"msg_type": "error", "data": {
        "reason": "slow down", "code": "rate_limited", "status": 429, "retry_after": 2}}))
    assert isinstance(err, RateLimited) and err.retry_after == 2 and err.reason == "slow down"
    _, err = decode_inbound(json.dumps({"msg_type": "error", "data": {"reason": "no", "code": "data_limit_exceeded", "status": 429}}))
    assert isinstance(err, DataLimitExceeded)
    assert decode_state(b'{"statusTable":{"led":"on"}}') == {"led": "on"}
    with pytest.raises(ValueError):
        decode_state(b"[]")


def test_http_errors_are_typed():
    assert isinstance(error_from(401, {"reason": "bad key"}), Unauthorized)
    e = error_from(404, {"reason": 'Destination entity "x" not found', "code": "not_found"})
    assert isinstance(e, NotFound) and e.code == "not_found" and e.status == 404
    assert error_from(429, {"reason": "r", "code": "rate_limited"}, 7).retry_after == 7


def test_mqtt_urls():
    assert parse_url("mqtt://localhost:1883") == ("localhost", 1883, False)
    assert parse_url("mqtts://broker.example.com") == ("broker.example.com", 8883, True)
    assert parse_url("mqtt://[::1]:2000") == ("::1", 2000, False)
    with pytest.raises(ValueError):
        parse_url("ws://x")


def test_stored_zip_is_a_valid_archive_in_frame_order():
    frames = [b"\xff\xd8frame%d\xff\xd9" % i for i in range(12)]
    names = frame_names(len(frames))
    assert names == sorted(names)
    z = zipfile.ZipFile(io.BytesIO(stored_zip(list(zip(names, frames)))))
    assert z.testzip() is None
    assert z.namelist() == names
    assert [z.read(n) for n in names] == frames


def test_multipart_body_parses():
    body, ctype = multipart([("dest", "dev-2"), ("tags", '["a"]')], "file", 'we"ird.bin', b"\x00\x01\r\n--x")
    parsed = BytesParser(policy=HTTP).parsebytes(b"Content-Type: " + ctype.encode() + b"\r\n\r\n" + body)
    parts = {p.get_param("name", header="content-disposition"): p for p in parsed.iter_parts()}
    assert parts["dest"].get_content() == "dev-2"
    assert parts["tags"].get_content() == '["a"]'
    assert parts["file"].get_payload(decode=True) == b"\x00\x01\r\n--x"
    assert parts["file"].get_filename() == "we_ird.bin"


def test_inbound_shapes_the_service_never_sends_are_refused_as_not_a_message():
    # An outside probe's fake broker: these escaped the library's guard and ended paho's loop.
    with pytest.raises(ValueError):
        decode_inbound(b'{"msg_type": "error", "data": "oops"}')
    with pytest.raises(ValueError):
        decode_inbound(b'{"msg_type": "publish", "tags": 5}')


def test_encode_is_compact_utf8_and_refuses_nan():
    from sentinel_device.framing import encode

    assert encode({"msg_type": "publish", "data": {"s": "é"}}) == '{"msg_type":"publish","data":{"s":"é"}}'
    with pytest.raises(ValueError):
        encode({"msg_type": "publish", "data": {"t": float("nan")}})
