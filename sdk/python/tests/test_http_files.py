"""Request building of the HTTP calls, against a local fake service (conftest.FakeService). The
file endpoints run end to end in test_e2e_files.py."""
import asyncio
import io
import json
import warnings
import zipfile
from email.parser import BytesParser
from email.policy import HTTP

import pytest

import sentinel_device.http as sd_http
from sentinel_device import DataLimitExceeded, Device, PayloadTooLarge, RateLimited

JPEG = b"\xff\xd8\xff\xe0fake-jpeg\xff\xd9"


def form(req):
    parsed = BytesParser(policy=HTTP).parsebytes(
        b"Content-Type: " + req["headers"]["content-type"].encode() + b"\r\n\r\n" + req["body"])
    return {p.get_param("name", header="content-disposition"): p for p in parsed.iter_parts()}


def accepted(req):
    return 202, {}, {"id": "f1", "status": "scanning", "filename": "x", "size": 1, "sha256": "0" * 64}


@pytest.fixture
def device(fake_service):
    fake_service.routes[("POST", "/api/entities/files")] = accepted
    return Device("secret-key", fake_service.url)


def test_the_device_reads_its_topics_with_its_key(fake_service, device):
    me = fake_service.requests[0]
    assert (me["method"], me["path"]) == ("GET", "/api/entities/me")
    assert me["headers"]["authorization"] == "Bearer secret-key"
    assert device.topics["publish"] == "a1/local/kid-1/publish"


def test_publish_over_http_and_its_local_checks(fake_service, device):
    fake_service.routes[("POST", "/api/entities/message")] = lambda req: (200, {}, {"code": 200, "content": "m1"})
    assert device.publish({"t": 21.5}, tags=["temp"], entity="dev-2") == "m1"
    sent = json.loads(fake_service.requests[-1]["body"])
    assert sent == {"msg_type": "publish", "data": {"t": 21.5}, "context": {"tags": ["temp"]}, "dest": "dev-2"}
    with pytest.raises(ValueError):
        device.publish({"t": 1}, write_offline=True)
    with pytest.raises(PayloadTooLarge):
        device.publish({"blob": "x" * 6000})
    device.update_state({"led": "on"})
    assert json.loads(fake_service.requests[-1]["body"])["msg_type"] == "state_update"
    device.replace_state({"led": "off"}, tags=["s"])
    assert json.loads(fake_service.requests[-1]["body"]) == {"msg_type": "state_new", "data": {"led": "off"}, "context": {"tags": ["s"]}}
    fake_service.routes[("POST", "/api/entities/message")] = lambda req: (200, {}, b"")
    device.heartbeat(mem_free=1024, disk_free=None)
    assert json.loads(fake_service.requests[-1]["body"]) == {"msg_type": "heartbeat", "data": {"mem_free": 1024}}


def test_the_5_kb_check_counts_bytes_as_the_service_does(fake_service, device):
    # An outside probe: 5,000 bytes of UTF-8 text were counted as 15,009 (escaped), 500 small keys
    # (4,501 bytes compact) as 5,500, and refused though the service takes them. Here 450 keys:
    # 4,841 bytes compact, 5,740 as counted before.
    fake_service.routes[("POST", "/api/entities/message")] = lambda req: (200, {}, {"code": 200, "content": "m"})
    assert device.publish({"s": "\u00e9" * 2500}) == "m"
    assert device.publish({"k%03d" % i: i for i in range(450)}) == "m"
    with pytest.raises(PayloadTooLarge):
        device.publish({"s": "\u00e9" * 2600})
    # NaN is not JSON: refused here, not by the service later.
    with pytest.raises(ValueError):
        device.publish({"t": float("nan")})


def test_429_waits_for_retry_after_then_succeeds(fake_service, device, monkeypatch):
    slept = []
    monkeypatch.setattr(sd_http, "sleep", slept.append)
    answers = [(429, {"Retry-After": "3"}, {"reason": "slow down", "code": "rate_limited"}),
               (200, {}, {"code": 200, "content": "m2"})]
    fake_service.routes[("POST", "/api/entities/message")] = lambda req: answers.pop(0)
    assert device.publish("hello") == "m2"
    assert slept == [3]


def test_429_gives_up_after_the_retries_and_data_limit_is_not_retried(fake_service, device, monkeypatch):
    slept = []
    monkeypatch.setattr(sd_http, "sleep", slept.append)
    fake_service.routes[("POST", "/api/entities/message")] = lambda req: (
        429, {"Retry-After": "2"}, {"reason": "slow down", "code": "rate_limited"})
    with pytest.raises(RateLimited) as e:
        device.publish("hello")
    assert e.value.retry_after == 2 and slept == [2, 2, 2]
    fake_service.routes[("POST", "/api/entities/message")] = lambda req: (
        429, {"Retry-After": "86400"}, {"reason": "monthly data limit", "code": "data_limit_exceeded"})
    with pytest.raises(DataLimitExceeded):
        device.publish("hello")
    assert slept == [2, 2, 2]


