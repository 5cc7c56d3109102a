"""deskhand windows on private Xvfb servers: real xterms and test windows
with titles in every encoding X clients use, windows that vanish while they
are being listed, a reparenting manager without EWMH (played by the test
client), and openbox as a real EWMH manager for activation."""
import os
import re
import shutil
import subprocess
import sys
import time
import unittest

import harness as h

LINE = re.compile(r"^0x([0-9a-f]{8}) (-|\d+) ([*-]) (\d+)x(\d+)([+-]\d+)([+-]\d+) "
                  r"(\S+) (.*)$")


def helper(name):
    return os.path.join(h.build_dir(), "tests", "os", name)


def windows(x, *args, env=None):
    return h.run([h.binary(), "windows"] + list(args), env=env or x.env())


def parse(out):
    rows = []
    for line in out.decode("utf-8").splitlines():
        m = LINE.match(line)
        assert m, "malformed line %r" % line
        rows.append({
            "id": int(m.group(1), 16), "pid": m.group(2),
            "active": m.group(3) == "*",
            "geometry": tuple(int(m.group(i)) for i in range(4, 8)),
            "class": m.group(8), "title": m.group(9),
        })
    return rows


def listing(x, env=None):
    r = windows(x, env=env)
    assert r.returncode == 0, r.stderr
    return parse(r.stdout)


class Client:
    """A capture-xclient window kept open until stop()."""

    def __init__(self, x, *args, env=None):
        self.p = subprocess.Popen([helper("capture-xclient")] + list(args),
                                  env=env or x.env(LANG="C.UTF-8"),
                                  stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE,
                                  start_new_session=True)
        line = self.p.stdout.readline().decode().split()
        if not line:
            raise RuntimeError("capture-xclient did not start")
        self.ids = [int(v, 16) for v in line]
        self.id = self.ids[-1]
        self.pid = self.p.pid

    def stop(self):
        if self.p.poll() is None:
            self.p.stdin.close()
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                self.p.kill()
                self.p.wait()
        self.p.stdout.close()


def setUpModule():
    global X
    X = h.Xvfb(1280, 800)


def tearDownModule():
    X.stop()


