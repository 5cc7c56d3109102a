"""deskhand's display commands on a real headless sway 1.7 (the wlroots
backend), each against an independent truth: screenshots against grim's
pixels on a desktop full of coloured text (whole screen, monitors,
regions, one output and two), `windows` against sway's tree, find-text
against where the pixels of the word are, clicks on the second output
against what the client there records, and `doctor`'s report. Pointer,
keys and typing: test_wayland_input.py; the refusals on a compositor it
cannot drive: test_wayland_refuse.py. Skipped without sway."""
import os
import unittest

import harness as h
import pngread
import wayland
from wl_util import (deskhand, first_difference, foot_showing, grim, noise_foot,
                     png_pixels, text_box, view, views, wait_still, wait_view)

W, H = 1920, 1080


def ocr_built():
    with open(os.path.join(h.build_dir(), "config.h")) as f:
        return "#define DESKHAND_HAVE_OCR 1" in f.read()


class CaptureCase(unittest.TestCase):
    def shot(self, *args):
        """deskhand screenshot ARGS -o F; F's pixels (decoded by libpng)."""
        path = os.path.join(self.sway.tmpdir(), "shot.png")
        r = deskhand(self.sway, "screenshot", "-o", path, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, b"")
        return path, png_pixels(path)

    def assertSamePixels(self, got, want, what):
        self.assertEqual(got[:2], want[:2], what)
        if got[2] != want[2]:
            self.fail("%s: the pixels differ first at %s" % (
                what, first_difference(got[2], want[2], want[0])))


class CaptureOneOutput(CaptureCase):
    """Two foot windows side by side, each cell a random character in
    random colours: every pixel is detail, and the two halves differ."""

    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=1, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)
        noise_foot(cls.sway, "noise-left", 1)
        noise_foot(cls.sway, "noise-right", 2)
        cls.truth = wait_still(cls.sway)

    def test_the_desktop_is_noisy(self):
        # Guards the test itself: a blank screen would make equality cheap.
        w, hh, pix = self.truth
        self.assertEqual((w, hh), (W, H))
        colours = {pix[i:i + 3] for i in range(0, len(pix), 3 * 997)}
        self.assertGreater(len(colours), 200)
        self.assertEqual(len(views(self.sway.query("get_tree"))), 2)

    def test_whole_screen_equals_grim(self):
        _, got = self.shot()
        self.assertSamePixels(got, self.truth, "whole screen")

    def test_monitor_0_equals_grim_of_the_output(self):
        _, got = self.shot("--monitor", "0")
        self.assertSamePixels(got, grim(self.sway, "-o", "HEADLESS-1"), "monitor 0")

    def test_regions_equal_grim(self):
        for x, y, w, hh in ((0, 0, 1, 1), (W - 1, H - 1, 1, 1), (100, 200, 333, 177),
                            (955, 0, 11, H), (0, 1079, W, 1), (1, 3, 1917, 1075)):
            with self.subTest(region=(x, y, w, hh)):
                _, got = self.shot("--region", "%d,%d,%d,%d" % (x, y, w, hh))
                want = grim(self.sway, "-g", "%d,%d %dx%d" % (x, y, w, hh))
                self.assertSamePixels(got, want, "region %d,%d,%d,%d" % (x, y, w, hh))

    def test_region_through_an_independent_decoder(self):
        # The same comparison with the PNG decoded in pure Python, so that
        # libpng (which deskhand's encoder and capture-png share) is not the
        # only reader of deskhand's file.
        path, _ = self.shot("--region", "700,300,97,61")
        with open(path, "rb") as f:
            w, hh, rows = pngread.read(f.read())
        _, _, want = grim(self.sway, "-g", "700,300 97x61")
        got = b"".join(bytes(v for px in row for v in px) for row in rows)
        self.assertEqual((w, hh), (97, 61))
        self.assertEqual(got, want)

    def test_off_screen_regions_refused(self):
        path = os.path.join(self.sway.tmpdir(), "no.png")
        for region in ("1900,0,21,10", "0,1075,10,6", "-1,0,5,5", "0,0,0,5"):
            with self.subTest(region=region):
                r = deskhand(self.sway, "screenshot", "-o", path, "--region", region)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertFalse(os.path.exists(path))
        r = deskhand(self.sway, "screenshot", "-o", path, "--monitor", "1")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertFalse(os.path.exists(path))

    def test_screen_reports_the_output(self):
        r = deskhand(self.sway, "screen")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.decode(), "%dx%d\nmonitor 0: %dx%d+0+0\n" % (W, H, W, H))


