"""The Wayland harness (tests/lib/wayland.py) and its clients, tried under
a real headless sway: the compositor comes up as promised (outputs where
the config puts them, a private runtime directory, the environment), the
recording client tests/wlrecord sees the pointer, wheel and keys that the
virtual devices (tests/wlinput), sway's own seat commands and wtype send,
in surface coordinates and with the keymap each keyboard uploads, and a
grim screenshot shows its pattern where it is. weston stands for a
compositor without the wlroots protocols. Skipped without sway/weston."""
import json
import os
import stat
import time
import unittest

import harness as h
import pngread
import wayland

W, H = 1920, 1080


class SwayHarness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.sway = wayland.Sway(outputs=2, size=(W, H))
        cls.addClassCleanup(cls.sway.stop)
        cls.input = wayland.VirtualInput(cls.sway)

    @classmethod
    def tearDownClass(cls):
        cls.sway.stop()

    def recorder(self, **kw):
        rec = wayland.Recorder(self.sway, **kw)
        self.addCleanup(rec.stop)
        self.recs = getattr(self, "recs", []) + [rec]
        return rec

    def test_environment_and_outputs(self):
        s = self.sway
        self.assertEqual(sorted(s.env), sorted(["PATH", "HOME", "LANG", "LC_ALL",
                                                "XDG_RUNTIME_DIR", "WAYLAND_DISPLAY",
                                                "SWAYSOCK"]))
        st = os.stat(s.runtime_dir)
        self.assertEqual((st.st_uid, stat.S_IMODE(st.st_mode)), (s.uid, 0o700))
        self.assertTrue(stat.S_ISSOCK(os.stat(s.socket).st_mode))
        self.assertTrue(s.swaysock.startswith(s.runtime_dir + "/sway-ipc."))
        if os.geteuid() == 0:
            self.assertEqual(s.uid, 65534)
        rects = {o["name"]: o["rect"] for o in s.query("get_outputs")}
        self.assertEqual(rects, {"HEADLESS-1": dict(x=0, y=0, width=W, height=H),
                                 "HEADLESS-2": dict(x=W, y=0, width=W, height=H)})
        # Clients run as the compositor's uid, in its environment only.
        r = s.run_as(["sh", "-c", "id -u; echo ${DISPLAY-unset}"])
        self.assertEqual(r.stdout.decode().split(), [str(s.uid), "unset"])

    def test_pointer_from_the_virtual_pointer(self):
        rec = self.recorder(output="HEADLESS-2")
        self.input.move(W + 100, 200)
        self.input.click(272)
        self.input.scroll(1)
        evs = rec.wait_events(lambda e: any(x["kind"] == "axis" for x in e))
        kinds = [e["kind"] for e in evs if e["kind"] != "frame"]
        moved = [e for e in evs if e["kind"] in ("enter", "motion")][-1]
        # Surface coordinates: the output's own, the window fills it.
        self.assertEqual((moved["x"], moved["y"], moved["fx"], moved["fy"]),
                         ("100", "200", str(100 * 256), str(200 * 256)))
        self.assertEqual([(e["kind"], e["button"]) for e in evs if "button" in e],
                         [("press", "272"), ("release", "272")])
        self.assertEqual(kinds[-3:], ["axis-source", "axis-discrete", "axis"])
        self.assertEqual(evs[-1]["kind"], "frame")
        self.assertEqual([e.get("discrete") for e in evs if e["kind"] == "axis-discrete"],
                         ["1"])
        self.assertEqual([e["value"] for e in evs if e["kind"] == "axis"], ["15"])

    def test_pointer_from_sways_seat_commands(self):
        rec = self.recorder(output="HEADLESS-1")
        self.sway.swaymsg("seat", "seat0", "cursor", "set", 321, 123)
        self.sway.swaymsg("seat", "seat0", "cursor", "press", "button3")
        self.sway.swaymsg("seat", "seat0", "cursor", "release", "button3")
        evs = rec.wait_events(lambda e: any(x["kind"] == "release" for x in e))
        moved = [e for e in evs if e["kind"] in ("enter", "motion")][-1]
        self.assertEqual((moved["x"], moved["y"]), ("321", "123"))
        self.assertEqual([(e["kind"], e["button"]) for e in evs if "button" in e],
                         [("press", "273"), ("release", "273")])

    def test_keys_from_the_virtual_keyboard(self):
        rec = self.recorder(output="HEADLESS-1")
        self.input.key(42, True)
        self.input.mods(0x1)
        self.input.key(30, True)
        self.input.key(30, False)
        self.input.key(42, False)
        self.input.mods(0)
        self.input.key(30, True)
        self.input.key(30, False)
        evs = rec.wait_events(lambda e: len([x for x in e if x["kind"] == "key-release"]) >= 3)
        presses = [(e["keycode"], e["name"], e["text"]) for e in evs if e["kind"] == "key-press"]
        self.assertEqual(presses, [("50", "Shift_L", ""), ("38", "A", "A"), ("38", "a", "a")])
        self.assertIn("Shift", [e["active"] for e in evs if e["kind"] == "modifiers"])

    def test_wtype_uploads_its_keymap_and_types(self):
        rec = self.recorder(output="HEADLESS-1")
        text = "hé Ωж\tz"
        r = self.sway.run_as(["wtype", text], timeout=30)
        self.assertEqual(r.returncode, 0, r.stderr)
        evs = rec.wait_events(lambda e: "z" in [x.get("text") for x in e
                                                if x["kind"] == "key-release"])
        # wtype's own keymap arrived before its first key, and the keys
        # decode with it (the Greek and Cyrillic letters are in no US map).
        kinds = [e["kind"] for e in evs]
        self.assertIn("keymap", kinds)
        self.assertLess(kinds.index("keymap"), kinds.index("key-press"))
        typed = "".join(e["text"] for e in evs if e["kind"] == "key-press")
        self.assertEqual(typed, text)

    def grim_until(self, args, path, shown):
        """grim's picture once shown(rows) holds: a client's frame done is
        its own, and sway's composite of a window just made fullscreen
        can follow it (once, the first grim showed the background).
        Bounded by a minute, not a count: under load fifty pictures
        once all came before sway's first composite."""
        end = time.monotonic() + 60
        while True:
            r = self.sway.run_as(["grim"] + args + [path])
            self.assertEqual(r.returncode, 0, r.stderr)
            with open(path, "rb") as f:
                w, hh, rows = pngread.read(f.read())
            if shown(rows):
                return w, hh, rows
            if time.monotonic() > end:
                r = self.sway.run_as(["grim", path])
                with open(path, "rb") as f:
                    _, _, whole = pngread.read(f.read())
                self.fail("grim never showed it; the layout: %s; sway's outputs: %s\n"
                          "tree: %s\nrecorders: %s" % (
                              [whole[y][x] for x, y in ((0, 0), (W, 0), (W + 17, 17), (5, 5))],
                              json.dumps(self.sway.query("get_outputs")),
                              json.dumps(self.sway.query("get_tree")),
                              [r.text() for r in self.recs]))
            time.sleep(0.05)

    def test_grim_shows_the_pattern(self):
        rec = self.recorder(output="HEADLESS-2", color="ff0000", checker=16)
        self.recorder(output="HEADLESS-1", color="0000ff", app_id="blue")
        # The pointer onto the output grim reads: with the virtual pointer
        # on the other one, sway (1.7, pixman) at times never composited
        # this output again, its tree right (seen 1 run in 2 under load;
        # moving the pointer over at once showed the window).
        self.input.move(W + 300, 300)
        path = os.path.join(self.sway.tmpdir(), "shot.png")
        self.sway.check_writable(path)
        w, hh, rows = self.grim_until(["-o", "HEADLESS-2"], path,
                                      lambda rows: rows[0][0] == (255, 0, 0))
        self.assertEqual((w, hh), (W, H))
        for (x, y), want in (((0, 0), (255, 0, 0)), ((16, 0), (0, 255, 255)),
                             ((17, 17), (255, 0, 0)), ((W - 1, H - 1), (255, 0, 0)),
                             ((W - 1, 0), (0, 255, 255))):
            self.assertEqual(rows[y][x], want, (x, y))
        self.assertTrue(rec.find("ready"))
        # The whole layout: the blue window left, the red pattern right.
        w, hh, rows = self.grim_until(["-g", "0,0 %dx%d" % (2 * W, H), "-s", "1"], path,
                                      lambda rows: rows[5][5] == (0, 0, 255))
        self.assertEqual((w, rows[5][5], rows[0][W]), (2 * W, (0, 0, 255), (255, 0, 0)))