def test_send_file_builds_the_multipart_upload(fake_service, device, tmp_path):
    p = tmp_path / "report.csv"
    p.write_bytes(b"a,b\n1,2\n")
    assert device.send_file(str(p), dest="dev-2", tags=["daily"])["status"] == "scanning"
    req = fake_service.requests[-1]
    assert (req["method"], req["path"]) == ("POST", "/api/entities/files")
    parts = form(req)
    assert parts["dest"].get_content() == "dev-2"
    assert json.loads(parts["tags"].get_content()) == ["daily"]
    assert parts["kind"].get_content() == "file"
    assert "meta" not in parts
    assert parts["file"].get_filename() == "report.csv"
    assert parts["file"].get_payload(decode=True) == b"a,b\n1,2\n"
    with pytest.raises(ValueError):
        device.send_file(b"bytes without a name", dest="dev-2")
    with pytest.raises(ValueError):
        device.send_file(b"x", filename="x.bin")  # a plain file needs a recipient


def test_check_download_and_status(fake_service, device, tmp_path):
    fake_service.routes[("GET", "/api/entities/files")] = lambda req: (200, {}, {"files": [{"id": "f9", "filename": "a.bin"}]})
    fake_service.routes[("GET", "/api/entities/files/download/f9")] = lambda req: (
        200, {"Content-Disposition": 'attachment; filename="a.bin"'}, b"\x00payload")
    fake_service.routes[("GET", "/api/entities/files/f9")] = lambda req: (200, {}, {"id": "f9", "status": "delivered"})
    assert device.check_files() == [{"id": "f9", "filename": "a.bin"}]
    assert fake_service.requests[-1]["query"] == {"limit": ["50"]}
    device.check_files(limit=5)
    assert fake_service.requests[-1]["query"] == {"limit": ["5"]}
    assert device.download_file("f9") == b"\x00payload"
    out = tmp_path / "a.bin"
    assert device.download_file("f9", str(out)) == str(out) and out.read_bytes() == b"\x00payload"
    assert device.file_status("f9")["status"] == "delivered"


def test_clip_burst_is_a_zip_of_frames_with_jpeg_burst_meta(fake_service, device):
    device.send_clip_burst([JPEG, JPEG + b"2", JPEG + b"3"], fps=5, tags=["motion"])
    parts = form(fake_service.requests[-1])
    assert parts["kind"].get_content() == "clip"
    assert json.loads(parts["meta"].get_content()) == {"format": "jpeg_burst", "fps": 5}
    assert "dest" not in parts
    z = zipfile.ZipFile(io.BytesIO(parts["file"].get_payload(decode=True)))
    assert [z.read(n) for n in z.namelist()] == [JPEG, JPEG + b"2", JPEG + b"3"]
    with pytest.raises(ValueError):
        device.send_clip_burst([b"not a jpeg"])


def test_gif_clip_is_deprecated(fake_service, device):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        device.send_clip_gif(b"GIF89a...")
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)
    parts = form(fake_service.requests[-1])
    assert parts["kind"].get_content() == "clip" and parts["file"].get_content_type() == "image/gif"


def test_streaming_uploads_segments_until_stopped(fake_service, device):
    captured = []

    def capture(framesize, quality):
        captured.append((framesize, quality))
        if len(captured) == 12:
            device.stop_streaming()
        return JPEG

    ids = asyncio.run(device.start_streaming(capture, target_fps=50, segment_seconds=0.1))
    assert captured[0] == ("QVGA", 70) and len(captured) == 12
    uploads = [r for r in fake_service.requests if r["path"] == "/api/entities/files"]
    counts = [len(zipfile.ZipFile(io.BytesIO(form(r)["file"].get_payload(decode=True))).namelist()) for r in uploads]
    assert counts == [5, 5, 2] and ids == ["f1", "f1", "f1"]
    with pytest.raises(ValueError):
        asyncio.run(device.start_streaming(capture, framesize="HD"))


def test_a_service_that_cannot_be_reached_raises_connection_failed(fake_service):
    import socket
    import threading
    import urllib.error

    from sentinel_device import ConnectionFailed, SentinelError

    # Nothing listens: refused.
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    client = sd_http.HttpClient("http://127.0.0.1:%d" % port, "secret-key", timeout=2)
    with pytest.raises(ConnectionFailed) as refused:
        client.json("GET", "/api/entities/me?tag=private")
    assert isinstance(refused.value, SentinelError)
    assert refused.value.code == "connection_failed" and refused.value.status is None
    assert isinstance(refused.value.__cause__, urllib.error.URLError)
    assert "http://127.0.0.1:%d" % port in refused.value.reason
    assert "private" not in refused.value.reason and "secret-key" not in refused.value.reason

    # Something accepts and never answers: the timeout.
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    held = []
    threading.Thread(target=lambda: held.append(server.accept()), daemon=True).start()
    slow = sd_http.HttpClient("http://127.0.0.1:%d" % server.getsockname()[1], "secret-key", timeout=0.5)
    try:
        with pytest.raises(ConnectionFailed):
            slow.json("GET", "/api/entities/me")
    finally:
        server.close()
        for conn, _ in held:
            conn.close()