class CaptureTwoOutputs(CaptureCase):
    """HEADLESS-1 with coloured text, HEADLESS-2 (right of it) with
    tests/wlrecord's checker: the layout is 3840x1080."""

    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=2, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)
        cls.rec = wayland.Recorder(cls.sway, output="HEADLESS-2", checker=7,
                                   color="30a050")
        cls.sway.swaymsg("focus", "output", "HEADLESS-1")
        noise_foot(cls.sway, "noise", 3)
        cls.truth = wait_still(cls.sway)

    def setUp(self):
        self.rec.reset()

    def test_whole_screen_equals_grim_of_the_layout(self):
        self.assertEqual(self.truth[:2], (2 * W, H))
        _, got = self.shot()
        self.assertSamePixels(got, self.truth, "the layout")

    def test_each_monitor_equals_grim_of_its_output(self):
        for n, name in ((0, "HEADLESS-1"), (1, "HEADLESS-2")):
            with self.subTest(monitor=n):
                _, got = self.shot("--monitor", n)
                self.assertSamePixels(got, grim(self.sway, "-o", name), name)

    def test_region_across_the_outputs(self):
        _, got = self.shot("--region", "1800,100,300,211")
        self.assertSamePixels(got, grim(self.sway, "-g", "1800,100 300x211"),
                              "a region across both outputs")

    def test_screen_lists_both_monitors(self):
        r = deskhand(self.sway, "screen")
        self.assertEqual(r.stdout.decode(), "%dx%d\nmonitor 0: %dx%d+0+0\n"
                         "monitor 1: %dx%d+%d+0\n" % (2 * W, H, W, H, W, H, W))

    def test_click_on_the_second_output_lands_there(self):
        r = deskhand(self.sway, "click", W + 333, 444)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = self.rec.wait_events(lambda e: any(x["kind"] == "release" for x in e))
        moved = [e for e in evs if e["kind"] in ("enter", "motion")][-1]
        # The window fills HEADLESS-2: its surface coordinates are the
        # output's own.
        self.assertEqual((moved["x"], moved["y"]), ("333", "444"))
        self.assertEqual([(e["kind"], e["button"]) for e in evs if "button" in e],
                         [("press", "272"), ("release", "272")])

    def test_points_off_the_layout_refused_and_nothing_sent(self):
        for x, y in ((2 * W, 0), (0, H), (-1, 10), (2 * W + 5, H + 5)):
            with self.subTest(point=(x, y)):
                r = deskhand(self.sway, "click", x, y)
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn(b"off the screen", r.stderr)
        # A click that arrives after the refusals marks the end of what
        # was sent: nothing may come before it.
        r = deskhand(self.sway, "click", W + 1, 1)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = self.rec.wait_events(lambda e: any(x["kind"] == "release" for x in e))
        self.assertEqual([(e["kind"], e["button"]) for e in evs if "button" in e],
                         [("press", "272"), ("release", "272")])
        self.assertEqual([(e["x"], e["y"]) for e in evs if e["kind"] in ("enter", "motion")][-1],
                         ("1", "1"))


