"""Test helpers: the package from this checkout, a fake HTTP service for request-building tests,
and, for the end-to-end modules, the real running service named by the environment
(test/integration/sdk/*.test.ts sets it)."""
import json
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
sys.path.insert(0, os.path.dirname(__file__))

ME = {
    "name": "dev-1", "resourcePath": "accounts/a1/entities/dev-1", "apiKeyId": "kid-1", "accountId": "a1",
    "region": "local", "tags": [],
    "mqtt": {"url": "mqtt://127.0.0.1:1", "topics": {
        "publish": "a1/local/kid-1/publish", "messages": "a1/local/kid-1/messages", "state": "a1/local/kid-1/state"}},
}


class FakeService:
    """Records every request; answers from `routes[(method, path)]` = function(request) -> (status, headers, body)."""

    def __init__(self):
        self.requests = []
        self.routes = {("GET", "/api/entities/me"): lambda req: (200, {}, ME)}
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _handle(self):
                url = urlsplit(self.path)
                length = int(self.headers.get("content-length") or 0)
                req = {"method": self.command, "path": url.path, "query": parse_qs(url.query),
                       "headers": {k.lower(): v for k, v in self.headers.items()},
                       "body": self.rfile.read(length) if length else b""}
                fake.requests.append(req)
                route = fake.routes.get((self.command, url.path))
                status, headers, body = route(req) if route else (404, {}, {"reason": "no such route", "code": "not_found"})
                raw = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("content-length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _handle

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d" % self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def fake_service():
    svc = FakeService()
    yield svc
    svc.close()


def stack_env():
    """The running service, or a skip (a failure under CI=true) when the tests run outside jest."""
    base = os.environ.get("SENTINEL_BASE_URL")
    if not base:
        msg = "SENTINEL_BASE_URL is not set: run through jest (test/integration/sdk)"
        if os.environ.get("CI") == "true":
            pytest.fail(msg)
        pytest.skip(msg)
    return {"base_url": base, "account_key": os.environ["SENTINEL_ACCOUNT_KEY"]}


SDK_DIR = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
WHEELS = os.path.abspath(os.path.join(SDK_DIR, "..", "..", ".tools", "wheels"))


def fresh_venv(tmp_path):
    """A new venv with `pip install ./sdk/python`, offline from the wheels scripts/setup.sh keeps.
    Installs from a copy, so the build leaves nothing in the checkout. Returns its python."""
    import shutil
    import subprocess
    import venv

    assert os.path.isdir(WHEELS), "%s is missing: run `npm run setup`" % WHEELS
    src = str(tmp_path / "sdk-python")
    shutil.copytree(SDK_DIR, src, ignore=shutil.ignore_patterns("tests", "__pycache__", "build", "*.egg-info"))
    env_dir = str(tmp_path / "venv")
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = os.path.join(env_dir, "bin", "python")
    run = subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-index", "--find-links", WHEELS, src],
                         capture_output=True, text=True, env=dict(os.environ, PIP_DISABLE_PIP_VERSION_CHECK="1"))
    assert run.returncode == 0, run.stdout + run.stderr
    return python
