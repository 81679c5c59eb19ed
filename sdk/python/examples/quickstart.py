import glob, os, time
from sentinel_device import Device

url = os.environ.get("SENTINEL_URL", "http://localhost:8080")
cam = Device(os.environ["CAM_KEY"], url)            # this device
peer = Device(os.environ["PEER_KEY"], url)          # another device, to talk to

@cam.route(msg_type="publish", tag="cmd")            # directed messages tagged "cmd"
def on_command(msg):
    print("command from", msg["source"], msg["data"])

cam.state_handler(lambda table: print("state table now", table))
cam.connect()                                       # MQTT; the network loop runs in a thread
cam.publish({"temp": 21.5, "humidity": 40}, tags=["telemetry"])
peer.publish({"action": "snapshot"}, tags=["cmd"], entity=cam.name)
Device(os.environ["CAM_KEY"], url).update_state({"led": "on"})   # a change made elsewhere (HTTP)
sent = cam.send_file(b"boot ok\n", filename="boot.log", dest=peer.name)
while not [f for f in peer.check_files() if f["id"] == sent["id"]]: time.sleep(1)   # scanned, then delivered
print("peer got", peer.download_file(sent["id"]))
frames = [open(p, "rb").read() for p in sorted(glob.glob(os.environ.get("FRAMES", "frames/*.jpg")))]
print("clip", cam.send_clip_burst(frames, fps=10)["id"])   # appears in the gallery as an MP4
time.sleep(2); cam.close()
