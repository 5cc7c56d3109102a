"""os/wlroots capture read in strips, on a headless sway with two outputs:
vision/ reads a monitor 64 rows at a time, and screencopy copies a whole
output per request, each waiting for a rendered frame. A read is one frame
per output (counted in WAYLAND_DEBUG's log of deskhand's requests: 10
strips of a 600-row monitor were 10 frames and 186 ms before), and its
pixels are grim's, monitor by monitor."""
import os
import time
import unittest

import harness as h
import pngread
import wayland


def rgb_rows(png):
    w, hh, rows, bpp = pngread.read_raw(png)
    return w, hh, [bytes(b for i, b in enumerate(r) if i % bpp < 3) for r in rows]


class Strips(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=2, size=(800, 600))
        cls.addClassCleanup(cls.sway.stop)
        # Patterns that differ on every row, so a strip out of place shows.
        cls.recs = [wayland.Recorder(cls.sway, output="HEADLESS-1", checker=7,
                                     square="50+101+203"),
                    wayland.Recorder(cls.sway, output="HEADLESS-2", color="00ff00",
                                     checker=5, app_id="wlrecord-2")]
        for r in cls.recs:
            cls.addClassCleanup(r.stop)

    def test_a_read_in_strips_is_one_frame_and_is_grims_picture(self):
        s = self.sway
        d = s.tmpdir("deskhand-strips-")
        for mon in (0, 1):
            with self.subTest(monitor=mon):
                out, ref = os.path.join(d, "m%d.png" % mon), os.path.join(d, "g%d.png" % mon)
                t0 = time.monotonic()
                # --max-side: the model's view, read through vision/ in strips.
                p = s.run_as([h.binary(), "screenshot", "--monitor", mon, "--max-side", 800,
                              "-o", out], env={"WAYLAND_DEBUG": "client"})
                took = time.monotonic() - t0
                self.assertEqual(p.returncode, 0, p.stderr[-2000:])
                self.assertEqual(p.stderr.count(b"capture_output("), 1)
                g = s.run_as(["grim", "-o", "HEADLESS-%d" % (mon + 1), ref])
                self.assertEqual(g.returncode, 0, g.stderr)
                with open(out, "rb") as f, open(ref, "rb") as f2:
                    mine, grims = rgb_rows(f.read()), rgb_rows(f2.read())
                self.assertEqual(mine[:2], (800, 600))
                self.assertTrue(mine == grims, "deskhand's read differs from grim's")
                print("# monitor %d: one frame, %.0f ms for the whole command" % (mon, took * 1000))


if __name__ == "__main__":
    h.main()
