"""Shared pieces of the tests that drive X input (os/'s own and the agent's
end to end): the recording client (tests/xrecord) and its event lines, the
keyboard state, the keymap, and an xterm running `cat > file` that is the
truth for typed text."""
import os
import signal
import socket
import subprocess
import time

import harness as h


def default_signals():
    """preexec_fn for a deskhand the test will signal: the dispositions a
    terminal gives (a run started in the background or under nohup would
    hand it SIGINT or SIGHUP ignored, which deskhand keeps ignoring)."""
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)


def deskhand(X, *args, input=None, timeout=60, env=None):
    return h.run([h.binary()] + [str(a) for a in args], env=X.env(**(env or {})),
                 input=input, timeout=timeout)


def parse(line):
    """'press button=1 x=2' -> {'kind': 'press', 'button': '1', 'x': '2'}"""
    parts = line.split()
    ev = {"kind": parts[0]}
    for kv in parts[1:]:
        k, _, v = kv.partition("=")
        ev[k] = v
    return ev


class Recorder:
    """tests/xrecord on X, full screen, focused; events from `since` on.
    `args`: more of xrecord's (e.g. ["--noise", "192"])."""

    def __init__(self, X, args=()):
        self.X = X
        self.dir = h.tmpdir()
        self.path = os.path.join(self.dir, "events")
        self.out = open(self.path, "w")
        self.proc = h.Proc([h.binary("xrecord")] + list(args), env=X.env(), stdout=self.out)
        if not h.wait_for(lambda: "ready" in self.text(), 30):
            self.stop()
            raise RuntimeError("xrecord did not become ready")
        self.mark = len(self.lines())

    def text(self):
        with open(self.path) as f:
            return f.read()

    def lines(self):
        # Only complete lines: the client may be writing the last one.
        t = self.text()
        return t[: t.rfind("\n") + 1].splitlines()

    def new_events(self):
        """Events since the last call to reset(), mapping lines left out."""
        return [parse(l) for l in self.lines()[self.mark:]
                if not l.startswith("mapping")]

    def reset(self):
        self.mark = len(self.lines())

    def wait_events(self, pred, timeout=30):
        """Waits until pred(new_events()) holds; returns the events."""
        h.wait_for(lambda: pred(self.new_events()), timeout)
        return self.new_events()

    def wait_count(self, n, kinds=None, timeout=30):
        def count(evs):
            return len([e for e in evs if kinds is None or e["kind"] in kinds])
        return self.wait_events(lambda evs: count(evs) >= n, timeout)

    def stop(self):
        self.proc.stop()
        self.out.close()


def key_state(X):
    """(pressed keycodes, modifier mask, locked mask, button mask)."""
    r = h.run([h.binary("xrecord"), "--state"], env=X.env())
    assert r.returncode == 0, r.stderr
    lines = r.stdout.decode().splitlines()
    keys = lines[0].split(" ", 1)[1].strip()
    st = parse(lines[1])
    return ([int(k) for k in keys.split(",")] if keys else [],
            int(st["mods"], 16), int(st["locked"], 16), int(st["buttons"], 16))


def keymap(X):
    r = h.run(["xmodmap", "-pke"], env=X.env())
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


def xkb_keymap(X):
    """The server's whole XKB keymap (types, actions, symbols) as text."""
    r = h.run(["xkbcomp", "-xkb", X.display, "-"], env=X.env())
    assert r.returncode == 0, r.stderr
    return r.stdout.decode()


def marker(rec, X, n):
    """Moves the pointer to a spot unique to n and waits for its motion
    event: everything recorded before it came from earlier commands."""
    x, y = 7 + n % 500, 11 + n % 300
    r = deskhand(X, "move", x, y)
    assert r.returncode == 0, r.stderr
    evs = rec.wait_events(lambda evs: any(
        e["kind"] == "motion" and e["x"] == str(x) and e["y"] == str(y)
        for e in evs))
    return evs


class Xterm:
    """xterm -u8 running `cat > file`, given the input focus."""

    def __init__(self, X, title="target", display=None):
        self.X = X
        self.dir = h.tmpdir()
        self.file = os.path.join(self.dir, "typed")
        env = X.env(LANG="C.UTF-8", LC_ALL="C.UTF-8")
        if display is not None:
            env["DISPLAY"] = display    # e.g. through a relay
        self.proc = h.Proc(["xterm", "-u8", "-T", title, "-geometry",
                            "120x40+0+0", "-e", "sh", "-c", 'exec cat > "$0"',
                            self.file], env=env)
        r = h.run([h.binary("xrecord"), "--focus", title], env=X.env(),
                  timeout=60)
        if r.returncode != 0:
            self.proc.stop()
            raise RuntimeError("xterm did not map: %r" % r.stderr)
        # The shell has opened the file: cat is about to read.
        h.wait_for(lambda: os.path.exists(self.file), 30)

    def finish(self):
        """Ends cat with ctrl+d typed through deskhand; returns the bytes."""
        r = deskhand(self.X, "key", "ctrl+d")
        assert r.returncode == 0, r.stderr
        try:
            self.proc.p.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.stop()
            raise
        with open(self.file, "rb") as f:
            return f.read()

    def stop(self):
        self.proc.stop()


class Relay:
    """socat relaying X connections to X's socket, as ssh -X or a proxy
    would. kind "unix": it listens on an abstract X-like socket (display
    :N), so the client behind it is a process on this machine that deskhand
    can watch. kind "tcp": it listens on TCP port 6000+N (display
    127.0.0.1:N), a far side deskhand cannot see, like ssh -X's; typing
    then relies on its guard time."""

    def __init__(self, X, kind="unix"):
        # An unused display number: a server starting meanwhile skips a
        # number whose socket is taken.
        # An abstract socket leaves no file behind: try its name as well.
        n = next(k for k in range(900 + os.getpid() % 50, 1000)
                 if not os.path.exists("/tmp/.X%d-lock" % k)
                 and not os.path.exists("/tmp/.X11-unix/X%d" % k)
                 and _abstract_free("/tmp/.X11-unix/X%d" % k)
                 and _port_free(6000 + k))
        if kind == "unix":
            listen = "ABSTRACT-LISTEN:/tmp/.X11-unix/X%d,fork" % n
            self.display = ":%d" % n
        else:
            # nodelay as ssh sets it for X11 channels: with Nagle's
            # algorithm socat holds events back by tens of milliseconds.
            listen = "TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork,nodelay" % (6000 + n)
            self.display = "127.0.0.1:%d" % n
        self.proc = h.Proc(["socat", listen, "UNIX-CONNECT:" + X.socket])
        env = X.env(DISPLAY=self.display)
        if not h.wait_for(lambda: h.run(["xdpyinfo"], env=env).returncode == 0, 30):
            self.proc.stop()
            raise RuntimeError("the %s relay did not come up" % kind)

    def stop(self):
        self.proc.stop()


def _abstract_free(name):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        s.bind("\0" + name)
        return True
    except OSError:
        return False
    finally:
        s.close()


def _port_free(port):
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        s.bind(("127.0.0.1", port))
        return True
    except OSError:
        return False
    finally:
        s.close()
