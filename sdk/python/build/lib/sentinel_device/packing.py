"""Byte formats the file endpoints need, written by hand because MicroPython has neither email nor
zipfile: a multipart/form-data body and a stored (uncompressed) zip of JPEG frames."""
import binascii
import random
import struct


def multipart(fields, file_field, filename, content, content_type="application/octet-stream"):
    """(body bytes, Content-Type header) for text `fields` plus one file part."""
    boundary = "----sentinel%08x%08x" % (random.getrandbits(32), random.getrandbits(32))
    parts = []
    for name, value in fields:
        parts.append(('--%s\r\nContent-Disposition: form-data; name="%s"\r\n\r\n%s\r\n' % (boundary, name, value)).encode("utf-8"))
    safe_name = filename.replace('"', "_").replace("\r", "_").replace("\n", "_")
    parts.append(
        ('--%s\r\nContent-Disposition: form-data; name="%s"; filename="%s"\r\nContent-Type: %s\r\n\r\n'
         % (boundary, file_field, safe_name, content_type)).encode("utf-8")
    )
    parts.append(bytes(content))
    parts.append(("\r\n--%s--\r\n" % boundary).encode("utf-8"))
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


def stored_zip(entries):
    """A zip archive of [(name, bytes)] without compression (JPEG does not compress further)."""
    out = []
    central = []
    offset = 0
    # 1980-01-01 00:00 in DOS time: frame names, not dates, carry the order.
    dos_time, dos_date = 0, (0 << 9) | (1 << 5) | 1
    for name, data in entries:
        name_b = name.encode("utf-8")
        data = bytes(data)
        crc = binascii.crc32(data) & 0xFFFFFFFF
        header = struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 0, dos_time, dos_date, crc, len(data), len(data), len(name_b), 0)
        out.append(header)
        out.append(name_b)
        out.append(data)
        central.append(
            struct.pack("<IHHHHHHIIIHHHHHII", 0x02014B50, 20, 20, 0, 0, dos_time, dos_date, crc, len(data), len(data),
                        len(name_b), 0, 0, 0, 0, 0, offset)
            + name_b
        )
        offset += len(header) + len(name_b) + len(data)
    cd = b"".join(central)
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(cd), offset, 0)
    return b"".join(out) + cd + end


def frame_names(count):
    """Zero-padded names so that name order is frame order (docs/contract.md §8 "Clips")."""
    width = max(6, len(str(count)))
    fmt = "frame_%%0%dd.jpg" % width
    return [fmt % i for i in range(count)]
