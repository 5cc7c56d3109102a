"""deskhand screenshot on private Xvfb servers with real content (a plasma
wallpaper set with ImageMagick, xterms full of text): every capture is
compared pixel for pixel with an independent reference (ImageMagick's
`import -window root`, or `xwd -root` decoded here), through MIT-SHM and
through the XGetImage fallback, for the whole screen, regions and monitors;
bad arguments, unwritable places and unsupported depths fail clearly."""
import os
import resource
import shutil
import signal
import struct
import subprocess
import sys
import unittest

import harness as h

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import desktop  # noqa: E402

PNG_SIG = b"\x89PNG\r\n\x1a\n"


def helper(name):
    return os.path.join(h.build_dir(), "tests", "os", name)


def setUpModule():
    global X, WORK, PROCS
    WORK = h.tmpdir()
    X = h.Xvfb(1920, 1080)
    desktop.wallpaper(X, os.path.join(WORK, "wallpaper.png"))
    PROCS = desktop.xterms(X, count=3, cols=90, rows=30)
    desktop.wait_still(X, lambda p: shot(p), PROCS)


def tearDownModule():
    for p in PROCS:
        p.stop()
    X.stop()
    shutil.rmtree(WORK, ignore_errors=True)


def shot(path, *args, x=None, env=None):
    x = x or X
    r = h.run([h.binary(), "screenshot", "-o", path] + list(args),
              env=env or x.env())
    if r.returncode != 0:
        raise AssertionError("screenshot failed (%d): %s" %
                             (r.returncode, r.stderr.decode()))
    return r