class Windows(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=1, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)
        cls.rec = wayland.Recorder(cls.sway, checker=32, app_id="wlrecord")
        # A floating window beside the tiled one: geometry that is not a
        # half of the screen.
        foot_showing(cls.sway, "notes", "true", title="Notizen — ü 😀")
        cls.sway.swaymsg("[app_id=notes]", "floating", "enable")
        cls.sway.swaymsg("[app_id=notes]", "resize", "set", "640", "480")
        cls.sway.swaymsg("[app_id=notes]", "move", "position", "100", "150")

    def listed(self):
        r = deskhand(self.sway, "windows")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = {}
        for line in r.stdout.decode().splitlines():
            wid, pid, active, geom, klass, title = line.split(" ", 5)
            out[int(wid, 16)] = (int(pid), active, geom, klass, title)
        return out

    def expected(self):
        want = {}
        for v in views(self.sway.query("get_tree")):
            r = v["rect"]
            want[v["id"]] = (v["pid"], "*" if v["focused"] else "-",
                             "%dx%d%+d%+d" % (r["width"], r["height"], r["x"], r["y"]),
                             v["app_id"], v["name"])
        return want

    def test_list_matches_sways_tree(self):
        v = wait_view(self.sway, "notes")
        self.assertEqual(v["rect"], dict(x=100, y=150, width=640, height=480))
        got = self.listed()
        self.assertEqual(got, self.expected())
        self.assertEqual(sorted(k for _, _, _, k, _ in got.values()), ["notes", "wlrecord"])
        self.assertEqual(got[v["id"]][2], "640x480+100+150")
        self.assertEqual(got[v["id"]][4], "Notizen — ü 😀")
        self.assertEqual(got[v["id"]][0], v["pid"])
        self.assertEqual([a for _, a, _, _, _ in got.values()].count("*"), 1)

    def test_activate_moves_the_focus(self):
        # wlrecord is fullscreen: sway ignores a foreign-toplevel activation
        # of the window it covers, without a word (deskhand said "done" and
        # nothing moved, before it used sway's focus command).
        ids = {v["app_id"]: v["id"] for v in views(self.sway.query("get_tree"))}
        for app in ("wlrecord", "notes", "wlrecord"):
            with self.subTest(activate=app):
                r = deskhand(self.sway, "windows", "--activate", "0x%x" % ids[app])
                self.assertEqual(r.returncode, 0, r.stderr)
                wait_view(self.sway, app, focused=True)
                got = self.listed()
                self.assertEqual([k for _, a, _, k, _ in got.values() if a == "*"], [app])
                self.assertEqual(got, self.expected())

    def test_activate_without_sways_ipc_never_claims_a_focus_it_lacks(self):
        # Without SWAYSOCK only the toplevel protocol is left: sway refuses
        # to raise the floating window behind the fullscreen one, and the
        # activation must fail rather than report success.
        no_ipc = {"SWAYSOCK": None}
        self.sway.swaymsg("[app_id=wlrecord]", "focus")
        self.sway.swaymsg("[app_id=wlrecord]", "fullscreen", "enable")
        wait_view(self.sway, "wlrecord", focused=True)
        r = deskhand(self.sway, "windows", env=no_ipc)
        self.assertEqual(r.returncode, 0, r.stderr)
        ids = {l.split(" ", 5)[4]: l.split()[0] for l in r.stdout.decode().splitlines()}
        r = deskhand(self.sway, "windows", "--activate", ids["notes"], env=no_ipc)
        now = view(self.sway, "notes")["focused"]
        if r.returncode == 0:
            self.assertTrue(now, "activation reported done, the focus did not move")
        else:
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn(b"did not activate", r.stderr)
            self.assertFalse(now)
        # Not covered, the same activation works.
        self.sway.swaymsg("[app_id=wlrecord]", "fullscreen", "disable")
        r = deskhand(self.sway, "windows", "--activate", ids["notes"], env=no_ipc)
        self.assertEqual(r.returncode, 0, r.stderr)
        wait_view(self.sway, "notes", focused=True)
        self.sway.swaymsg("[app_id=wlrecord]", "fullscreen", "enable")

    def test_activate_unknown_window_refused(self):
        before = self.expected()
        r = deskhand(self.sway, "windows", "--activate", "0x7fffff")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(b"no window", r.stderr)
        self.assertEqual(self.expected(), before)


