"""
A private headless GNOME compositor for the tests, as wayland.Sway is for
wlroots: `mutter --headless --wayland --no-x11`, with `monitors` virtual
monitors of `size`, inside a session of its own — a private session bus
(dbus-daemon listening in the runtime directory), pipewire and wireplumber
(Mutter's ScreenCast records into PipeWire streams) — all run as the
compositor's uid (65534 under root, as sway) and stopped by pid, in
reverse order, when the `with` block ends.

    with mutter.Mutter(monitors=2) as m:
        rec = wayland.Recorder(m, checker=8)
        hand = mutter.MutterHand(m)
        hand.move(100, 200)

.env carries XDG_RUNTIME_DIR, WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS,
XDG_SESSION_TYPE=wayland and XDG_CURRENT_DESKTOP=GNOME; .monitors lists
each virtual monitor as dict(name, x, y, width, height) as Mutter laid
them out (org.gnome.Mutter.DisplayConfig, read through gdbus).

MutterHand is a human's hand for the kill-switch tests: a RemoteDesktop
session of its own (tests/lib/mutterhand.py, run as the compositor's uid
on its bus) whose pointer moves and buttons are the user's, not
deskhand's. A missing mutter (or pipewire, wireplumber, dbus-daemon) is
a unittest.SkipTest.
"""
import os
import re
import select
import subprocess
import sys
import time
import unittest

import harness as h
import wayland


class Mutter(wayland.Compositor):
    """Headless Mutter 43+ with `monitors` virtual monitors of `size`.
    Ready when the Wayland socket answers and the bus has Mutter's
    RemoteDesktop, ScreenCast and DisplayConfig names."""

    name = "mutter"
    NAMES = ("org.gnome.Mutter.RemoteDesktop", "org.gnome.Mutter.ScreenCast",
             "org.gnome.Mutter.DisplayConfig")

    def __init__(self, monitors=1, size=(1280, 800), timeout=30):
        for prog in ("mutter", "pipewire", "wireplumber", "dbus-daemon", "gdbus"):
            wayland._require(prog)
        super().__init__()
        self.size = tuple(size)
        self._services = []      # bus, pipewire, wireplumber: stopped last
        try:
            self._start_bus()
            self._service(["pipewire"], "pipewire",
                          lambda: wayland._socket_answers(
                              os.path.join(self.runtime_dir, "pipewire-0")), timeout)
            # wireplumber links the streams' nodes: without it a client's
            # stream never gets a format from Mutter's.
            self._service(["wireplumber"], "wireplumber", None, timeout)
            argv = ["mutter", "--headless", "--wayland", "--no-x11"]
            for _ in range(monitors):
                argv += ["--virtual-monitor", "%dx%d" % self.size]
            self._start(argv, {})
        except BaseException:
            self.stop()
            raise
        self._wait(self._ready, timeout)
        self.display = os.path.basename(self.wayland_sockets()[0])
        self.socket = os.path.join(self.runtime_dir, self.display)
        self.env["WAYLAND_DISPLAY"] = self.display
        self.monitors = self._read_monitors()
        self.outputs = self.monitors      # what wayland.VirtualInput reads

    # ---- the session around it --------------------------------------------

    def _start_bus(self):
        self.bus_path = os.path.join(self.runtime_dir, "bus")
        address = "unix:path=" + self.bus_path
        log = open(os.path.join(self.home, "dbus.log"), "wb")
        p = h.Proc(self.prefix() + ["dbus-daemon", "--session", "--nofork", "--nopidfile",
                                    "--address=" + address],
                   env=self.environ(), cwd=self.home, stdout=log, stderr=subprocess.STDOUT)
        self._services.append((p, log))
        if not h.wait_for(lambda: wayland._socket_answers(self.bus_path), 10):
            raise RuntimeError("dbus-daemon did not listen on %s" % self.bus_path)
        self.env["DBUS_SESSION_BUS_ADDRESS"] = address
        self.env["XDG_SESSION_TYPE"] = "wayland"
        self.env["XDG_CURRENT_DESKTOP"] = "GNOME"

    def _service(self, argv, name, ready, timeout):
        log = open(os.path.join(self.home, name + ".log"), "wb")
        p = h.Proc(self.prefix() + argv, env=self.environ(), cwd=self.home, stdout=log,
                   stderr=subprocess.STDOUT)
        self._services.append((p, log))
        if ready is not None and not h.wait_for(ready, timeout):
            raise RuntimeError("%s not ready after %d s" % (name, timeout))

    def bus_names(self):
        r = self.gdbus("call", "-d", "org.freedesktop.DBus", "-o", "/org/freedesktop/DBus",
                       "-m", "org.freedesktop.DBus.ListNames", check=False)
        return set(re.findall(r"'([^']+)'", r)) if r else set()

    def _ready(self):
        socks = self.wayland_sockets()
        if not socks or not wayland._socket_answers(socks[0]):
            return False
        return all(n in self.bus_names() for n in self.NAMES)

    def gdbus(self, *args, check=True):
        """gdbus ARGS on the private session bus (-e added); stdout as text."""
        r = self.run_as(["gdbus", args[0], "-e"] + list(args[1:]), timeout=30)
        if check and r.returncode != 0:
            raise AssertionError("gdbus %s: %s" % (" ".join(args), r.stderr.decode()))
        return r.stdout.decode() if r.returncode == 0 else ""

    def _read_monitors(self):
        """Each logical monitor as Mutter placed it (its connector's name)."""
        state = self.gdbus("call", "-d", "org.gnome.Mutter.DisplayConfig", "-o",
                           "/org/gnome/Mutter/DisplayConfig", "-m",
                           "org.gnome.Mutter.DisplayConfig.GetCurrentState")
        mons = []
        # logical monitors: (x, y, scale, transform, primary, [(connector, ...)], {})
        for x, y, conn in re.findall(r"\((-?\d+), (-?\d+), [\d.]+, (?:uint32 )?\d+, "
                                     r"(?:true|false), \[\('([^']+)'", state):
            mons.append(dict(name=conn, x=int(x), y=int(y), width=self.size[0],
                             height=self.size[1]))
        mons.sort(key=lambda m: (m["x"], m["y"]))
        return mons

    def pid_of(self, name):
        """The pid of the process owning bus name `name`."""
        r = self.gdbus("call", "-d", "org.freedesktop.DBus", "-o", "/org/freedesktop/DBus",
                       "-m", "org.freedesktop.DBus.GetConnectionUnixProcessID", name)
        return int(re.search(r"(\d+)", r).group(1))

    def stop(self):
        super().stop()
        for p, log in reversed(getattr(self, "_services", [])):
            p.stop(timeout=10)
            log.close()
        self._services = []


