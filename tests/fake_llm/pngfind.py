"""
pngfind — what a fake model "sees": decodes the PNG deskhand sent (8-bit
greyscale, RGB or RGBA, not interlaced: what deskhand writes) and finds a
coloured target in it, so a fake can answer with the target's position in
its own family's coordinate convention, as a real grounding model would.

    img = decode(png_bytes)                    # Image(width, height, rows)
    cx, cy = find_colour(img, (255, 0, 0))     # centre of the red pixels, image pixels
    x, y = to_relative(cx, cy, img, 1000)      # Gemini / Qwen3-VL: 0..999
"""
import struct
import zlib


class Image:
    def __init__(self, width, height, channels, rows):
        self.width, self.height, self.channels, self.rows = width, height, channels, rows

    def pixel(self, x, y):
        row, c = self.rows[y], self.channels
        p = row[x * c:(x + 1) * c]
        return (p[0], p[0], p[0]) if c in (1, 2) else (p[0], p[1], p[2])


def _paeth(a, b, c):
    p = a + b - c
    pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
    if pa <= pb and pa <= pc:
        return a
    return b if pb <= pc else c


def decode(data):
    """The image in a PNG; ValueError for anything deskhand does not write."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    pos, idat, hdr = 8, b"", None
    while pos + 8 <= len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        pos += 12 + n
        if kind == b"IHDR":
            hdr = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        elif kind == b"IEND":
            break
    if hdr is None:
        raise ValueError("no IHDR")
    w, h, depth, ctype, _, _, interlace = hdr
    channels = {0: 1, 2: 3, 4: 2, 6: 4}.get(ctype)
    if depth != 8 or channels is None or interlace:
        raise ValueError("unsupported PNG: depth %d type %d interlace %d" % (depth, ctype, interlace))
    raw = zlib.decompress(idat)
    stride, bpp, rows, prev = w * channels, channels, [], bytearray(w * channels)
    for y in range(h):
        f = raw[y * (stride + 1)]
        line = bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + ((a + b) >> 1)) & 255
            elif f == 4:
                line[i] = (line[i] + _paeth(a, b, c)) & 255
            elif f != 0:
                raise ValueError("bad filter %d" % f)
        rows.append(bytes(line))
        prev = line
    return Image(w, h, channels, rows)


def find_colour(img, rgb, tolerance=40):
    """Centre (floats, image pixels) of the pixels within tolerance of rgb; None when none."""
    sx = sy = n = 0
    for y in range(img.height):
        for x in range(img.width):
            p = img.pixel(x, y)
            if all(abs(p[k] - rgb[k]) <= tolerance for k in range(3)):
                sx += x
                sy += y
                n += 1
    if n == 0:
        return None
    return sx / n + 0.5, sy / n + 0.5


def to_relative(cx, cy, img, grid=1000):
    """An image position (pixel units, centre at +0.5) in a grid x grid convention."""
    return int(cx * grid / img.width), int(cy * grid / img.height)