class SwayLifecycle(unittest.TestCase):
    def test_stop_ends_what_it_started(self):
        s = wayland.Sway()
        client = s.spawn(["sleep", "600"])
        pids = (s.proc.pid, client.pid)
        dirs = (s.runtime_dir, s.home)
        s.stop()
        for pid in pids:
            self.assertFalse(os.path.exists("/proc/%d" % pid), pid)
        for d in dirs:
            self.assertFalse(os.path.exists(d), d)

    def test_check_writable(self):
        with wayland.Sway() as s:
            s.check_writable(os.path.join(s.tmpdir(), "f"))
            if os.geteuid() == 0:
                with self.assertRaises(AssertionError):
                    s.check_writable(os.path.join(h.tmpdir(), "f"))


class WestonHarness(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.weston = wayland.Weston(size=(1280, 800))
        cls.addClassCleanup(cls.weston.stop)

    @classmethod
    def tearDownClass(cls):
        cls.weston.stop()

    def test_unsupported_compositor(self):
        r = self.weston.run_as(["wayland-info"])
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"'xdg_wm_base'", r.stdout)
        for iface in (b"zwlr_screencopy_manager_v1", b"zwlr_virtual_pointer_manager_v1",
                      b"zwp_virtual_keyboard_manager_v1"):
            self.assertNotIn(iface, r.stdout)
        path = os.path.join(self.weston.tmpdir(), "shot.png")
        r = self.weston.run_as(["grim", path])
        self.assertNotEqual(r.returncode, 0)
        self.assertIn(b"screencopy", r.stderr)

    def test_wlrecord_maps_on_weston(self):
        rec = wayland.Recorder(self.weston, color="00ff00")
        self.addCleanup(rec.stop)
        self.assertEqual(rec.find("mapped")[0]["width"], "1280")


if __name__ == "__main__":
    h.main()
