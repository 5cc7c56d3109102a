#!/usr/bin/env python3
"""
The console's costs (issue 14), as figures, not verdicts:
- frame latency: the screen changes (the root window's colour, on a private
  1280x800 Xvfb) -> the new frame is loaded in Chromium (img onload), median
  and worst of N changes, over loopback;
- the agent's OS step (as bench/agent_step.py: mouse moves under
  --os-auto-approve against an instant fake model) without a console, and
  with --console and one Chromium page watching it;
- the same step with hostile clients at the console (200 connections at
  once, slowloris, streams that never read);
- the console's memory with 10 observers reading the stream while the
  screen changes (deskhand's resident memory before and after).

    bench/console.py [CHANGES] [STEPS]     (default 20 40)
"""
import os
import re
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
for d in ("tests/lib", "tests/fake_llm", "tests/console"):
    sys.path.insert(0, os.path.join(TOP, d))
os.environ.setdefault("DESKHAND_BUILD", os.path.join(TOP, "build"))

import harness as h  # noqa: E402
import consolelib as cl  # noqa: E402
from fakellm import FakeLLM  # noqa: E402

ROUNDS = 3
COLOURS = ["#203040", "#405060", "#605040", "#406050", "#504060", "#304050"]


def rss_kb(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def frame_latency(X, B, changes):
    with FakeLLM([{"text": "done"}]) as srv:
        a = cl.Agent(srv, X=X, message=None)
        try:
            B.do("open", page="lat", url=a.approver)
            seq = B.wait("lat", "+document.getElementById('screen').dataset.seq || 0")
            lat = []
            for i in range(changes):
                t0 = time.time() * 1000
                subprocess.run(["xsetroot", "-solid", COLOURS[i % len(COLOURS)]], env=X.env(),
                               check=True)
                seq = B.wait("lat", "+document.getElementById('screen').dataset.seq > %d && "
                             "+document.getElementById('screen').dataset.seq" % seq)
                loaded = float(B.eval("lat", "document.getElementById('screen').dataset.loadedAt"))
                lat.append(loaded - t0)
            lat.sort()
            print("frame latency, screen change -> frame loaded in Chromium (1280x800, 10 fps "
                  "cap), %d changes: median %.0f ms, worst %.0f ms (target <= 100)"
                  % (len(lat), lat[len(lat) // 2], lat[-1]))
        finally:
            a.stop()


def agent_step(X, steps, B=None, console=False):
    """Gaps between the fake model's answer and deskhand's next request (ms):
    no console; a console nobody watches (console=True); one Chromium page (B)."""
    turns = [{"tool_calls": [{"name": "computer", "arguments": {
        "action": "mouse_move", "coordinate": [(100 + 7 * i) % 1200, (100 + 5 * i) % 700]}}]}
        for i in range(steps)] + [{"text": "done"}]
    flags = ["--os-auto-approve", "--max-steps", str(steps + 5)]
    with FakeLLM(turns) as srv:
        if B is None:
            r = cl.Run()
            more = ["--console", "0"] if console else []
            p = subprocess.Popen(r.args(srv, "openai", "--os", *flags, *more, "-m", "move around"),
                                 env=r.env(X), stdin=subprocess.DEVNULL,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            p.wait(600)
        else:
            a = cl.Agent(srv, X=X, flags=flags, message=None)
            page = "step%d" % time.monotonic_ns()
            B.do("open", page=page, url=a.approver)
            B.wait(page, "+document.getElementById('screen').dataset.seq || 0")
            a.say("move around")
            a.close_stdin()
            a.wait(600)
        times = [q["time"] for q in srv.requests]
        answered = list(srv.answered)
    return [(b - a_) * 1000 for a_, b in zip(answered, times[1:])]


class Hostile:
    """The console's hostile clients while the agent works: 200 connections
    opened at once (most refused past the limit), 20 slowloris requests
    each trickling a header byte every 2 s, and 5 event streams, logged in
    as observers, that never read."""

    def __init__(self, a):
        import threading
        self.socks, self.stop = [], threading.Event()
        cookie, _ = cl.login(a, approver=False)
        for _ in range(5):
            self.socks.append(cl.stalled_stream(a, cookie))
        for _ in range(200):
            try:
                self.socks.append(socket.create_connection(("127.0.0.1", a.port), timeout=2))
            except OSError:
                pass
        self.slow = []
        for _ in range(20):
            try:
                s = socket.create_connection(("127.0.0.1", a.port), timeout=2)
                s.sendall(b"GET / HTTP/1.1\r\nHost: x")
                self.slow.append(s)
            except OSError:
                pass
        self.t = threading.Thread(target=self._trickle, daemon=True)
        self.t.start()

    def _trickle(self):
        while not self.stop.wait(2):
            for s in self.slow:
                try:
                    s.send(b"x")
                except OSError:
                    pass

    def close(self):
        self.stop.set()
        self.t.join()
        for s in self.socks + self.slow:
            s.close()


def hostile_step(X, steps):
    """agent_step's gaps with --console and Hostile clients at it."""
    turns = [{"tool_calls": [{"name": "computer", "arguments": {
        "action": "mouse_move", "coordinate": [(100 + 7 * i) % 1200, (100 + 5 * i) % 700]}}]}
        for i in range(steps)] + [{"text": "done"}]
    flags = ["--os-auto-approve", "--max-steps", str(steps + 5)]
    with FakeLLM(turns) as srv:
        a = cl.Agent(srv, X=X, flags=flags, message=None)
        bad = Hostile(a)
        try:
            a.say("move around")
            a.close_stdin()
            a.wait(600)
        finally:
            bad.close()
            a.stop()
        times = [q["time"] for q in srv.requests]
        answered = list(srv.answered)
    return [(b - a_) * 1000 for a_, b in zip(answered, times[1:])]


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def observers(X, changes):
    with FakeLLM([{"text": "done"}]) as srv:
        a = cl.Agent(srv, X=X, message=None)
        socks = []
        try:
            cookie, _ = cl.login(a, approver=False)
            streams = [cl.Events(a, cookie) for _ in range(10)]
            h.wait_for(lambda: all(s.frames for s in streams), 30)
            before = rss_kb(a.proc.pid)
            peak = before
            for i in range(changes):
                subprocess.run(["xsetroot", "-solid", COLOURS[i % len(COLOURS)]], env=X.env())
                n = i + 2
                h.wait_for(lambda: all(len(s.frames) >= n for s in streams), 10)
                for s in streams:  # each observer fetches the frame, as a page does
                    cl.request(a.port, "GET", "/frame.png", {"Cookie": cookie})
                peak = max(peak, rss_kb(a.proc.pid))
            print("memory with 10 observers (streams + frame fetches, %d screen changes): "
                  "deskhand RSS %.1f MB before, %.1f MB peak (+%.1f MB)"
                  % (changes, before / 1024, peak / 1024, (peak - before) / 1024))
            for s in streams:
                s.close()
        finally:
            for s in socks:
                s.close()
            a.stop()


def main():
    changes = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    steps = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    why = cl.browser_missing()
    if why:
        print("console bench skipped:", why)
        return 0
    X = h.Xvfb(1280, 800)
    B = cl.Browser()
    try:
        frame_latency(X, B, changes)
        # Interleaved rounds: the machine's other load falls on both alike.
        plain, idle, watched, hostile = [], [], [], []
        for _ in range(ROUNDS):
            plain += agent_step(X, steps)
            idle += agent_step(X, steps, console=True)
            watched += agent_step(X, steps, B)
            hostile += hostile_step(X, steps)
        p, i, w, b = median(plain), median(idle), median(watched), median(hostile)
        print("agent OS step, median of %d steps in %d interleaved rounds: %.1f ms without a "
              "console; %.1f ms with --console, nobody watching (%+.0f %%); %.1f ms with one "
              "Chromium page watching on the same machine (%+.0f %%); target within 10 %%"
              % (len(plain), ROUNDS, p, i, (i - p) / p * 100, w, (w - p) / p * 100))
        print("agent OS step with hostile console clients (200 connections at once, 20 "
              "slowloris, 5 streams that never read): %.1f ms (%+.0f %% against no console)"
              % (b, (b - p) / p * 100))
        observers(X, changes)
    finally:
        B.stop()
        X.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
