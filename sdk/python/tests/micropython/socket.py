"""A fake `socket` module for the MicroPython run (test/unit/sdk/micropython.test.ts): the WebAssembly
port has no network. Behind it sits a tiny in-memory MQTT broker that answers CONNECT, SUBSCRIBE and
PINGREQ, records PUBLISH and PUBACK packets byte for byte, can inject publishes, and can go down."""
import struct

AF_INET = 2
SOCK_STREAM = 1


class Broker:
    def __init__(self):
        self.reset()

    def reset(self):
        self.up = True
        self.connects = []      # (client_id, username, password)
        self.subscriptions = [] # (topic, qos)
        self.published = []     # (topic, payload bytes, qos, retain)
        self.pubacks = []       # packet ids
        self.sockets = []

    def inject(self, topic, payload, qos=1, pid=7):
        """Queues a PUBLISH from the broker to the connected client."""
        t = topic.encode()
        body = struct.pack("!H", len(t)) + t + (struct.pack("!H", pid) if qos else b"") + payload
        live = [s for s in self.sockets if not s.closed]
        live[-1].inbox += bytes([0x30 | (qos << 1)]) + _varint(len(body)) + body

    def go_down(self):
        self.up = False
        for s in self.sockets:
            s.closed = True

    def come_up(self):
        self.up = True


def _varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


BROKER = Broker()


def getaddrinfo(host, port, *args):
    return [(AF_INET, SOCK_STREAM, 0, "", (host, port))]


class socket:
    def __init__(self, *args):
        self.inbox = b""
        self.outbuf = b""
        self.closed = False
        self.blocking = True

    def settimeout(self, t):
        pass

    def setblocking(self, flag):
        self.blocking = flag

    def connect(self, addr):
        if not BROKER.up:
            raise OSError(111)  # ECONNREFUSED
        BROKER.sockets.append(self)

    def close(self):
        self.closed = True

    def write(self, data, length=None):
        if self.closed:
            raise OSError(32)  # EPIPE
        if isinstance(data, str):
            data = data.encode()
        data = bytes(data)
        if length is not None:
            data = data[:length]
        self.outbuf += data
        self._parse()
        return len(data)

    def read(self, n):
        if self.closed:
            raise OSError(104)  # ECONNRESET
        if not self.inbox:
            if not self.blocking:
                return None
            raise OSError(110)  # a blocking read with nothing coming: ETIMEDOUT
        out, self.inbox = self.inbox[:n], self.inbox[n:]
        return out

    def _parse(self):
        while len(self.outbuf) >= 2:
            n, mult, i = 0, 1, 1
            while True:
                if i >= len(self.outbuf):
                    return
                b = self.outbuf[i]
                n += (b & 0x7F) * mult
                mult *= 128
                i += 1
                if not b & 0x80:
                    break
            if len(self.outbuf) < i + n:
                return
            kind, body = self.outbuf[0], self.outbuf[i:i + n]
            self.outbuf = self.outbuf[i + n:]
            self._packet(kind, body)

    def _packet(self, kind, body):
        op = kind & 0xF0
        if op == 0x10:  # CONNECT: protocol name, level, flags, keepalive, then the strings
            pos = 10
            fields = []
            while pos < len(body):
                ln = struct.unpack("!H", body[pos:pos + 2])[0]
                fields.append(body[pos + 2:pos + 2 + ln].decode())
                pos += 2 + ln
            BROKER.connects.append(tuple(fields))
            self.inbox += b"\x20\x02\x00\x00"
        elif op == 0x80:  # SUBSCRIBE
            pid = body[0:2]
            ln = struct.unpack("!H", body[2:4])[0]
            BROKER.subscriptions.append((body[4:4 + ln].decode(), body[4 + ln]))
            self.inbox += b"\x90\x03" + pid + bytes([body[4 + ln]])
        elif op == 0x30:  # PUBLISH
            qos = (kind >> 1) & 3
            ln = struct.unpack("!H", body[0:2])[0]
            topic = body[2:2 + ln].decode()
            rest = body[2 + ln + (2 if qos else 0):]
            BROKER.published.append((topic, rest, qos, kind & 1))
        elif op == 0x40:  # PUBACK
            BROKER.pubacks.append(struct.unpack("!H", body[0:2])[0])
        elif op == 0xC0:  # PINGREQ
            self.inbox += b"\xd0\x00"