def reference(path, x=None):
    """ImageMagick's own capture of the root window."""
    x = x or X
    subprocess.run([desktop.magick("import"), "-window", "root", path],
                   env=x.env(), check=True, timeout=60,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return path


def same(a, b, region=None):
    """Pixel comparison through deskhand's decoder (region: of b)."""
    args = [helper("capture-png"), "compare", a, b]
    if region:
        args.append("%d,%d,%d,%d" % region)
    r = h.run(args)
    return r.returncode == 0, r.stdout.decode() + r.stderr.decode()


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == PNG_SIG, "not a PNG: %r" % head[:8]
    return struct.unpack(">II", head[16:24])


class Screenshot(unittest.TestCase):
    def setUp(self):
        self.dir = h.tmpdir()

    def tearDown(self):
        shutil.rmtree(self.dir, ignore_errors=True)

    def p(self, name):
        return os.path.join(self.dir, name)

    def test_full_screen_equals_imagemagick_import(self):
        shot(self.p("a.png"))
        reference(self.p("ref.png"))
        self.assertEqual(png_size(self.p("a.png")), (1920, 1080))
        ok, out = same(self.p("a.png"), self.p("ref.png"))
        self.assertTrue(ok, out)
        # An independent decoder agrees: ImageMagick counts 0 differences.
        r = h.run([desktop.magick("compare"), "-metric", "AE",
                   self.p("a.png"), self.p("ref.png"), "null:"])
        self.assertEqual(r.stderr.decode().strip(), "0")

    def test_content_is_real(self):
        # The reference is not trivially equal: the screen has thousands of
        # distinct colours (wallpaper) and the text of the xterms.
        shot(self.p("a.png"))
        r = h.run([desktop.magick("identify"), "-format", "%k",
                   self.p("a.png")])
        self.assertGreater(int(r.stdout), 5000)

    def test_xgetimage_fallback_gives_identical_pixels(self):
        shot(self.p("shm.png"))
        shot(self.p("get.png"), env=X.env(DESKHAND_NO_SHM="1"))
        ok, out = same(self.p("get.png"), self.p("shm.png"))
        self.assertTrue(ok, out)
        reference(self.p("ref.png"))
        ok, out = same(self.p("get.png"), self.p("ref.png"))
        self.assertTrue(ok, out)

    def test_no_shared_memory_with_the_server_falls_back(self):
        # In its own IPC namespace deskhand's segment is invisible to the
        # server, exactly as on a remote display: the attach fails and the
        # capture must still succeed, through XGetImage, pixel-exact.
        if shutil.which("unshare") is None:
            self.skipTest("unshare not installed")
        probe = h.run(["unshare", "--ipc", "true"])
        if probe.returncode != 0:
            probe = h.run(["unshare", "-r", "--ipc", "true"])
            if probe.returncode != 0:
                self.skipTest("cannot create an IPC namespace here")
            cmd = ["unshare", "-r", "--ipc"]
        else:
            cmd = ["unshare", "--ipc"]
        r = h.run(cmd + [h.binary(), "screenshot", "-o", self.p("ns.png")],
                  env=X.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        reference(self.p("ref.png"))
        ok, out = same(self.p("ns.png"), self.p("ref.png"))
        self.assertTrue(ok, out)

    def test_region_equals_crop(self):
        reference(self.p("ref.png"))
        for region in [(100, 50, 333, 211), (0, 0, 1, 1),
                       (1919, 1079, 1, 1), (1920 - 641, 1080 - 17, 641, 17),
                       (0, 0, 1920, 1080)]:
            out = self.p("r.png")
            shot(out, "--region", "%d,%d,%d,%d" % region)
            self.assertEqual(png_size(out), region[2:])
            ok, msg = same(out, self.p("ref.png"), region)
            self.assertTrue(ok, "%s: %s" % (region, msg))
            shot(out, "--region", "%d,%d,%d,%d" % region,
                 env=X.env(DESKHAND_NO_SHM="1"))
            ok, msg = same(out, self.p("ref.png"), region)
            self.assertTrue(ok, "XGetImage %s: %s" % (region, msg))

    def test_strip_edges_equal_crop(self):
        # The screenshot command captures in strips of ceil(H / 12) rows
        # (at least 32), each compressed as soon as it is there: heights
        # around a strip's edge, odd widths, a last strip of one row.
        reference(self.p("ref.png"))
        for region in [(3, 5, 1917, 31), (0, 1, 7, 32), (11, 0, 1001, 33),
                       (1, 2, 1919, 385), (0, 0, 1919, 1079),
                       (0, 1, 1920, 1079), (5, 0, 3, 12 * 32 + 1)]:
            out = self.p("s.png")
            shot(out, "--region", "%d,%d,%d,%d" % region)
            self.assertEqual(png_size(out), region[2:])
            ok, msg = same(out, self.p("ref.png"), region)
            self.assertTrue(ok, "%s: %s" % (region, msg))
        r = h.run([h.binary(), "screenshot", "--region", "1,2,1919,385",
                   "-o", "-"], env=X.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        with open(self.p("out.png"), "wb") as f:
            f.write(r.stdout)
        ok, msg = same(self.p("out.png"), self.p("ref.png"),
                       (1, 2, 1919, 385))
        self.assertTrue(ok, msg)

    def test_strips_in_one_process_equal_borrow_and_import(self):
        # A long-lived process: the segment is created and outgrown twice
        # (captured in strips each time), then reused (one grab) while the
        # capture header changes; every capture equals the whole-grab path
        # and ImageMagick's.
        reference(self.p("ref.png"))
        regions = [(1919, 1079, 1, 1), (100, 50, 333, 211), (0, 0, 0, 0),
                   (7, 9, 1001, 777), (0, 0, 0, 0)]
        for env in (X.env(), X.env(DESKHAND_NO_SHM="1")):
            r = h.run([helper("capture-png"), "shots", self.dir] +
                      ["%d,%d,%d,%d" % g for g in regions], env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            for i, g in enumerate(regions):
                full = g if g[2] else (0, 0, 1920, 1080)
                a = self.p("%d.png" % i)
                ok, msg = same(a, self.p("%d-borrow.png" % i))
                self.assertTrue(ok, "%s: %s" % (g, msg))
                ok, msg = same(a, self.p("ref.png"), full)
                self.assertTrue(ok, "%s: %s" % (g, msg))

    def test_stdout(self):
        r = h.run([h.binary(), "screenshot", "-o", "-"], env=X.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith(PNG_SIG))
        with open(self.p("out.png"), "wb") as f:
            f.write(r.stdout)
        reference(self.p("ref.png"))
        ok, out = same(self.p("out.png"), self.p("ref.png"))
        self.assertTrue(ok, out)
        self.assertEqual(r.stderr, b"")

    def test_default_file_name(self):
        r = h.run([h.binary(), "screenshot"], env=X.env(), cwd=self.dir)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(os.listdir(self.dir), ["screenshot.png"])
        self.assertEqual(png_size(self.p("screenshot.png")), (1920, 1080))

    def test_overwrites_atomically(self):
        target = self.p("a.png")
        with open(target, "w") as f:
            f.write("old")
        shot(target, "--region", "0,0,10,10")
        self.assertEqual(png_size(target), (10, 10))
        self.assertEqual(os.listdir(self.dir), ["a.png"])

    def test_closed_pipe_is_an_error_not_a_signal(self):
        rfd, wfd = os.pipe()
        os.close(rfd)
        p = subprocess.run([h.binary(), "screenshot", "-o", "-"], env=X.env(),
                           stdout=wfd, stderr=subprocess.PIPE, timeout=60)
        os.close(wfd)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"Broken pipe", p.stderr)

    def test_bad_arguments_are_usage_errors(self):
        cases = [
            ["--region", "1,2,3"],
            ["--region", "1,2,3,4,5"],
            ["--region", "a,b,c,d"],
            ["--region", "1,2,3,4,"],
            ["--region", ""],
            ["--region", "0x10,0,5,5"],
            ["--region", "0,0,0,10"],
            ["--region", "0,0,10,0"],
            ["--region", "1911,0,10,10"],
            ["--region", "0,1071,10,10"],
            ["--region", "-1,0,10,10"],
            ["--region", "0,0,99999999999,1"],
            ["--monitor", "1"],
            ["--monitor", "x"],
            ["--monitor", "-1"],
            ["--monitor", "0", "--region", "0,0,1,1"],
            ["--bogus"],
            ["extra"],
            ["-o"],
            ["--region"],
            ["--monitor"],
            ["-o", ""],
        ]
        for args in cases:
            r = h.run([h.binary(), "screenshot"] + args, env=X.env(),
                      cwd=self.dir)
            self.assertEqual(r.returncode, 2, "%s: %s" % (args, r.stderr))
            err = r.stderr.decode()
            self.assertIn("usage: deskhand screenshot", err, args)
            self.assertTrue(err.startswith("deskhand: "), err)
            self.assertEqual(os.listdir(self.dir), [], args)

    def test_off_screen_message_names_the_screen(self):
        r = h.run([h.binary(), "screenshot", "--region", "1900,0,100,10"],
                  env=X.env(), cwd=self.dir)
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"not inside the screen (1920x1080)", r.stderr)

    def test_missing_directory(self):
        target = self.p("no/such/dir/a.png")
        r = h.run([h.binary(), "screenshot", "-o", target], env=X.env())
        self.assertEqual(r.returncode, 1)
        self.assertIn(("cannot write PNG to %s" % target).encode(), r.stderr)
        self.assertIn(b"No such file or directory", r.stderr)

    def test_unwritable_directory_leaves_nothing(self):
        if os.geteuid() != 0 or shutil.which("setpriv") is None:
            self.skipTest("needs root and setpriv to drop to an unprivileged uid")
        locked = self.p("locked")
        os.mkdir(locked, 0o555)
        os.chmod(self.dir, 0o755)
        target = os.path.join(locked, "a.png")
        r = h.run(["setpriv", "--reuid=65534", "--regid=65534",
                   "--clear-groups", h.binary(), "screenshot", "-o", target],
                  env=X.env())
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"Permission denied", r.stderr)
        self.assertIn(("cannot write PNG to %s" % target).encode(), r.stderr)
        self.assertEqual(os.listdir(locked), [])

    def test_write_error_keeps_the_old_file(self):
        # A file size limit makes the write fail half-way (EFBIG; SIGXFSZ is
        # ignored so that the error is reported rather than fatal).
        target = self.p("a.png")
        with open(target, "wb") as f:
            f.write(b"previous content")

        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (20000, 20000))

        r = subprocess.run([h.binary(), "screenshot", "-o", target],
                           env=X.env(), preexec_fn=limit, timeout=60,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.assertEqual(r.returncode, 1, r.stderr)
        self.assertIn(b"File too large", r.stderr)
        with open(target, "rb") as f:
            self.assertEqual(f.read(), b"previous content")
        self.assertEqual(os.listdir(self.dir), ["a.png"])

    def test_refuses_a_terminal(self):
        if not hasattr(os, "openpty"):
            self.skipTest("no pty")
        master, slave = os.openpty()
        try:
            p = subprocess.run([h.binary(), "screenshot", "-o", "-"],
                               env=X.env(), stdout=slave,
                               stderr=subprocess.PIPE, timeout=60)
        finally:
            os.close(slave)
            os.close(master)
        self.assertEqual(p.returncode, 2)
        self.assertIn(b"terminal", p.stderr)

    def test_no_display(self):
        env = X.env()
        del env["DISPLAY"]
        r = h.run([h.binary(), "screenshot", "-o", self.p("a.png")], env=env)
        self.assertEqual(r.returncode, 1)
        self.assertIn(b"no display", r.stderr)
        self.assertEqual(os.listdir(self.dir), [])


HOLDER = """
import ctypes
libc = ctypes.CDLL(None, use_errno=True)
# IPC_CREAT | 0600: a 16 MB segment, id 0 of the new namespace
libc.shmget.restype = ctypes.c_int
sid = libc.shmget(0, 16 << 20, 0o1600)
assert sid >= 0, ctypes.get_errno()
"""


class ForeignIpcNamespace(unittest.TestCase):
    """The X server and deskhand in different IPC namespaces (a container
    without --ipc=host), where deskhand's segment id names *another*
    segment in the server's namespace: the attach succeeds but the pixels
    land elsewhere. deskhand must notice and fall back, pixel-exact."""

    def test_segment_id_collision_is_detected(self):
        if os.geteuid() != 0 or shutil.which("unshare") is None:
            self.skipTest("needs root and unshare")
        rfd, wfd = os.pipe()
        script = ('python3 -c "$HOLDER" && exec Xvfb -displayfd %d -screen 0 '
                  "640x480x24 -nolisten tcp -noreset" % wfd)
        xp = h.Proc(["unshare", "--ipc", "sh", "-c", script], pass_fds=(wfd,),
                    env=dict(os.environ, HOLDER=HOLDER))
        os.close(wfd)
        d = h.tmpdir()
        try:
            data = b""
            with os.fdopen(rfd, "rb") as f:
                data = f.readline()
            self.assertTrue(data.strip(), "Xvfb did not start")
            env = dict(os.environ, DISPLAY=":" + data.decode().strip())
            env.pop("XAUTHORITY", None)
            subprocess.run(["xsetroot", "-solid", "#336699"], env=env,
                           check=True, timeout=30)
            out = os.path.join(d, "a.png")
            r = h.run(["unshare", "--ipc", h.binary(), "screenshot", "-o",
                       out], env=env)
            self.assertEqual(r.returncode, 0, r.stderr)
            raw = h.run([helper("capture-png"), "dump", out]).stdout
            self.assertEqual(len(raw), 640 * 480 * 3)
            self.assertEqual(raw, bytes([0x33, 0x66, 0x99]) * (640 * 480))
        finally:
            xp.stop()
            shutil.rmtree(d, ignore_errors=True)


class Monitors(unittest.TestCase):
    """Two virtual monitors side by side, made with xrandr --setmonitor."""

    @classmethod
    def setUpClass(cls):
        cls.x = h.Xvfb(1920, 1080)
        cls.dir = h.tmpdir()
        desktop.wallpaper(cls.x, os.path.join(cls.dir, "wall.png"), seed=3)
        for name, geo in (("left", "960/254x1080/286+0+0"),
                          ("right", "960/254x1080/286+960+0")):
            subprocess.run(["xrandr", "--setmonitor", name, geo, "none"],
                           env=cls.x.env(), check=True, timeout=30,
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)

    @classmethod
    def tearDownClass(cls):
        cls.x.stop()
        shutil.rmtree(cls.dir, ignore_errors=True)

    def test_screen_lists_both(self):
        r = h.run([h.binary(), "screen"], env=self.x.env())
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.decode().splitlines()
        self.assertEqual(lines[1], "monitor 0: 960x1080+0+0")
        self.assertEqual(lines[2], "monitor 1: 960x1080+960+0")

    def test_monitor_capture_is_its_half(self):
        ref = reference(os.path.join(self.dir, "ref.png"), x=self.x)
        for n, region in ((1, (960, 0, 960, 1080)), (0, (0, 0, 960, 1080))):
            out = os.path.join(self.dir, "m%d.png" % n)
            shot(out, "--monitor", str(n), x=self.x)
            self.assertEqual(png_size(out), (960, 1080))
            ok, msg = same(out, ref, region)
            self.assertTrue(ok, msg)

    def test_unknown_monitor(self):
        r = h.run([h.binary(), "screenshot", "--monitor", "7", "-o",
                   os.path.join(self.dir, "x.png")], env=self.x.env())
        self.assertEqual(r.returncode, 2)
        self.assertIn(b"no monitor 7", r.stderr)


def read_xwd(path):
    """Decodes an XWD dump of a TrueColor screen into (w, h, rows of raw
    pixel values, masks)."""
    with open(path, "rb") as f:
        data = f.read()
    hdr = struct.unpack(">25I", data[:100])
    (header_size, _version, _fmt, _depth, w, hgt, _xoff, byte_order, _unit,
     _bit_order, _pad, bpp, bpl, _vclass, rmask, gmask, bmask, _bits,
     _centries, ncolors) = hdr[:20]
    off = header_size + ncolors * 12
    order = ">" if byte_order == 1 else "<"
    code = {16: "H", 32: "I"}[bpp]
    step = bpp // 8
    rows = []
    for y in range(hgt):
        start = off + y * bpl
        rows.append(struct.unpack(order + code * w,
                                  data[start:start + w * step]))
    return w, hgt, rows, (rmask, gmask, bmask)


def scale(v, mask):
    shift = (mask & -mask).bit_length() - 1
    bits = bin(mask).count("1")
    c = (v & mask) >> shift
    if bits >= 8:
        return c >> (bits - 8)
    top = (1 << bits) - 1
    return (c * 255 + top // 2) // top


class Depths(unittest.TestCase):
    """Other server depths: 16 and 15 must give the server's colours, each
    channel scaled to 0..255; 8 (colormapped) must fail clearly."""

    def check_depth(self, depth):
        x = h.Xvfb(320, 200, depth=depth)
        d = h.tmpdir()
        procs = []
        try:
            subprocess.run(["xsetroot", "-solid", "#8040c0"], env=x.env(),
                           check=True, timeout=30)
            procs = desktop.xterms(x, count=1, cols=30, rows=8)
            desktop.wait_still(x, lambda p: shot(p, x=x), procs)
            out = os.path.join(d, "a.png")
            shot(out, x=x)
            shot(os.path.join(d, "b.png"), x=x,
                 env=x.env(DESKHAND_NO_SHM="1"))
            ok, msg = same(out, os.path.join(d, "b.png"))
            self.assertTrue(ok, msg)
            xwd = os.path.join(d, "root.xwd")
            subprocess.run(["xwd", "-root", "-silent", "-out", xwd],
                           env=x.env(), check=True, timeout=30)
            w, hgt, rows, masks = read_xwd(xwd)
            raw = h.run([helper("capture-png"), "dump", out]).stdout
            self.assertEqual(len(raw), w * hgt * 3)
            bad = 0
            colours = set()
            for y in range(hgt):
                for xx in range(w):
                    v = rows[y][xx]
                    want = bytes(scale(v, m) for m in masks)
                    i = (y * w + xx) * 3
                    colours.add(want)
                    if raw[i:i + 3] != want:
                        bad += 1
            self.assertEqual(bad, 0)
            self.assertGreater(len(colours), 2)   # background, text, more
        finally:
            for p in procs:
                p.stop()
            x.stop()
            shutil.rmtree(d, ignore_errors=True)

    def test_depth_16(self):
        self.check_depth(16)

    def test_depth_15(self):
        self.check_depth(15)

    def test_depth_8_fails_clearly(self):
        x = h.Xvfb(320, 200, depth=8)
        d = h.tmpdir()
        try:
            for env in (x.env(), x.env(DESKHAND_NO_SHM="1")):
                r = h.run([h.binary(), "screenshot", "-o",
                           os.path.join(d, "a.png")], env=env)
                self.assertEqual(r.returncode, 1)
                self.assertIn(b"cannot capture a PseudoColor screen of depth 8",
                              r.stderr)
                self.assertEqual(os.listdir(d), [])
        finally:
            x.stop()
            shutil.rmtree(d, ignore_errors=True)


if __name__ == "__main__":
    h.main()
