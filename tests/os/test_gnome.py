"""The GNOME backend (os/gnome/) on a real headless Mutter 43
(tests/lib/mutter.py: a private bus, pipewire, wireplumber), each claim
against an independent truth: doctor against `mutter --version` and the
bus; screenshots against the pattern tests/wlrecord draws (computed here)
and against GStreamer's pipewiresrc reading a stream of Mutter's own; two
monitors at the places DisplayConfig gives them; the pointer where a
second RemoteDesktop session (the user's hand) put it; a capture in one
long-lived connection after a click (tests/os/gnome-step, as the agent
holds its display); vision/'s strips read from one frame; refusals under
sway and under a compositor whose bus lacks Mutter's names; and the
sandbox's standard profile, tried for real, reaching neither PipeWire
nor Mutter. Skipped where mutter is not installed."""
import os
import re
import shutil
import subprocess
import time
import unittest

import harness as h
import mutter
import wayland
from wl_util import deskhand, helper, png_pixels, first_difference

NAMES = (b"org.gnome.Mutter.RemoteDesktop", b"org.gnome.Mutter.ScreenCast")
SIZE = (1280, 800)


def wait_shown(m, points):
    """Waits until Mutter's picture shows each client: (x, y, RRGGBB) read
    in one connection. wlrecord's "ready" is its own frame done, not yet
    Mutter's composite: a capture right after it showed the background
    (0d263e) once. Bounded: 100 reads 20 ms apart."""
    args = []
    for _ in range(100):
        for x, y, _colour in points:
            args += ["pixel", str(x), str(y)]
        args += ["sleep", "20"]
    want = ["%s %s %s" % (x, y, colour) for x, y, colour in points]
    r = m.run_as([helper("gnome-step")] + args[:-2], timeout=60)
    got = [" ".join(l.split()[1:4]) for l in r.stdout.decode().splitlines()
           if l.startswith("pixel")]
    for i in range(0, len(got) - len(points) + 1, len(points)):
        if got[i:i + len(points)] == want:
            return
    raise AssertionError("Mutter never showed %s: %s" % (want, got[-len(points):]))