class Listing(unittest.TestCase):
    def test_xterm_utf8_title_pid_and_class(self):
        title = "Ζ漢字🙂"
        xt = h.Proc(["xterm", "-T", title, "-geometry", "40x10+30+40",
                     "-e", "sh", "-c", "sleep 100000"],
                    env=X.env(LANG="C.UTF-8", LC_ALL="C.UTF-8"))
        try:
            found = h.wait_for(lambda: [w for w in listing(X)
                                        if w["title"] == title], timeout=30)
            self.assertTrue(found, listing(X))
            w = found[0]
            self.assertEqual(w["pid"], str(xt.pid))
            self.assertEqual(w["class"], "XTerm")
            width, height, x, y = w["geometry"]
            self.assertGreater(width, 100)
            self.assertGreater(height, 50)
            # xterm's window sits at the requested place (its 2 px border
            # lies outside the client area).
            self.assertIn(x, range(30, 34))
            self.assertIn(y, range(40, 44))
            # The same title in the C locale: conversion never depends on it.
            env = X.env(LANG="C", LC_ALL="C")
            self.assertIn(title, [v["title"] for v in listing(X, env=env)])
        finally:
            xt.stop()

    def test_geometry_in_root_coordinates(self):
        c = Client(X, "window", "--geometry", "200x100+123+45",
                   "--utf8-name", "geo")
        try:
            w = [v for v in listing(X) if v["id"] == c.id][0]
            self.assertEqual(w["geometry"], (200, 100, 123, 45))
            self.assertEqual(w["pid"], str(c.pid))
            self.assertEqual(w["class"], "CaptureTest")
            self.assertFalse(w["active"])
        finally:
            c.stop()

    def test_wm_name_encodings(self):
        cases = [
            (["--latin1-name", "Café Münster"], "Café Münster"),
            (["--compound-name", "Ζ漢字 é"], "Ζ漢字 é"),
            (["--utf8-name", "utf8 wins", "--latin1-name", "latin"],
             "utf8 wins"),
        ]
        for args, want in cases:
            c = Client(X, "window", *args)
            try:
                w = [v for v in listing(X) if v["id"] == c.id]
                self.assertEqual(len(w), 1, args)
                self.assertEqual(w[0]["title"], want, args)
            finally:
                c.stop()

    def test_no_pid_no_title(self):
        c = Client(X, "window", "--no-pid", "--class", "Two Words")
        try:
            w = [v for v in listing(X) if v["id"] == c.id][0]
            self.assertEqual(w["pid"], "-")
            self.assertEqual(w["title"], "")
            self.assertEqual(w["class"], "Two_Words")
        finally:
            c.stop()

    def test_hostile_titles_cannot_forge_lines(self):
        c = Client(X, "window", "--utf8-name", "evil\n0x00000001 1 * 1x1+0+0 X fake")
        bad = Client(X, "window", "--utf8-name", os.fsdecode(b"bad\xff\xfeend"))
        try:
            r = windows(X)
            self.assertEqual(r.returncode, 0)
            rows = parse(r.stdout)
            self.assertNotIn(1, [v["id"] for v in rows])
            w = [v for v in rows if v["id"] == c.id][0]
            self.assertEqual(w["title"], "evil⟨LF⟩0x00000001 1 * 1x1+0+0 X fake")
            w = [v for v in rows if v["id"] == bad.id][0]
            self.assertEqual(w["title"], "bad\ufffd\ufffdend")
        finally:
            c.stop()
            bad.stop()

    def test_hostile_titles_cannot_steer_the_terminal(self):
        # Issue 10, class 4: a title's OSC would retitle the terminal that
        # lists it, its C1 CSI (U+009B) move the cursor, its RLO reverse the
        # line; they show as marks.
        c = Client(X, "window", "--utf8-name", "t\x1b]0;x\x07\u009b2J\u202eY")
        try:
            r = windows(X)
            self.assertEqual(r.returncode, 0)
            self.assertNotIn(b"\x1b", r.stdout)
            self.assertNotIn("\u202e".encode(), r.stdout)
            self.assertNotIn(b"\xc2\x9b", r.stdout)
            w = [v for v in parse(r.stdout) if v["id"] == c.id][0]
            self.assertEqual(w["title"], "t⟨ESC⟩]0;x⟨BEL⟩⟨U+009B⟩2J⟨U+202E⟩Y")
        finally:
            c.stop()

    def test_frame_is_looked_through(self):
        # A reparenting manager without EWMH: the frame has no WM_STATE,
        # the client inside it does; the list names the client.
        c = Client(X, "framed", "--utf8-name", "inside a frame")
        try:
            frame, client = c.ids
            rows = listing(X)
            ids = [v["id"] for v in rows]
            self.assertIn(client, ids)
            self.assertNotIn(frame, ids)
            w = [v for v in rows if v["id"] == client][0]
            self.assertEqual(w["title"], "inside a frame")
            self.assertEqual(w["class"], "Framed")
            self.assertEqual(w["geometry"], (280, 170, 60, 70))
        finally:
            c.stop()

    def test_unmapped_windows_are_not_listed(self):
        before = {v["id"] for v in listing(X)}
        c = Client(X, "window", "--utf8-name", "short-lived")
        c.stop()
        after = {v["id"] for v in listing(X)}
        self.assertNotIn(c.id, after)
        self.assertEqual(before, after)

    def test_windows_vanishing_mid_listing_are_skipped(self):
        # Ten listings while windows come and go, however long they take:
        # the churn outlasts them and is stopped after.
        churn = h.Proc([helper("capture-xclient"), "churn", "600"], env=X.env())
        try:
            for _ in range(10):
                r = windows(X)
                self.assertEqual(r.returncode, 0, r.stderr)
                self.assertEqual(r.stderr, b"")
                parse(r.stdout)
            self.assertIsNone(churn.p.poll(), "the churn ended before the listings")
        finally:
            churn.stop()

    def test_bad_arguments(self):
        for args in (["--activate"], ["--activate", "zz"],
                     ["--activate", "0x"], ["--activate", "-5"],
                     ["--activate", "0x1ffffffff"], ["--activate", "0"],
                     ["--bogus"], ["extra"]):
            r = windows(X, *args)
            self.assertEqual(r.returncode, 2, args)
            self.assertIn(b"usage: deskhand windows", r.stderr, args)

    def test_activate_unknown_window(self):
        r = windows(X, "--activate", "0x7ffffff0")
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"no window 0x7ffffff0", r.stderr)

    def test_activate_without_window_manager(self):
        c = Client(X, "window", "--utf8-name", "lonely")
        try:
            r = windows(X, "--activate", "0x%x" % c.id)
            self.assertEqual(r.returncode, 1)
            self.assertIn(b"no EWMH window manager", r.stderr)
        finally:
            c.stop()

    def test_no_display(self):
        env = X.env()
        del env["DISPLAY"]
        r = windows(X, env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"no display", r.stderr)


