"""A small PNG reader (8-bit gray/RGB/RGBA, non-interlaced) on the standard
library, so the tests can look at the pixels the model was actually sent."""
import struct
import zlib


def read_raw(data):
    """PNG bytes -> (width, height, rows of bytes, bytes per pixel)."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace != 0 or ctype not in (0, 2, 6):
                raise ValueError("unsupported PNG layout")
            bpp = {0: 1, 2: 3, 6: 4}[ctype]
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    raw = zlib.decompress(idat)
    stride = w * bpp
    prev = bytearray(stride)
    rows = []
    i = 0
    for _ in range(h):
        f = raw[i]
        line = bytearray(raw[i + 1:i + 1 + stride])
        i += 1 + stride
        for x in range(stride):
            a = line[x - bpp] if x >= bpp else 0
            b = prev[x]
            c = prev[x - bpp] if x >= bpp else 0
            if f == 1:
                line[x] = (line[x] + a) & 255
            elif f == 2:
                line[x] = (line[x] + b) & 255
            elif f == 3:
                line[x] = (line[x] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                pr = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
                line[x] = (line[x] + pr) & 255
        prev = line
        rows.append(bytes(line))
    return w, h, rows, bpp


def read(data):
    """PNG bytes -> (width, height, rows) with rows[y][x] = (r, g, b)."""
    w, h, raw, bpp = read_raw(data)
    if bpp == 1:
        return w, h, [[(v, v, v) for v in line] for line in raw]
    return w, h, [[tuple(line[x * bpp:x * bpp + 3]) for x in range(w)] for line in raw]


def find_colour(rows, colour, tol=40):
    """Bounding box (x0, y0, x1, y1) of the pixels near `colour`, or None."""
    box = None
    for y, row in enumerate(rows):
        for x, px in enumerate(row):
            if all(abs(px[k] - colour[k]) <= tol for k in range(3)):
                if box is None:
                    box = [x, y, x, y]
                else:
                    box[0] = min(box[0], x)
                    box[1] = min(box[1], y)
                    box[2] = max(box[2], x)
                    box[3] = max(box[3], y)
    return box