def pattern(w, hh, colour, checker, square=None, square_colour=(255, 0, 0)):
    """wlrecord's picture as RGB bytes: checker squares of `colour` and
    its inverse, (0,0) in the colour; the square (N, X, Y) over it."""
    a, b = bytes(colour), bytes(255 - c for c in colour)
    row0 = b"".join(a if (x // checker) % 2 == 0 else b for x in range(w))
    row1 = b"".join(b if (x // checker) % 2 == 0 else a for x in range(w))
    rows = [bytearray(row0 if (y // checker) % 2 == 0 else row1) for y in range(hh)]
    if square:
        n, sx, sy = square
        for y in range(sy, min(sy + n, hh)):
            rows[y][3 * sx:3 * min(sx + n, w)] = bytes(square_colour) * (min(sx + n, w) - sx)
    return rows


def crop(w, pix, x0, x1, hh):
    return b"".join(pix[3 * (y * w + x0):3 * (y * w + x1)] for y in range(hh))


class OneMonitor(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = mutter.Mutter(monitors=1, size=SIZE)
        cls.addClassCleanup(cls.m.stop)
        cls.rec = wayland.Recorder(cls.m, checker=8, square="50+101+203",
                                   press_color="00ff00")
        cls.addClassCleanup(cls.rec.stop)
        cls.hand = mutter.MutterHand(cls.m)
        cls.addClassCleanup(cls.hand.stop)
        wait_shown(cls.m, [(1, 0, "ffffff")])

    def shot(self, *args):
        path = os.path.join(self.m.tmpdir(), "shot.png")
        r = deskhand(self.m, "screenshot", "-o", path, *args)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stderr, b"")
        return path, png_pixels(path)

    def colour(self):
        """The fill colour wlrecord shows now (its press toggles it)."""
        redrawn = self.rec.find("redrawn")
        return (0, 255, 0) if len(redrawn) % 2 else (255, 255, 255)

    def hand_on_window(self):
        """The hand's pointer over wlrecord, seen by it: a virtual pointer's
        first event makes the seat's pointer appear, and the client takes
        it up only after that event (the same as on sway)."""
        self.rec.reset()
        self.hand.move(600, 300)
        self.hand.move(640, 400)
        evs = self.rec.wait_events(lambda e: any(x["kind"] in ("motion", "enter") and
                                                 x.get("x") == "640" for x in e))
        self.assertTrue(any(x.get("x") == "640" for x in evs), evs)

    def wait_redrawn(self):
        evs = self.rec.wait_events(lambda e: any(x["kind"] == "redrawn" for x in e))
        self.assertTrue(any(x["kind"] == "redrawn" for x in evs), evs)

    def test_doctor_names_backend_version_and_features(self):
        r = deskhand(self.m, "doctor")
        self.assertEqual(r.returncode, 0, r.stderr)
        out = r.stdout.decode()
        version = subprocess.run(["mutter", "--version"], stdout=subprocess.PIPE,
                                 text=True).stdout.split()[1]
        self.assertIn("gnome backend, Wayland %s, served by mutter %s" % (self.m.display,
                                                                          version), out)
        self.assertRegex(out, r"offers +.*org\.gnome\.Mutter\.ScreenCast \d+.*"
                              r"org\.gnome\.Mutter\.RemoteDesktop \d+")
        for feature, how in (("screenshots", "org.gnome.Mutter.ScreenCast"),
                             ("mouse", "org.gnome.Mutter.RemoteDesktop"),
                             ("key combinations", "org.gnome.Mutter.RemoteDesktop"),
                             ("typing text", "org.gnome.Mutter.RemoteDesktop"),
                             ("windows", "no: Mutter lists its windows to no other"),
                             ("own-terminal check", "no: Mutter does not tell"),
                             ("kill switch", "the screen-cast stream's cursor metadata"),
                             ("key --down", "no: the RemoteDesktop session's keys")):
            with self.subTest(feature=feature):
                self.assertRegex(out, r"\n  %s +%s" % (re.escape(feature), re.escape(how)))

    def test_screenshot_is_wlrecords_pattern_where_the_client_is(self):
        _, (w, hh, pix) = self.shot()
        self.assertEqual((w, hh), SIZE)
        want = b"".join(pattern(w, hh, self.colour(), 8, (50, 101, 203)))
        self.assertEqual(pix, want, first_difference(pix, want, w))

    def test_screenshot_matches_gstreamers_frame_pixel_for_pixel(self):
        """pipewiresrc reads the hand's own stream of the same monitor
        (cursor hidden); both are the same BGRx memory Mutter painted, so
        nothing may differ (videoconvert BGRx -> RGB is lossless)."""
        if shutil.which("gst-launch-1.0") is None:
            self.skipTest("gst-launch-1.0 is not installed")
        d = self.m.tmpdir()
        ref = os.path.join(d, "gst.png")
        r = self.m.run_as(["gst-launch-1.0", "-q", "pipewiresrc", "path=%d" % self.hand.node,
                           "num-buffers=3", "!", "videoconvert", "!", "pngenc",
                           "snapshot=true", "!", "filesink", "location=" + ref], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        path, _ = self.shot()
        r = h.run([helper("capture-png"), "compare", path, ref])
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn(b"differ 0", r.stdout)

    def test_windows_and_elements_say_why_they_cannot(self):
        """Plain Mutter lists its windows to no other process: `windows`
        says so, and `elements`, which places window-relative boxes by the
        active window's place, says it cannot place them (never boxes at
        a guessed place)."""
        r = deskhand(self.m, "windows")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"Mutter lists its windows to no other process", r.stderr)
        r = deskhand(self.m, "elements")
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"boxes cannot be placed on the screen", r.stderr)
        self.assertEqual(r.stdout, b"")

    def test_cursor_is_where_the_hand_put_it(self):
        for x, y in ((5, 5), (300, 400), (1279, 799), (640, 1)):
            with self.subTest(x=x, y=y):
                self.hand.move(x, y)
                r = deskhand(self.m, "cursor")
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stdout.split()[:2], [b"%d" % x, b"%d" % y])

    def test_strips_of_a_read_take_no_new_frame(self):
        r = self.m.run_as([helper("gnome-step"), "pixel", "0", "0",
                           "strips", "0", "0", "1280", "800", "strips", "100", "3", "77", "700"])
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        for line in lines[2:]:
            with self.subTest(line=line):
                self.assertIn("taken=0 same=1", line)

    def test_capture_after_deskhands_click_shows_it(self):
        """One connection, as the agent's: a capture, then ten times a
        click and a capture at once. A capture after a click waits for the
        frames Mutter sends after it (its first is often the pointer's
        motion alone) and shows the click's colour; where the client
        redraws later than that wait (a loaded machine), Mutter has sent
        nothing newer and the picture is the screen as it still is: the
        settle checks' business, as on X11. So the captures that showed the
        click at once are counted, not required; none goes back to a state
        before one already shown, and the settled picture is the last
        click's."""
        self.rec.reset()
        args = ["pixel", "1", "0"]
        for i in range(10):
            args += ["click", 600 + i, 400, "pixel", "1", "0"]
        before = self.colour()
        r = self.m.run_as([helper("gnome-step")] + args, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = [l.split() for l in r.stdout.decode().splitlines() if l.startswith("pixel")]
        evs = self.rec.wait_events(lambda e: sum(x["kind"] == "redrawn" for x in e) >= 10)
        self.assertEqual(sum(x["kind"] == "redrawn" for x in evs), 10, evs)
        green, white = "00ff00", "ffffff"
        first = "%02x%02x%02x" % before
        want = [first] + [(green if first == white else white) if i % 2 == 0 else first
                          for i in range(10)]
        px = [l[3] for l in lines]
        self.assertEqual(px[0], want[0])
        # Never a picture older than one already shown: each capture is the
        # state after some click at or before its own, never going back.
        j = 0
        for i, p in enumerate(px):
            k = next((k for k in range(j, i + 1) if want[k] == p), None)
            self.assertIsNotNone(k, "capture %d showed %s, none of %s" % (i, p, want[j:i + 1]))
            j = k
        print("# %d of 10 captures right after a click showed it" %
              sum(a == b for a, b in zip(px[1:], want[1:])))
        # The picture as it settles: the last click's colour.
        r = self.m.run_as([helper("gnome-step"), "sleep", "500", "pixel", "1", "0"], timeout=60)
        self.assertEqual(r.returncode, 0, r.stderr)
        last = [l for l in r.stdout.decode().splitlines() if l.startswith("pixel")]
        self.assertEqual(last[0].split()[3], want[-1], last)

    def test_pointer_right_after_deskhands_move_is_where_it_went(self):
        """One connection, as the agent's: after each click at a new
        point, the pointer read at once is that point (the cursor metadata
        of a frame after the motion: the kill switch takes this for where
        deskhand left the pointer, and an older one stopped the agent)."""
        self.rec.reset()
        args, want = [], []
        for i in range(10):
            x, y = 100 + 37 * i, 150 + 23 * i
            args += ["click", x, y, "pointer"]
            want.append(["pointer", str(x), str(y)])
        r = self.m.run_as([helper("gnome-step")] + args, timeout=120)
        self.assertEqual(r.returncode, 0, r.stderr)
        got = [l.split()[:3] for l in r.stdout.decode().splitlines()
               if l.startswith("pointer")]
        self.assertEqual(got, want)
        self.rec.wait_events(lambda e: sum(x["kind"] == "redrawn" for x in e) >= 10)

    def test_capture_after_the_users_click_shows_it(self):
        """A click not deskhand's: the newest frame is taken; it shows the
        change within the frames Mutter sends after the client's redraw
        (counted: captures until the colour shows)."""
        p = self.m.spawn([helper("gnome-step"), "pixel", "1", "0", "wait", "poll", "1", "0"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        out = p.p.stdout
        self.assertTrue(out.readline().startswith(b"open"))
        before = out.readline().split()[3].decode()
        self.hand_on_window()
        self.rec.reset()
        self.hand.click()
        self.wait_redrawn()
        after = "%02x%02x%02x" % self.colour()
        self.assertNotEqual(before, after)
        p.p.stdin.write(after.encode() + b"\n")
        p.p.stdin.close()
        line = out.readline().decode()
        self.assertEqual(p.p.wait(30), 0)
        m = re.match(r"poll .* (\w{6}) captures=(\d+)", line)
        self.assertTrue(m, line)
        self.assertEqual(m.group(1), after, line)


class TwoMonitors(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.m = mutter.Mutter(monitors=2, size=SIZE)
        cls.addClassCleanup(cls.m.stop)
        names = [mon["name"] for mon in cls.m.monitors]
        cls.recs = [wayland.Recorder(cls.m, output=names[0], checker=8, square="50+101+203"),
                    wayland.Recorder(cls.m, output=names[1], color="00ff00", checker=5,
                                     app_id="wlrecord-2")]
        for r in cls.recs:
            cls.addClassCleanup(r.stop)
        wait_shown(cls.m, [(1, 0, "ffffff"), (SIZE[0] + 1, 0, "00ff00")])

    def test_each_monitor_at_its_logical_place(self):
        mons = self.m.monitors
        self.assertEqual([(mn["x"], mn["y"]) for mn in mons], [(0, 0), (SIZE[0], 0)])
        path = os.path.join(self.m.tmpdir(), "shot.png")
        r = deskhand(self.m, "screenshot", "-o", path)
        self.assertEqual(r.returncode, 0, r.stderr)
        w, hh, pix = png_pixels(path)
        self.assertEqual((w, hh), (2 * SIZE[0], SIZE[1]))
        wants = [pattern(SIZE[0], SIZE[1], (255, 255, 255), 8, (50, 101, 203)),
                 pattern(SIZE[0], SIZE[1], (0, 255, 0), 5)]
        for i, mon in enumerate(mons):
            with self.subTest(monitor=mon["name"]):
                got = crop(w, pix, mon["x"], mon["x"] + SIZE[0], hh)
                want = b"".join(wants[i])
                self.assertEqual(got, want, first_difference(got, want, SIZE[0]))
        r = deskhand(self.m, "screen")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(b"2560x800", r.stdout)

    def test_cursor_on_the_second_monitor(self):
        hand = mutter.MutterHand(self.m, monitor=1)
        self.addCleanup(hand.stop)
        for x, y in ((7, 9), (100, 700)):
            hand.move(x, y)
            r = deskhand(self.m, "cursor")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertEqual(r.stdout.split()[:2], [b"%d" % (SIZE[0] + x), b"%d" % y])

    def test_strips_across_both_monitors_take_no_new_frame(self):
        r = self.m.run_as([helper("gnome-step"), "pixel", "0", "0",
                           "strips", "0", "0", "2560", "800", "strips", "1200", "0", "160", "800"])
        self.assertEqual(r.returncode, 0, r.stderr)
        for line in r.stdout.decode().splitlines()[2:]:
            self.assertIn("taken=0 same=1", line)


class Refusals(unittest.TestCase):
    def test_under_sway_gnome_is_not_mine_and_names_the_bus_names(self):
        with wayland.Sway(outputs=1, size=SIZE) as sway:
            r = deskhand(sway, "--display-backend", "gnome", "screenshot", "-o",
                         os.path.join(sway.tmpdir(), "s.png"))
            self.assertEqual(r.returncode, 2, r.stderr)
            for name in NAMES:
                self.assertIn(name, r.stderr)
            # auto: sway is wlroots', and the gnome backend never gets in the way
            r = deskhand(sway, "screen")
            self.assertEqual(r.returncode, 0, r.stderr)

    def test_a_session_bus_without_mutter_is_refused_naming_what_is_missing(self):
        with wayland.Weston(size=SIZE) as weston:
            bus = os.path.join(weston.runtime_dir, "bus")
            weston.spawn(["dbus-daemon", "--session", "--nofork", "--nopidfile",
                          "--address=unix:path=" + bus])
            self.assertTrue(h.wait_for(lambda: wayland._socket_answers(bus), 10))
            env = {"DBUS_SESSION_BUS_ADDRESS": "unix:path=" + bus}
            for args in (["screen"], ["--display-backend", "gnome", "screen"]):
                with self.subTest(args=args):
                    r = deskhand(weston, *args, env=env)
                    self.assertEqual(r.returncode, 2, r.stderr)
                    for name in NAMES:
                        self.assertIn(name, r.stderr)


PROBE = r"""
import os, socket, subprocess
rt = os.environ.get("XDG_RUNTIME_DIR", "%s")
for name in ("pipewire-0", "bus"):
    s = socket.socket(socket.AF_UNIX)
    try:
        s.connect(os.path.join(rt, name))
        print(name, "REACHED")
    except OSError as e:
        print(name, "refused", e.errno)
r = subprocess.run(["gdbus", "call", "-e", "-d", "org.gnome.Mutter.RemoteDesktop", "-o",
                    "/org/gnome/Mutter/RemoteDesktop", "-m",
                    "org.gnome.Mutter.RemoteDesktop.CreateSession"],
                   capture_output=True, text=True, timeout=20,
                   env=dict(os.environ, DBUS_SESSION_BUS_ADDRESS="unix:path=%s/bus"))
print("CreateSession", r.returncode, (r.stdout or r.stderr).strip()[:200])
"""


class Sandbox(unittest.TestCase):
    def test_standard_code_reaches_neither_pipewire_nor_mutter(self):
        with mutter.Mutter(monitors=1, size=SIZE) as m:
            # The same probe outside the sandbox reaches both: the doors exist.
            code = PROBE % (m.runtime_dir, m.runtime_dir)
            r = m.run_as(["python3", "-c", code])
            self.assertIn(b"pipewire-0 REACHED", r.stdout, r.stderr)
            self.assertIn(b"CreateSession 0 (objectpath", r.stdout, r.stderr)
            r = deskhand(m, "exec", "--sandbox", "standard", "python", input=code)
            out = r.stdout.decode()
            self.assertIn("pipewire-0 refused", out, r.stderr)
            self.assertIn("bus refused", out, r.stderr)
            self.assertRegex(out, r"CreateSession [1-9]")
            self.assertNotIn("objectpath", out)


if __name__ == "__main__":
    h.main()