class MutterHand:
    """A second RemoteDesktop session on Mutter (tests/lib/mutterhand.py
    run as the compositor's uid): the user's hand on the pointer, whose
    moves deskhand must observe, never send. Absolute moves are in the
    coordinates of the stream of `monitor` (its index in Mutter.monitors);
    each call returns once Mutter answered the D-Bus call."""

    def __init__(self, comp, monitor=0, timeout=30):
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "mutterhand.py")
        conn = comp.monitors[monitor]["name"]
        self.proc = comp.spawn([sys.executable, script, conn], stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=None)
        self.timeout = timeout
        line = self._readline()
        if not line.startswith("ready "):
            self.stop()
            raise RuntimeError("mutterhand did not start: %r" % line)
        # Its stream's PipeWire node (cursor hidden): an oracle's source.
        self.node = int(line.split()[1])

    def _readline(self):
        out = self.proc.p.stdout
        if not select.select([out], [], [], self.timeout)[0]:
            raise RuntimeError("mutterhand did not answer in %d s" % self.timeout)
        return out.readline().decode().strip()

    def send(self, cmd):
        self.proc.p.stdin.write((cmd + "\n").encode())
        self.proc.p.stdin.flush()
        answer = self._readline()
        if answer != "ok":
            raise RuntimeError("mutterhand %r: %r" % (cmd, answer))

    def move(self, x, y):
        self.send("move %s %s" % (x, y))

    def button(self, code=272, down=True):
        self.send("button %d %d" % (code, 1 if down else 0))

    def click(self, code=272):
        self.button(code, True)
        self.button(code, False)

    def stop(self):
        try:
            self.proc.p.stdin.close()
        except OSError:
            pass
        self.proc.stop()
