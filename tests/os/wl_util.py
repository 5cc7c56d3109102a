"""What the tests of deskhand's commands on a headless sway share: running
deskhand as the compositor's uid, grim's pixels as the truth for captures
(PPM: raw bytes, no decoder between the truth and the test), sway's tree
as the truth for windows, and foot running `cat > FILE` as the truth for
typed text."""
import os
import signal
import subprocess

import harness as h


def deskhand(comp, *args, input=None, timeout=60, env=None):
    """deskhand ARGS as the compositor's uid in its session."""
    return comp.run_as([h.binary()] + [str(a) for a in args], input=input,
                       timeout=timeout, env=env)


def helper(name):
    return os.path.join(h.build_dir(), "tests", "os", name)


def ppm(data):
    """Binary PPM (P6, maxval 255) -> (width, height, RGB bytes)."""
    fields, pos = [], 0
    while len(fields) < 4:
        while data[pos:pos + 1].isspace():
            pos += 1
        if data[pos:pos + 1] == b"#":
            pos = data.index(b"\n", pos)
            continue
        end = pos
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[pos:end])
        pos = end
    assert fields[0] == b"P6" and fields[3] == b"255", fields
    w, hh = int(fields[1]), int(fields[2])
    pix = data[pos + 1:]
    assert len(pix) == w * hh * 3, (len(pix), w, hh)
    return w, hh, pix


def grim(comp, *args):
    """grim's capture (grim ARGS, e.g. -o HEADLESS-2 or -g "X,Y WxH") as
    (width, height, RGB bytes)."""
    r = comp.run_as(["grim", "-t", "ppm"] + list(args) + ["-"], timeout=60)
    assert r.returncode == 0, r.stderr
    return ppm(r.stdout)


def png_pixels(path):
    """A PNG's size and RGB bytes, decoded by libpng (tests/os/capture-png)."""
    r = h.run([helper("capture-png"), "info", path])
    assert r.returncode == 0, r.stderr
    w, hh = map(int, r.stdout.decode().split("x"))
    r = h.run([helper("capture-png"), "dump", path])
    assert r.returncode == 0, r.stderr
    return w, hh, r.stdout


def first_difference(a, b, width):
    """'(x, y): A vs B' at the first pixel where two RGB buffers differ."""
    n = min(len(a), len(b))
    for i in range(0, n, 3):
        if a[i:i + 3] != b[i:i + 3]:
            p = i // 3
            return "(%d, %d): %s vs %s" % (p % width, p // width, tuple(a[i:i + 3]),
                                           tuple(b[i:i + 3]))
    return "lengths %d vs %d" % (len(a), len(b))


def text_box(w, hh, pix, x0, x1):
    """Bounding box (x0, y0, x1, y1) of the pixels in columns [x0, x1) that
    differ from the top-left pixel of that range (the background)."""
    bg = pix[3 * x0:3 * x0 + 3]
    box = None
    for y in range(hh):
        row = pix[3 * (y * w + x0):3 * (y * w + x1)]
        if row == bg * (x1 - x0):
            continue
        xs = [i for i in range(x1 - x0) if row[3 * i:3 * i + 3] != bg]
        a, b = x0 + xs[0], x0 + xs[-1]
        box = [a, y, b, y] if box is None else [min(box[0], a), box[1], max(box[2], b), y]
    return box


# ---- sway's tree -------------------------------------------------------------

def views(tree):
    """The application windows of a get_tree answer, in tree order."""
    out = []

    def walk(n):
        if n.get("pid") and n.get("type") in ("con", "floating_con") and not n.get("nodes"):
            out.append(n)
        for c in n.get("nodes", []) + n.get("floating_nodes", []):
            walk(c)
    walk(tree)
    return out


def view(sway, app_id):
    return next((v for v in views(sway.query("get_tree")) if v.get("app_id") == app_id), None)


def wait_view(sway, app_id, focused=None, timeout=30):
    """Waits until a window of app_id is in the tree (and, with focused,
    has or lacks the focus); returns it."""
    def ok():
        v = view(sway, app_id)
        return v if v is not None and (focused is None or v["focused"] == focused) else None
    v = h.wait_for(ok, timeout, step=0.05)
    if v is None:
        raise AssertionError("no window %s%s in sway's tree: %s" % (
            app_id, "" if focused is None else " (focused=%s)" % focused,
            [(x.get("app_id"), x["focused"]) for x in views(sway.query("get_tree"))]))
    return v


# A foot showing `script`'s output (the cursor hidden, nothing drawn later).
def foot_showing(sway, app_id, shell, font_size=None, title=None):
    argv = ["foot", "--app-id", app_id, "-T", title or app_id]
    if font_size:
        argv += ["-o", "font=monospace:size=%d" % font_size]
    argv += ["sh", "-c", "printf '\\033[?25l'; " + shell + "; exec sleep 600"]
    p = sway.spawn(argv)
    wait_view(sway, app_id)
    return p


# Seeded random text in random colours, filling the window: content with
# detail everywhere, for comparing captures pixel by pixel.
NOISE = r"""import random, sys
r = random.Random(int(sys.argv[1]))
sys.stdout.write("".join("\033[38;5;%dm\033[48;5;%dm%s" % (
    r.randrange(256), r.randrange(256), chr(r.randrange(33, 127)))
    for i in range(int(sys.argv[2]))) + "\033[0m")
"""


def noise_foot(sway, app_id, seed, chars=8000):
    d = sway.tmpdir(prefix="deskhand-wl-noise-")
    path = os.path.join(d, "noise.py")
    with open(path, "w") as f:
        f.write(NOISE)
    os.chmod(path, 0o644)
    return foot_showing(sway, app_id, "python3 %s %d %d" % (path, seed, chars))


def wait_still(sway, args=(), timeout=30):
    """Waits until two grim captures in a row are equal (every client has
    drawn); returns the last."""
    last = [None]

    def still():
        shot = grim(sway, *args)
        same = shot == last[0]
        last[0] = shot
        return same
    if not h.wait_for(still, timeout, step=0.2):
        raise AssertionError("the screen did not settle in %d s" % timeout)
    return last[0]


class FootCat:
    """A freshly started foot running `cat > FILE`: the bytes typed into it
    arrive in FILE once cat is ended with ctrl+d (sent by deskhand)."""

    def __init__(self, sway, app_id="typetarget"):
        self.sway = sway
        self.file = os.path.join(sway.tmpdir(prefix="deskhand-wl-typed-"), "typed")
        self.proc = sway.spawn(["foot", "--app-id", app_id, "sh", "-c",
                                'exec cat > "$0"', self.file])
        # Typed at as soon as sway has it focused: the fresh client case.
        wait_view(sway, app_id, focused=True)

    def finish(self, timeout=30):
        r = deskhand(self.sway, "key", "ctrl+d")
        assert r.returncode == 0, r.stderr
        try:
            self.proc.p.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.stop()
            raise
        with open(self.file, "rb") as f:
            return f.read()

    def stop(self):
        self.proc.stop()


def kill(proc, sig=signal.SIGKILL):
    """Kills one process we started, by its pid."""
    try:
        os.kill(proc.pid, sig)
    except ProcessLookupError:
        pass
