"""
Private Wayland compositors for the tests, as harness.Xvfb is for X:
a headless sway (the wlroots desktop deskhand drives) and a headless
weston 10 (a compositor without the wlroots protocols: "unsupported").

Each runs in a runtime directory of its own (mkdtemp, 0700), so socket
names never collide with another test's or the user's, and is stopped by
pid (with everything started through it) when the `with` block ends.

sway refuses to run as root, so under root the compositor and every client
started through it (`run_as`, `spawn`) run as uid/gid 65534 without
groups; otherwise as the current uid. Files such a client writes must be
in a directory that uid owns: `tmpdir()` makes one.

    with wayland.Sway(outputs=2) as sway:
        rec = sway.spawn([h.binary("wlrecord"), "--output", "HEADLESS-2"], stdout=f)
        sway.swaymsg("seat", "seat0", "cursor", "set", "2000", "10")
        sway.run_as(["grim", "-o", "HEADLESS-1", path])

Only the standard library; a missing compositor is a unittest.SkipTest
with the reason (the caller's setUpClass/setUpModule reports the cases as
skipped), never a failure.
"""
import atexit
import glob
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import unittest
import urllib.parse

import harness as h

NOBODY = 65534
# Every compositor not stopped yet: stopped at exit too, so that a test
# whose setUpClass fails after starting one (tearDownClass then never
# runs) leaves nothing behind.
_live = []


@atexit.register
def _stop_all():
    for c in list(_live):
        c.stop()
# What a client needs to find its programs and speak UTF-8; nothing of the
# caller's session (no DISPLAY, no D-Bus address) leaks into the private one.
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"


def _require(program):
    if shutil.which(program) is None:
        raise unittest.SkipTest("%s is not installed" % program)


def _socket_answers(path):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.connect(path)
        return True
    except OSError:
        return False
    finally:
        s.close()


