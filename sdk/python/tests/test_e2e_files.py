"""End to end: file transfer and clips (docs/contract.md §8) against the running service.

These need the file-transfer endpoints (POST/GET /api/entities/files, /api/files gallery); run
them once that capability is on the branch (test/integration/sdk/files.test.ts)."""
import asyncio
import glob
import os
import shutil
import subprocess

import pytest

from conftest import fresh_venv, stack_env
from service import call, new_devices, wait_for
from sentinel_device import Device, NotFound


def jpeg_frames(tmp_path, count):
    """Real JPEG frames from Debian's ffmpeg test source."""
    ffmpeg = shutil.which("ffmpeg")
    assert ffmpeg, "ffmpeg is required (scripts/setup.sh installs it)"
    subprocess.run([ffmpeg, "-loglevel", "error", "-f", "lavfi", "-i", "testsrc=size=160x120:rate=10", "-frames:v", str(count),
                    str(tmp_path / "f_%03d.jpg")], check=True)
    frames = []
    for p in sorted(glob.glob(str(tmp_path / "f_*.jpg"))):
        with open(p, "rb") as f:
            frames.append(f.read())
    assert len(frames) == count
    return frames


@pytest.fixture
def pair():
    env = stack_env()
    a, b = new_devices(2, "files")
    return Device(a["apiKey"], env["base_url"]), Device(b["apiKey"], env["base_url"])


def test_send_check_download_once(pair, tmp_path):
    a, b = pair
    src = tmp_path / "settings.json"
    src.write_bytes(b'{"interval": 30}\n' * 100)
    sent = a.send_file(str(src), dest=b.name, tags=["config"])
    assert sent["status"] == "scanning" and sent["filename"] == "settings.json" and sent["size"] == 1700
    wait_for(lambda: a.file_status(sent["id"])["status"] == "delivered", timeout=120, what="the scan to deliver the file")
    inbox = wait_for(lambda: [f for f in b.check_files() if f["id"] == sent["id"]], what="the file in the inbox")
    assert inbox[0]["filename"] == "settings.json" and inbox[0]["tags"] == ["config"] and inbox[0]["kind"] == "file"
    out = tmp_path / "got.json"
    b.download_file(sent["id"], str(out))
    assert out.read_bytes() == src.read_bytes()
    with pytest.raises(NotFound):
        b.download_file(sent["id"])
    assert a.file_status(sent["id"])["status"] == "downloaded"


def test_clip_burst_reaches_the_gallery_as_mp4(pair, tmp_path):
    a, _ = pair
    env = stack_env()
    sent = a.send_clip_burst(jpeg_frames(tmp_path, 10), fps=5, tags=["motion"])

    def video():
        status, body = call("GET", "/api/files/%s/video" % sent["id"], env["account_key"])
        return body if status == 200 else None

    # The MP4 exists once the scan passed and ffmpeg ran.
    mp4 = wait_for(video, timeout=180, what="the clip's MP4")
    assert mp4[4:8] == b"ftyp"
    status, body = call("GET", "/api/files?kind=clip&entity_name=%s" % a.name, env["account_key"])
    assert status == 200, body
    clip = [f for f in body["files"] if f["id"] == sent["id"]][0]
    assert clip["frames"] == 10 and clip["fps"] == 5 and (clip["width"], clip["height"]) == (160, 120)


def test_streaming_uploads_segments_as_clips(pair, tmp_path):
    a, _ = pair
    env = stack_env()
    frames = jpeg_frames(tmp_path, 6)
    taken = []

    def capture(framesize, quality):
        taken.append(framesize)
        if len(taken) == len(frames):
            a.stop_streaming()
        return frames[len(taken) - 1]

    ids = asyncio.run(a.start_streaming(capture, target_fps=10, segment_seconds=0.3))
    assert len(ids) == 2

    def all_listed():
        status, body = call("GET", "/api/files?kind=clip&entity_name=%s" % a.name, env["account_key"])
        return status == 200 and {f["id"] for f in body["files"]} >= set(ids)

    wait_for(all_listed, timeout=180, what="both stream segments in the gallery")


def test_the_readme_quickstart_script_runs(tmp_path):
    """examples/quickstart.py, as a new user runs it after `pip install ./sdk/python` in a fresh
    venv: telemetry, a routed command, a remote state update, a file to another device that
    downloads it, a clip."""
    env = stack_env()
    python = fresh_venv(tmp_path)
    cam, peer = new_devices(2, "quick")
    jpeg_frames(tmp_path, 5)
    script = os.path.join(os.path.dirname(__file__), "..", "examples", "quickstart.py")
    run = subprocess.run([python, script], capture_output=True, text=True, timeout=300, cwd=str(tmp_path),
                         env=dict(os.environ, SENTINEL_URL=env["base_url"], CAM_KEY=cam["apiKey"], PEER_KEY=peer["apiKey"],
                                  FRAMES=str(tmp_path / "f_*.jpg")))
    assert run.returncode == 0, run.stdout + run.stderr
    assert "state table now {'led': 'on'}" in run.stdout
    assert "command from accounts/" in run.stdout and "{'action': 'snapshot'}" in run.stdout
    assert "peer got b'boot ok\\n'" in run.stdout
    assert "clip " in run.stdout
