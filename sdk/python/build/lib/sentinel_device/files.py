"""File transfer, motion clips and streaming (docs/contract.md §8, §9 "Files, clips and streaming")."""
import json

from ._compat import MICROPYTHON, deprecated, elapsed_ms, monotonic_ms
from .framing import check_tags
from .http import quote
from .packing import frame_names, multipart, stored_zip

FRAMESIZES = ("QQVGA", "QVGA", "VGA")
KINDS = ("file", "clip")


def _read(path):
    with open(path, "rb") as f:
        return f.read()


def _basename(path):
    return path.replace("\\", "/").rsplit("/", 1)[-1]


class FilesMixin:
    """Needs self.http (HttpClient)."""

    def send_file(self, path_or_data, filename=None, dest=None, tags=None, kind="file", meta=None,
                  content_type="application/octet-stream"):
        """Uploads a file (a path, or bytes with a filename) for device `dest`; kind "clip" marks a
        motion clip (dest optional). Returns {id, status: "scanning", filename, size, sha256}; the
        recipient sees it in check_files() once the malware scan passed."""
        if kind not in KINDS:
            raise ValueError("kind is 'file' or 'clip'")
        if isinstance(path_or_data, str):
            content = _read(path_or_data)
            filename = filename or _basename(path_or_data)
        else:
            content = bytes(path_or_data)
            if not filename:
                raise ValueError("filename is required when sending bytes")
        if kind == "file" and not dest:
            raise ValueError("dest (the recipient entity name) is required for kind 'file'")
        fields = []
        if dest:
            fields.append(("dest", dest))
        tags = check_tags(tags)
        if tags:
            fields.append(("tags", json.dumps(tags)))
        fields.append(("kind", kind))
        if meta:
            fields.append(("meta", json.dumps(meta)))
        body, ctype = multipart(fields, "file", filename, content, content_type)
        return self.http.json("POST", "/api/entities/files", body=body, content_type=ctype)

    def file_status(self, file_id):
        """{id, status, verdict, ...} of a file this device sent: scanning, delivered, blocked, downloaded, failed."""
        return self.http.json("GET", "/api/entities/files/" + quote(file_id))

    def check_files(self, limit=50):
        """Delivered (scanned clean) files addressed to this device: [{id, filename, size, contentType,
        sha256, source, tags, kind, createdAt}]."""
        body = self.http.json("GET", "/api/entities/files", query={"limit": limit})
        return body.get("files") or []

    def download_file(self, transfer_id, path=None):
        """The file's bytes, or, with `path`, writes them there and returns the path. The service deletes
        the file once it was sent whole, so a second download fails with NotFound."""
        _, _, content = self.http.request("GET", "/api/entities/files/download/" + quote(transfer_id))
        if path is None:
            return content
        with open(path, "wb") as f:
            f.write(content)
        return path

    def send_clip_burst(self, frames, fps=10, dest=None, tags=None, filename="clip.zip"):
        """Uploads JPEG frames (a list of bytes, in order) as a zip clip (kind "clip", meta.format
        "jpeg_burst"); the service makes an MP4 of it for the gallery."""
        frames = list(frames)
        if not frames:
            raise ValueError("a clip needs at least one frame")
        for f in frames:
            if not (isinstance(f, (bytes, bytearray)) and f[:2] == b"\xff\xd8"):
                raise ValueError("every frame is the bytes of one JPEG image")
        archive = stored_zip(list(zip(frame_names(len(frames)), frames)))
        return self.send_file(archive, filename=filename, dest=dest, tags=tags, kind="clip",
                              meta={"format": "jpeg_burst", "fps": fps}, content_type="application/zip")

    def send_clip_gif(self, gif, dest=None, tags=None, filename="clip.gif"):
        """Deprecated: GIF clips are kept raw, without an MP4. Use send_clip_burst."""
        deprecated("send_clip_gif is deprecated; send JPEG frames with send_clip_burst")
        content = _read(gif) if isinstance(gif, str) else bytes(gif)
        return self.send_file(content, filename=filename, dest=dest, tags=tags, kind="clip", content_type="image/gif")

    async def start_streaming(self, capture_frame_func, target_fps=15, quality=70, framesize="QVGA",
                              stream_duration=-1, segment_seconds=5, dest=None, tags=None):
        """Async mode only (await it inside asyncio): captures frames with
        capture_frame_func(framesize, quality) -> JPEG bytes at up to target_fps and uploads each
        segment_seconds of them as a jpeg_burst clip, for stream_duration seconds (-1: until
        stop_streaming()). Returns the ids of the uploaded clips."""
        try:
            import asyncio
        except ImportError:
            import uasyncio as asyncio
        if framesize not in FRAMESIZES:
            raise ValueError("framesize is one of %s" % ", ".join(FRAMESIZES))
        if not 1 <= quality <= 100:
            raise ValueError("quality is 1 to 100")
        if target_fps <= 0:
            raise ValueError("target_fps is above 0")
        frame_ms = int(1000 / target_fps)
        per_segment = max(1, int(segment_seconds * target_fps))
        started = monotonic_ms()
        ids = []
        segment = []
        self._streaming = True

        async def upload(frames):
            if MICROPYTHON:
                sent = self.send_clip_burst(frames, fps=target_fps, dest=dest, tags=tags)
            else:
                sent = await asyncio.to_thread(self.send_clip_burst, frames, target_fps, dest, tags)
            ids.append(sent["id"])

        while self._streaming and (stream_duration < 0 or elapsed_ms(started) < stream_duration * 1000):
            t0 = monotonic_ms()
            segment.append(capture_frame_func(framesize, quality))
            if len(segment) >= per_segment:
                await upload(segment)
                segment = []
            await asyncio.sleep(max(0, frame_ms - elapsed_ms(t0)) / 1000)
        if segment:
            await upload(segment)
        self._streaming = False
        return ids

    def stop_streaming(self):
        """Ends start_streaming after the current frame; the partial segment is still uploaded."""
        self._streaming = False