class Compositor:
    """What sway and weston share: the uid, the runtime directory, the
    environment, running clients as that uid, stopping all by pid."""

    name = "compositor"

    def __init__(self):
        self.uid = NOBODY if os.geteuid() == 0 else os.geteuid()
        self.gid = NOBODY if os.geteuid() == 0 else os.getegid()
        self._procs = []         # harness.Proc, stopped in reverse order
        self._dirs = []
        self.proc = None
        _live.append(self)
        self.runtime_dir = self.tmpdir(prefix="deskhand-wl-runtime-")
        # HOME too: clients (foot, GTK) read and write their settings there,
        # and nobody's is /nonexistent.
        self.home = self.tmpdir(prefix="deskhand-wl-home-")
        self.log_path = os.path.join(self.home, self.name + ".log")
        self.env = {
            "PATH": BASE_PATH, "HOME": self.home, "LANG": "C.UTF-8",
            "LC_ALL": "C.UTF-8", "XDG_RUNTIME_DIR": self.runtime_dir,
        }

    # ---- files the unprivileged uid can use -------------------------------

    def tmpdir(self, prefix="deskhand-wl-"):
        """A fresh 0700 directory owned by the compositor's uid, directly in
        the system's temporary directory (a root-owned 0700 parent would
        keep that uid out). Removed when the compositor stops."""
        d = tempfile.mkdtemp(prefix=prefix)
        if os.geteuid() == 0:
            os.chown(d, self.uid, self.gid)
        os.chmod(d, 0o700)
        self._dirs.append(d)
        return d

    def check_writable(self, path):
        """Raises when the compositor's uid could not create `path` (its
        directory is not that uid's own): a test writing there would wait
        for a file that never comes."""
        d = os.path.dirname(os.path.abspath(path))
        st = os.stat(d)
        if os.geteuid() == 0 and st.st_uid != self.uid and not (st.st_mode & 0o002):
            raise AssertionError("%s is not writable by uid %d (owner %d, mode %o): "
                                 "use Compositor.tmpdir()" % (d, self.uid, st.st_uid,
                                                              st.st_mode & 0o7777))

    # ---- clients ----------------------------------------------------------

    def argv(self, argv):
        """The prefix plus argv as strings, a relative program path made
        absolute (clients start in .home, not in the caller's directory)."""
        argv = [str(a) for a in argv]
        if "/" in argv[0]:
            argv[0] = os.path.abspath(argv[0])
        return self.prefix() + argv

    def prefix(self):
        """The command prefix that runs a program as the compositor's uid."""
        if os.geteuid() != 0:
            return []
        return ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid,
                "--clear-groups"]

    def environ(self, **extra):
        """A copy of .env plus `extra` (a value None removes the name)."""
        e = dict(self.env)
        for k, v in extra.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = str(v)
        return e

    def run_as(self, argv, env=None, timeout=60, input=None, **kw):
        """Runs a client to completion as the compositor's uid with its
        environment (plus `env`); a CompletedProcess with bytes."""
        return h.run(self.argv(argv),
                     env=self.environ(**(env or {})), input=input,
                     timeout=timeout, cwd=kw.pop("cwd", self.home), **kw)

    def spawn(self, argv, env=None, **kw):
        """Starts a client as the compositor's uid (a harness.Proc, stdout
        and stderr to /dev/null unless given); it is stopped, by pid, when
        the compositor stops, or earlier by its own .stop()."""
        p = h.Proc(self.argv(argv),
                   env=self.environ(**(env or {})), cwd=kw.pop("cwd", self.home), **kw)
        self._procs.append(p)
        return p

    # ---- life cycle -------------------------------------------------------

    def _start(self, argv, extra_env):
        _require(argv[0])
        self._log = open(self.log_path, "wb")
        env = self.environ(**extra_env)
        self.proc = h.Proc(self.prefix() + argv, env=env, cwd=self.home,
                           stdout=self._log, stderr=subprocess.STDOUT)

    def _wait(self, ready, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.p.poll() is not None:
                break
            if ready():
                return
            time.sleep(0.05)
        why = "exited with %s" % self.proc.p.returncode if self.proc.p.poll() is not None \
            else "not ready after %d s" % timeout
        log = self.log_tail()
        self.stop()
        raise RuntimeError("%s %s; its log ends:\n%s" % (self.name, why, log))

    def log_tail(self, lines=30):
        try:
            with open(self.log_path, errors="replace") as f:
                return "".join(f.readlines()[-lines:])
        except OSError:
            return "(no log)"

    def wayland_sockets(self):
        return sorted(p for p in glob.glob(os.path.join(self.runtime_dir, "wayland-*"))
                      if not p.endswith(".lock"))

    def stop(self):
        for p in reversed(self._procs):
            p.stop()
        self._procs = []
        if self.proc is not None:
            self.proc.stop(timeout=10)
            self.proc = None
            self._log.close()
        for d in self._dirs:
            shutil.rmtree(d, ignore_errors=True)
        self._dirs = []
        if self in _live:
            _live.remove(self)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()


class Sway(Compositor):
    """A headless sway 1.7 with `outputs` outputs of `size` side by side:
    HEADLESS-1 at 0,0, HEADLESS-2 right of it, and so on (.outputs lists
    each as dict(name, x, y, width, height)). No bar, no borders, no
    XWayland, focus does not follow the mouse. Ready when the Wayland
    socket accepts connections and the IPC reports every output active.

    Input: headless sway has no input devices, so its seat offers no
    keyboard or pointer until a virtual one appears: wtype brings a
    keyboard for as long as it runs, tests/wlpointer a pointer (after
    which `swaymsg seat seat0 cursor ...` moves and clicks too)."""

    name = "sway"

    def __init__(self, outputs=1, size=(1920, 1080), config_extra="", timeout=30):
        super().__init__()
        self.size = tuple(size)
        self.outputs = [dict(name="HEADLESS-%d" % (i + 1), x=i * size[0], y=0,
                             width=size[0], height=size[1]) for i in range(outputs)]
        try:
            self.config = os.path.join(self.home, "config")
            with open(self.config, "w") as f:
                f.write(self._config(config_extra))
            self._start(["sway", "-c", self.config], {
                "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
                "WLR_RENDERER": "pixman", "WLR_HEADLESS_OUTPUTS": str(outputs),
            })
        except BaseException:
            self.stop()
            raise
        self._wait(self._ready, timeout)
        self.display = os.path.basename(self.wayland_sockets()[0])
        self.socket = os.path.join(self.runtime_dir, self.display)
        self.env["WAYLAND_DISPLAY"] = self.display
        self.env["SWAYSOCK"] = self.swaysock

    def _config(self, extra):
        lines = ["# generated by tests/lib/wayland.py",
                 "xwayland disable", "default_border none",
                 "default_floating_border none", "focus_follows_mouse no",
                 "mouse_warping none"]
        for o in self.outputs:
            lines.append("output %s resolution %dx%d position %d %d" % (
                o["name"], o["width"], o["height"], o["x"], o["y"]))
        return "\n".join(lines + [extra, ""])

    def _ready(self):
        socks = self.wayland_sockets()
        ipc = glob.glob(os.path.join(self.runtime_dir, "sway-ipc.*.sock"))
        if not socks or not ipc or not _socket_answers(socks[0]):
            return False
        self.swaysock = ipc[0]
        r = self.run_as(["swaymsg", "-s", self.swaysock, "-r", "-t", "get_outputs"],
                        timeout=10)
        if r.returncode != 0:
            return False
        active = {o["name"] for o in json.loads(r.stdout) if o.get("active")}
        return all(o["name"] in active for o in self.outputs)

    def swaymsg(self, *args, check=True, timeout=30):
        """swaymsg ARGS... through this sway's IPC; stdout as text. With
        check, a failure (exit status, or a command sway refused) raises."""
        r = self.run_as(["swaymsg", "-s", self.swaysock] + [str(a) for a in args],
                        timeout=timeout)
        if check and r.returncode != 0:
            raise AssertionError("swaymsg %s failed (%d): %s %s" % (
                " ".join(map(str, args)), r.returncode, r.stdout.decode(errors="replace"),
                r.stderr.decode(errors="replace")))
        return r.stdout.decode(errors="replace")

    def query(self, kind):
        """swaymsg -t KIND (get_tree, get_outputs, get_seats...), decoded."""
        return json.loads(self.swaymsg("-r", "-t", kind))


class Weston(Compositor):
    """A headless weston 10 (pixman, desktop-shell): a real compositor
    without screencopy, virtual pointer or virtual keyboard, for the
    "unsupported compositor" paths. Its headless backend has no seat, so no
    client ever gets the focus (wlrecord maps but is never "ready"); its
    kiosk-shell fires no frame callbacks there, so the default is the
    desktop shell (whose panel client is not packaged: weston goes on)."""

    name = "weston"

    def __init__(self, size=(1280, 800), socket_name="wayland-7", shell="desktop-shell.so",
                 timeout=30):
        super().__init__()
        self.size = tuple(size)
        self.display = socket_name
        self.socket = os.path.join(self.runtime_dir, socket_name)
        try:
            self._start(["weston", "--backend=headless-backend.so", "--use-pixman",
                         "--no-config", "--idle-time=0", "--shell=" + shell,
                         "--width=%d" % size[0], "--height=%d" % size[1],
                         "--socket=" + socket_name], {})
        except BaseException:
            self.stop()
            raise
        self._wait(lambda: _socket_answers(self.socket), timeout)
        self.env["WAYLAND_DISPLAY"] = socket_name


def parse(line):
    """'press button=272 x=2' -> {'kind': 'press', 'button': '272', 'x': '2'};
    a key's text=... is unquoted (wlrecord writes blanks and '%' as %XX)."""
    parts = line.split()
    ev = {"kind": parts[0]}
    for kv in parts[1:]:
        k, _, v = kv.partition("=")
        ev[k] = urllib.parse.unquote(v) if k == "text" else v
    return ev


MUTTER_MAP_ANIMATION_S = 1.0


class Recorder:
    """tests/wlrecord fullscreen on `output` (None: where the compositor
    puts it), given the focus (with focus: weston's headless seatless
    compositor never gives any), its events as harness-like dicts;
    `square` ("N+X+Y") draws a red target square there; `press_color`
    swaps the fill colour with it at every press. On Mutter it is
    fullscreen on the monitor Mutter picks, and Mutter gives it the
    focus itself. Lines
    before the start (configure, seat, keymap...) are before the mark."""

    def __init__(self, comp, output=None, color=None, checker=None, app_id="wlrecord",
                 focus=None, timeout=30, square=None, press_color=None):
        if focus is None:
            focus = not isinstance(comp, Weston)
        self.comp = comp
        self.app_id = app_id
        self.path = os.path.join(comp.tmpdir(prefix="deskhand-wlrecord-"), "events")
        argv = [h.binary("wlrecord"), "--app-id", app_id]
        for opt, val in (("--output", output), ("--color", color), ("--checker", checker),
                         ("--square", square), ("--press-color", press_color)):
            if val is not None:
                argv += [opt, str(val)]
        self.out = open(self.path, "w")
        self.proc = comp.spawn(argv, stdout=self.out, stderr=subprocess.STDOUT)
        try:
            if not h.wait_for(lambda: self.find("mapped"), timeout):
                raise RuntimeError("wlrecord did not map: %s" % self.text())
            if focus and isinstance(comp, Sway) and not self.find("ready"):
                comp.swaymsg("[app_id=%s]" % app_id, "focus")
            if focus and not h.wait_for(lambda: self.find("ready"), timeout):
                raise RuntimeError("wlrecord was not given the focus: %s" % self.text())
            if comp.name == "mutter":
                # Mutter's default plugin opens a window growing into place
                # about the screen's centre (250 ms by its clock), and says
                # nothing when it is there: a click meanwhile reached the
                # window scaled (500,600 as 489,614, 1 time in 2 under load).
                time.sleep(MUTTER_MAP_ANIMATION_S)
        except BaseException:
            self.stop()
            raise
        self.mark = len(self.lines())

    def text(self):
        with open(self.path, errors="replace") as f:
            return f.read()

    def lines(self):
        # Only complete lines: the client may be writing the last one.
        t = self.text()
        return t[: t.rfind("\n") + 1].splitlines()

    def find(self, kind):
        return [parse(l) for l in self.lines() if l.split(" ", 1)[0] == kind]

    def new_events(self, kinds=None):
        """Events since the mark (ready, or the last reset()); only `kinds`
        when given."""
        evs = [parse(l) for l in self.lines()[self.mark:]]
        return [e for e in evs if kinds is None or e["kind"] in kinds]

    def reset(self):
        self.mark = len(self.lines())

    def wait_events(self, pred, timeout=30):
        """Waits until pred(new_events()) holds; returns the events."""
        h.wait_for(lambda: pred(self.new_events()), timeout)
        return self.new_events()

    def stop(self):
        self.proc.stop()
        self.out.close()


class VirtualInput:
    """tests/wlinput: a virtual pointer and keyboard on a wlroots
    compositor's seat, so that its clients get a wl_pointer and a
    wl_keyboard at all (headless sway has no devices). Each call returns
    once the compositor has handled it. `extent` is the layout's size,
    which absolute moves are in (default: sway's outputs side by side)."""

    def __init__(self, comp, extent=None, keyboard=True, pointer=True, timeout=30):
        if extent is None:
            outs = getattr(comp, "outputs", None) or [dict(x=0, y=0, width=comp.size[0],
                                                           height=comp.size[1])]
            extent = (max(o["x"] + o["width"] for o in outs),
                      max(o["y"] + o["height"] for o in outs))
        argv = [h.binary("wlinput"), "--extent", extent[0], extent[1]]
        argv += [] if keyboard else ["--no-keyboard"]
        argv += [] if pointer else ["--no-pointer"]
        self.proc = comp.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        self.timeout = timeout
        line = self._readline()
        if line != "ready":
            self.stop()
            raise RuntimeError("wlinput did not start: %r" % line)

    def _readline(self):
        # A bounded read: wlinput answers every line, or has died.
        import select
        out = self.proc.p.stdout
        if not select.select([out], [], [], self.timeout)[0]:
            raise RuntimeError("wlinput did not answer in %d s" % self.timeout)
        return out.readline().decode().strip()

    def send(self, cmd):
        self.proc.p.stdin.write((cmd + "\n").encode())
        self.proc.p.stdin.flush()
        answer = self._readline()
        if answer != "ok":
            raise RuntimeError("wlinput %r: %r" % (cmd, answer))

    def move(self, x, y):
        self.send("move %d %d" % (x, y))

    def button(self, code=272, down=True):
        self.send("button %d %s" % (code, "down" if down else "up"))

    def click(self, code=272):
        self.button(code, True)
        self.button(code, False)

    def scroll(self, steps=1, axis="vertical", value=None):
        self.send("scroll %s %d %d" % (axis, 15 * steps if value is None else value, steps))

    def key(self, evdev, down=True):
        self.send("key %d %s" % (evdev, "down" if down else "up"))

    def mods(self, depressed=0, latched=0, locked=0, group=0):
        """The keyboard's modifier state (0x1 Shift, 0x4 Control, 0x8 Mod1):
        a virtual keyboard's keys do not change it by themselves."""
        self.send("mods %x %x %x %x" % (depressed, latched, locked, group))

    def stop(self):
        try:
            self.proc.p.stdin.close()
        except OSError:
            pass
        self.proc.stop()