@unittest.skipUnless(ocr_built(), "OCR not built (meson -Docr=enabled)")
class FindText(unittest.TestCase):
    """foot's own theme (light text on dark), two windows side by side,
    one word in each, at places only the pixels tell."""

    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=1, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)
        foot_showing(cls.sway, "left", "printf '\\n\\n\\n   alpha'", font_size=24)
        foot_showing(cls.sway, "right", "printf '\\n\\n\\n\\n\\n\\n      deskhand finds'",
                     font_size=24)
        cls.truth = wait_still(cls.sway)
        cls.half = view(cls.sway, "right")["rect"]["x"]

    def find(self, *words):
        r = deskhand(self.sway, "find-text", *words)
        return r, [l.split(" ", 5) for l in r.stdout.decode().splitlines()]

    def check_place(self, words, x0, x1):
        r, lines = self.find(*words)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(lines), 1, lines)
        cx, cy, w, hh = map(int, lines[0][:4])
        bx0, by0, bx1, by1 = text_box(*self.truth, x0, x1)
        self.assertEqual(lines[0][5], " ".join(words))
        self.assertLessEqual(abs(cx - (bx0 + bx1) / 2), 6, (lines, (bx0, by0, bx1, by1)))
        self.assertLessEqual(abs(cy - (by0 + by1) / 2), 6, (lines, (bx0, by0, bx1, by1)))
        self.assertLessEqual(abs(w - (bx1 - bx0 + 1)), 12, (lines, (bx0, by0, bx1, by1)))

    def test_word_in_the_left_window(self):
        self.check_place(["alpha"], 0, self.half)

    def test_words_in_the_right_window(self):
        self.check_place(["deskhand", "finds"], self.half, W)

    def test_absent_word(self):
        r, lines = self.find("zebra")
        self.assertEqual((r.returncode, lines), (1, []))
        self.assertIn(b"not found", r.stderr)


class Doctor(unittest.TestCase):
    def test_doctor_on_sway(self):
        with wayland.Sway(outputs=1) as sway:
            r = deskhand(sway, "doctor")
            self.assertEqual(r.returncode, 0, r.stderr)
            out = r.stdout.decode()
            self.assertIn("desktop: a Wayland session", out)
            self.assertRegex(out, r"display +wlroots backend, Wayland %s, served by sway 1\."
                             % sway.display)
            for iface in ("zwlr_screencopy_manager_v1", "zwlr_virtual_pointer_manager_v1",
                          "zwp_virtual_keyboard_manager_v1",
                          "zwlr_foreign_toplevel_manager_v1"):
                self.assertRegex(out, r"offers +.*\b%s\b" % iface)
            for feature, how in (("screenshots", "zwlr_screencopy_manager_v1"),
                                 ("mouse", "zwlr_virtual_pointer_manager_v1"),
                                 ("key combinations", "zwp_virtual_keyboard_manager_v1"),
                                 ("typing text", "zwp_virtual_keyboard_manager_v1"),
                                 ("windows", "zwlr_foreign_toplevel_manager_v1 and sway IPC"),
                                 ("own-terminal check", "sway IPC")):
                self.assertRegex(out, r"\n  %s +%s\n" % (feature, how))
            # The pointer's place is what wlroots does not tell: said so.
            self.assertRegex(out, r"\n  kill switch +.*where the pointer is")
            # The doors code must not reach: the compositor's socket and
            # sway's IPC (which runs any command it is sent).
            self.assertIn("  Wayland socket       %s: hidden" % sway.socket, out)
            self.assertIn("  compositor IPC       %s: hidden" % sway.swaysock, out)


if __name__ == "__main__":
    h.main()
