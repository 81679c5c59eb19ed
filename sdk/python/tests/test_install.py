"""`pip install ./sdk/python` into a fresh venv, as a new user does."""
import json
import subprocess

from conftest import fresh_venv

PROBE = """
import json, os, sentinel_device, paho.mqtt
from importlib.metadata import version
d = os.path.dirname(sentinel_device.__file__)
print(json.dumps({"version": version("sentinel-device"), "paho": paho.mqtt.__version__,
                  "licence": os.path.exists(os.path.join(d, "vendor", "umqtt", "LICENSE")),
                  "transport": sentinel_device.device.MqttTransport.__module__, "in_venv": "venv" in d}))
"""


def test_pip_install_into_a_fresh_venv(tmp_path):
    python = fresh_venv(tmp_path)
    out = subprocess.run([python, "-c", PROBE], capture_output=True, text=True, cwd=str(tmp_path))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"version": "0.1.0", "paho": "2.2.0", "licence": True,
                                      "transport": "sentinel_device.mqtt_paho", "in_venv": True}
