"""
pngfind — what a fake model "sees": decodes the PNG deskhand sent (8-bit
greyscale, RGB or RGBA, not interlaced: what deskhand writes) and finds a
coloured target in it, so a fake can answer with the target's position in
its own family's coordinate convention, as a real grounding model would.

    img = decode(png_bytes)                    # Image(width, height, rows)
    cx, cy = find_colour(img, (255, 0, 0))     # centre of the red pixels, image pixels
    x, y = to_relative(cx, cy, img, 1000)      # Gemini / Qwen3-VL: 0..999
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import pngread  # noqa: E402  the one PNG reader of the tests


class Image:
    def __init__(self, width, height, channels, rows):
        self.width, self.height, self.channels, self.rows = width, height, channels, rows

    def pixel(self, x, y):
        row, c = self.rows[y], self.channels
        p = row[x * c:(x + 1) * c]
        return (p[0], p[0], p[0]) if c == 1 else (p[0], p[1], p[2])


def decode(data):
    """The image in a PNG; ValueError for anything deskhand does not write."""
    w, h, rows, bpp = pngread.read_raw(data)
    return Image(w, h, bpp, rows)


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
