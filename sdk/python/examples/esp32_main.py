# ESP32 (MicroPython): a sensor that publishes every 10 s, queues readings in flash while the
# broker is out of reach, and obeys "cmd" messages. Fill in the four settings below.
import network
import ntptime
import gc
import time

import machine
from sentinel_device import Device

WIFI_SSID, WIFI_PASSWORD = "my-wifi", "secret"
SENTINEL_URL = "http://192.168.1.10:8080"
ENTITY_KEY = "<entity key>"

wlan = network.WLAN(network.STA_IF)
wlan.active(True)
wlan.connect(WIFI_SSID, WIFI_PASSWORD)
while not wlan.isconnected():
    time.sleep(0.5)
ntptime.settime()  # queued readings carry the time they were taken

led = machine.Pin(2, machine.Pin.OUT)
device = Device(ENTITY_KEY, SENTINEL_URL, managed=True, db_path="/sentinel.json", max_offline=200)


@device.route(tag="cmd")
def command(msg):
    led.value(1 if msg["data"].get("led") == "on" else 0)
    device.update_state({"led": msg["data"].get("led")})


@device.state_handler
def state(table):
    print("state", table)


device.connect()
last = time.ticks_ms() - 10000
while True:
    device.check_msg()  # inbound messages, keep-alive, reconnect, sending queued readings
    if time.ticks_diff(time.ticks_ms(), last) >= 10000:
        last = time.ticks_ms()
        reading = {"temp": machine.ADC(machine.Pin(34)).read() / 40.95, "mem_free": gc.mem_free()}
        device.publish(reading, tags=["telemetry"], write_offline=True)
    time.sleep(0.05)