class WithOpenbox(unittest.TestCase):
    """openbox: a real EWMH manager that reparents its clients."""

    @classmethod
    def setUpClass(cls):
        if shutil.which("openbox") is None:
            raise unittest.SkipTest("openbox is not installed "
                                    "(.ci/install-deps installs it)")
        cls.x = h.Xvfb(1280, 800)
        cls.dir = h.tmpdir()
        # A private configuration directory: no user rc file, no session.
        env = cls.x.env(XDG_CONFIG_HOME=cls.dir, HOME=cls.dir)
        # openbox runs the --startup command once it manages windows; its
        # _NET_SUPPORTING_WM_CHECK appears earlier, and windows mapped in
        # between may be left unmanaged.
        flag = os.path.join(cls.dir, "ready")
        cls.wm = h.Proc(["openbox", "--sm-disable", "--startup",
                         "touch " + flag], env=env)
        if not h.wait_for(lambda: os.path.exists(flag), timeout=30):
            cls.wm.stop()
            cls.x.stop()
            raise RuntimeError("openbox did not start")

    @classmethod
    def tearDownClass(cls):
        cls.wm.stop()
        cls.x.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_client_list_activation_and_stacking(self):
        a = Client(self.x, "window", "--utf8-name", "first")
        b = Client(self.x, "window", "--utf8-name", "second")
        try:
            def managed():
                rows = listing(self.x)
                return rows if {a.id, b.id} <= {v["id"] for v in rows} else None
            rows = h.wait_for(managed, timeout=30)
            self.assertTrue(rows)
            # Root coordinates, although openbox reparented the clients.
            for c in (a, b):
                info = h.run(["xwininfo", "-id", "0x%x" % c.id],
                             env=self.x.env()).stdout.decode()
                ax = int(re.search(r"Absolute upper-left X:\s+(-?\d+)", info).group(1))
                ay = int(re.search(r"Absolute upper-left Y:\s+(-?\d+)", info).group(1))
                w = [v for v in rows if v["id"] == c.id][0]
                self.assertEqual(w["geometry"][2:], (ax, ay))
            r = windows(self.x, "--activate", "0x%x" % a.id)
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = listing(self.x)
            active = [v["id"] for v in rows if v["active"]]
            self.assertEqual(active, [a.id])
            ids = [v["id"] for v in rows]
            self.assertGreater(ids.index(a.id), ids.index(b.id))
            # Decimal ids work too; the list is bottom to top, so the
            # window just raised comes last of the two.
            r = windows(self.x, "--activate", str(b.id))
            self.assertEqual(r.returncode, 0, r.stderr)
            rows = listing(self.x)
            self.assertEqual([v["id"] for v in rows if v["active"]], [b.id])
            ids = [v["id"] for v in rows]
            self.assertGreater(ids.index(b.id), ids.index(a.id))
            # Clients, never openbox's frames.
            for v in rows:
                self.assertIn(v["id"], (a.id, b.id))
        finally:
            a.stop()
            b.stop()

    def test_vanishing_windows_under_a_manager(self):
        churn = h.Proc([helper("capture-xclient"), "churn", "600"],
                       env=self.x.env())
        try:
            for _ in range(10):
                r = windows(self.x)
                self.assertEqual(r.returncode, 0, r.stderr)
                parse(r.stdout)
            self.assertIsNone(churn.p.poll(), "the churn ended before the listings")
        finally:
            churn.stop()


if __name__ == "__main__":
    h.main()
