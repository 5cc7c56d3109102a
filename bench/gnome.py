#!/usr/bin/env python3
"""
bench/gnome.py — deskhand on GNOME's Mutter (the gnome backend: its
RemoteDesktop and ScreenCast sessions, frames from PipeWire) beside the
same deskhand on sway and on Xvfb, in one run. On a headless Mutter 43
it starts (tests/lib/mutter.py: 1280x800, one monitor, a private bus,
pipewire, wireplumber; two foot windows full of noisy coloured text), a
sway and an Xvfb of the same size showing the same noise (foot, xterm):

  - `deskhand screenshot -o F` as a whole process on each, N interleaved
    runs, medians; on Mutter split by its trace marks (DESKHAND_TRACE):
    process start, bus, the D-Bus sessions up to PipeWire's nodes, the
    streams, the first frame, encoding, closing — the set-up's share of
    the whole. Beside it `gst-launch-1.0 pipewiresrc` reading one frame of
    a stream that is already running (a MutterHand session's: the tool a
    GNOME user would reach for without gnome-shell's Screenshot service,
    its session's set-up left out, which favours it);
  - from an action to the first frame that shows it: in one connection
    (tests/os/gnome-step, as the agent holds its display) a click on
    wlrecord --press-color, then a capture at once (which waits for the
    frames after the input to pause: 40 ms); beside it an observer, a
    second connection with streams of its own, polling its newest frame
    every 5 ms until the new colour shows: ms from the click's start, the
    frames the agent's stream got, the observer's captures. (pipewiresrc
    was tried as the observer: on Mutter 43 its buffers kept showing the
    picture before the click);
  - the agent's cost per OS step (bench/agent_step.py: pointer moves,
    each followed by settle + screenshot + encode + the next request, an
    instant fake model) on Mutter, sway and Xvfb, and its peak memory;
  - typing bench/typing's short mixed text (56 characters: Latin-1,
    Greek, Cyrillic, CJK, an emoji, a tab) into a fresh GTK 3 text view
    on Mutter: characters Mutter's keymap lacks are pasted through the
    session's clipboard (ctrl+v), so it is slow; beside it an ASCII text
    of the same length (keys only), and the mixed text on sway into foot.
    Per run: ms, and whether it arrived exactly.

Figures, not verdicts: it fails only when a tool cannot run. Every client
runs as the compositor's uid.

    bench/gnome.py [--runs N] [--typing-runs N] [--clicks N] [--steps N]
                                              (build first: ninja -C build)
"""
import argparse
import importlib.util
import os
import queue
import select
import shutil
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, os.path.join(TOP, "tests", "os"))
os.environ.setdefault("DESKHAND_BUILD", os.path.join(TOP, "build"))
os.environ.pop("DESKHAND_BIN", None)

import harness as h  # noqa: E402
import mutter  # noqa: E402
import wayland  # noqa: E402
import wl_util  # noqa: E402
import agent_step  # noqa: E402

# bench/wayland.py's definitions (its name is taken by tests/lib/wayland.py)
_spec = importlib.util.spec_from_file_location("bench_wayland", os.path.join(HERE, "wayland.py"))
bench_wayland = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(bench_wayland)
bench_typing_text, lost_and_added = bench_wayland.bench_typing_text, bench_wayland.lost_and_added

SIZE = (1280, 800)
PY = "/usr/bin/python3"     # python3-gi is the system's
PRESS = "00ff00"            # wlrecord's colour after a press (white before)

# A fullscreen GTK 3 text view (a tab is a character there, not a focus
# move as in an entry) that writes its text to a file at every change.
TEXT_APP = r'''
import os, sys, gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk, GLib
out = sys.argv[1]
w = Gtk.Window(); v = Gtk.TextView(); w.add(v)
b = v.get_buffer()
def changed(_):
    with open(out + ".tmp", "w") as f:
        f.write(b.get_text(b.get_start_iter(), b.get_end_iter(), True))
    os.rename(out + ".tmp", out)
b.connect("changed", changed)
w.connect("destroy", Gtk.main_quit)
w.connect("map-event", lambda *a: GLib.timeout_add(300, lambda: print("ready", flush=True)))
w.fullscreen(); w.show_all()
Gtk.main()
'''


class XDisplay:
    """Xvfb as the compositors are driven: argv/environ/tmpdir."""

    def __init__(self):
        self.x = h.Xvfb(*SIZE)
        self.procs = []

    def argv(self, argv):
        return [str(a) for a in argv]

    def environ(self):
        return self.x.env()

    def tmpdir(self, prefix="deskhand-bench-"):
        return h.tmpdir()

    def stop(self):
        for p in self.procs:
            p.stop()
        self.x.stop()


def traced(comp, argv):
    """Runs argv as the compositor's uid with DESKHAND_TRACE=1:
    (wall ms, {mark: ms since the start}, ms at the exit)."""
    env = dict(comp.environ(), DESKHAND_TRACE="1")
    t0 = time.monotonic()
    r = subprocess.run(comp.argv(argv), env=env, stdout=subprocess.DEVNULL,
                       stderr=subprocess.PIPE, timeout=120)
    t1 = time.monotonic()
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (argv[0], r.stderr.decode(errors="replace")))
    marks = {}
    for line in r.stderr.decode(errors="replace").splitlines():
        w = line.split()
        if len(w) == 3 and w[0] == "deskhand-trace":
            marks.setdefault(w[1], (float(w[2]) - t0) * 1000)
    return (t1 - t0) * 1000, marks


# ---- the busy screens ----------------------------------------------------------------

def noise_script(comp):
    d = comp.tmpdir(prefix="deskhand-bench-noise-")
    path = os.path.join(d, "noise.py")
    with open(path, "w") as f:
        f.write(wl_util.NOISE)
    os.chmod(path, 0o644)
    return path


def noise_foots(comp):
    """Two foots of noisy text, 640x800 each (Mutter places them itself)."""
    path = noise_script(comp)
    procs = []
    for seed in (1, 2):
        procs.append(comp.spawn(["foot", "--app-id", "noise-%d" % seed,
                                 "--window-size-pixels=640x800", "sh", "-c",
                                 "printf '\\033[?25l'; python3 %s %d 16000; exec sleep 600"
                                 % (path, seed)]))
    return procs


def noise_xterms(X):
    path = noise_script(X)
    for seed, x in ((1, 0), (2, 642)):
        X.procs.append(h.Proc(["xterm", "-geometry", "105x60+%d+0" % x, "-e", "sh", "-c",
                               "python3 %s %d 16000; exec sleep 600" % (path, seed)],
                              env=X.x.env()))


def wait_still(comp, timeout=40):
    """Until two deskhand screenshots in a row are the same PNG."""
    d = comp.tmpdir(prefix="deskhand-bench-still-")
    f = os.path.join(d, "s.png")
    last = [None]

    def still():
        r = subprocess.run(comp.argv([h.binary(), "screenshot", "-o", f]),
                           env=comp.environ(), stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, timeout=60)
        if r.returncode != 0:
            return False
        with open(f, "rb") as fh:
            data = fh.read()
        same = data == last[0]
        last[0] = data
        return same
    if not h.wait_for(still, timeout, step=0.3):
        raise RuntimeError("the screen did not settle in %d s" % timeout)


# ---- screenshots --------------------------------------------------------------------

PHASES = {  # (label, from mark, to mark)
    "mutter": [("process start", None, "main"), ("session bus", "main", "bus"),
               ("D-Bus sessions, nodes", "bus", "sessions"),
               ("PipeWire streams", "sessions", "streams"),
               ("first frame", "connected", "frame"), ("encode + write", "frame", "written"),
               ("close + exit", "written", None)],
    "sway": [("process start", None, "main"), ("connect (wlroots)", "main", "connected"),
             ("capture + encode", "connected", "written"), ("close + exit", "written", None)],
    "Xvfb": [("process start", None, "main"), ("connect (X11)", "main", "connected"),
             ("capture + encode", "connected", "written"), ("close + exit", "written", None)],
}
SETUP_END = {"mutter": "frame", "sway": "connected", "Xvfb": "connected"}


def screenshots(displays, hand, runs):
    """displays: name -> comp. Interleaved runs of each tool."""
    m = displays["mutter"]
    tools = {}
    for name, comp in displays.items():
        f = os.path.join(comp.tmpdir(prefix="deskhand-bench-shots-"), "shot.png")
        tools["deskhand on " + name] = (comp, [h.binary(), "screenshot", "-o", f], name)
    gf = os.path.join(m.tmpdir(prefix="deskhand-bench-gst-"), "gst.png")
    tools["gst pipewiresrc (Mutter)"] = (m, [
        "gst-launch-1.0", "-q", "pipewiresrc", "path=%d" % hand.node, "num-buffers=1", "!",
        "videoconvert", "!", "pngenc", "snapshot=true", "!", "filesink", "location=" + gf], None)
    times = {k: [] for k in tools}
    marks = {k: [] for k in tools}
    for _ in range(2):  # warm: page cache, fonts, the compositors' buffers
        for comp, argv, _ in tools.values():
            traced(comp, argv)
    for _ in range(runs):
        for k, (comp, argv, _) in tools.items():
            ms, mk = traced(comp, argv)
            times[k].append(ms)
            marks[k].append((ms, mk))
    base = {name: statistics.median(traced(comp, ["true"])[0] for _ in range(10))
            for name, comp in displays.items()}
    phases = {}
    for k, (comp, argv, name) in tools.items():
        if name is None:
            continue
        rows = []
        for label, a, b in PHASES[name]:
            vals = [(mk[b] if b else ms) - (mk[a] if a else 0) for ms, mk in marks[k]
                    if (a is None or a in mk) and (b is None or b in mk)]
            rows.append((label, statistics.median(vals) if vals else float("nan")))
        setup = statistics.median(mk[SETUP_END[name]] - mk["main"] for ms, mk in marks[k])
        phases[k] = (rows, setup)
    return dict(med={k: statistics.median(v) for k, v in times.items()},
                min={k: min(v) for k, v in times.items()},
                max={k: max(v) for k, v in times.items()}, base=base, phases=phases)


def print_screenshots(s, runs):
    print("screenshot, whole process, 1280x800, %d interleaved runs each; %d CPUs:"
          % (runs, os.cpu_count() or 0))
    print("  %-28s %10s %8s %8s" % ("", "median ms", "min", "max"))
    for k in s["med"]:
        print("  %-28s %10.1f %8.1f %8.1f" % (k, s["med"][k], s["min"][k], s["max"][k]))
    print("  (starting a process through the compositor's uid prefix: %s; included)" %
          ", ".join("%s %.1f ms" % kv for kv in s["base"].items()))
    for k, (rows, setup) in s["phases"].items():
        print("  %s, phases (medians, ms): %s" % (k, "; ".join(
            "%s %.1f" % r for r in rows)))
        print("    set-up (main to %s): %.1f ms, %.0f%% of the whole" % (
            "the first frame" if "mutter" in k else "connected", setup,
            100 * setup / s["med"][k]))
    sys.stdout.flush()


# ---- from an action to the frame that shows it ------------------------------------

class Lines:
    """A process's stdout lines as they come, each with its arrival time
    (time.monotonic), read by a thread: (seconds, words)."""

    def __init__(self, proc):
        self.proc = proc
        self.q = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.p.stdout:
            self.q.put((time.monotonic(), line.decode().split()))
        self.q.put((time.monotonic(), None))

    def next(self, timeout=30):
        try:
            t, words = self.q.get(timeout=timeout)
        except queue.Empty:
            raise RuntimeError("gnome-step did not answer in %d s" % timeout)
        if words is None:
            raise RuntimeError("gnome-step ended early")
        return t, words

    def send(self, line):
        self.proc.p.stdin.write(line.encode() + b"\n")
        self.proc.p.stdin.flush()


def field(words, name):
    return float(next(w for w in words if w.startswith(name + "="))[len(name) + 1:])


def latency(m, clicks):
    """Per click on wlrecord (its fill colour swaps at every press): the
    agent's connection (gnome-step: click, then a capture at once, as the
    agent's step takes one) and an observer (another gnome-step, a
    connection of its own polling its newest frame every 5 ms until the
    new colour shows). (click+capture ms, frames received, capture showed
    it, observer ms, observer captures), each from the click's start."""
    rec = wayland.Recorder(m, checker=8, press_color=PRESS)
    rec.reset()
    step = [wl_util.helper("gnome-step"), "pixel", "1", "0"]
    agent_argv, obs_argv = list(step), list(step)
    # One click more: the session's first wakes its virtual pointer
    # (Mutter adds it to the seat with its first event), shown apart.
    for i in range(clicks + 1):
        agent_argv += ["wait", "click", 600 + i, 400, "pixel", "1", "0"]
        obs_argv += ["wait", "poll", "1", "0"]
    procs = [m.spawn(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE)
             for argv in (agent_argv, obs_argv)]
    agent, obs = (Lines(p) for p in procs)
    out = []
    try:
        for lines in (obs, agent):
            lines.next()                        # open
            first = lines.next()[1]             # the first pixel
        colour, received = first[3], field(first, "received")
        for i in range(clicks + 1):
            want = "ffffff" if colour == PRESS else PRESS
            obs.send(want)
            time.sleep(0.05)                    # the observer polling
            t0 = time.monotonic()
            agent.send("-")
            click = agent.next()[1]
            shot = agent.next()[1]
            t_obs, polled = obs.next()
            rec_now = field(shot, "received")
            out.append((field(click, "ms") + field(shot, "ms"),
                        int(rec_now - received),
                        shot[3] == want, (t_obs - t0) * 1000 if polled[3] == want
                        else float("nan"), int(field(polled, "captures"))))
            # The truth is the number of presses, not what was seen.
            colour, received = want, rec_now
            time.sleep(0.3)                     # nothing changes: no frames
        redrawn = sum(x["kind"] == "redrawn" for x in rec.wait_events(
            lambda e: sum(x["kind"] == "redrawn" for x in e) >= clicks + 1, 5))
    finally:
        for p in procs:
            try:
                p.p.stdin.close()
            except OSError:
                pass
            p.stop()
        rec.stop()
    print("  (wlrecord redrew %d times for %d clicks)" % (redrawn, clicks + 1))
    return out[0], out[1:]


def print_latency(first, lat):
    print("from a click (os_mouse_move + os_mouse_click in one connection) to a frame "
          "showing it, %d clicks after the session's first:" % len(lat))
    for i, (ms, fr, ok, oms, ocap) in [(-1, first)] + list(enumerate(lat)):
        print("  %-8s  agent's capture after it %6.1f ms, %d frames came, %s;  "
              "observer sees it %6.1f ms, at its capture %d"
              % ("first" if i < 0 else "click %d" % (i + 1), ms, fr,
                 "shows it" if ok else "STALE", oms, ocap))
    sys.stdout.flush()


# ---- the agent's step ----------------------------------------------------------------

def agent_steps(displays, steps):
    out = {}
    for name, comp in displays.items():
        if name == "Xvfb":
            out[name] = agent_step.run_agent(comp.x, h.binary(), steps)[:2]
        else:
            out[name] = agent_step.run_agent(
                None, h.binary(), steps, display_env=comp.environ(), prefix=comp.prefix(),
                tmpdir=lambda c=comp: c.tmpdir(prefix="deskhand-bench-agent-"))[:2]
        print("  agent on %-6s median OS step %.1f ms, peak RSS %.1f MB" % (
            name, agent_step.median_ms(out[name][0]), out[name][1] / 1024), flush=True)
    return out


# ---- typing ----------------------------------------------------------------------

def type_gtk(m, text):
    """Types into a fresh fullscreen GTK text view: (ms, text that arrived)."""
    d = m.tmpdir(prefix="deskhand-bench-gtk-")
    app = os.path.join(d, "text.py")
    with open(app, "w") as f:
        f.write(TEXT_APP)
    path = os.path.join(d, "text")
    p = m.spawn([PY, app, path], env={"GDK_BACKEND": "wayland"}, stdout=subprocess.PIPE)
    try:
        if not select.select([p.p.stdout], [], [], 30)[0] or \
                p.p.stdout.readline().strip() != b"ready":
            raise RuntimeError("the GTK text view did not start")
        t0 = time.monotonic()
        r = subprocess.run(m.argv([h.binary(), "type", "-"]), env=m.environ(),
                           input=text.encode(), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=300)
        ms = (time.monotonic() - t0) * 1000
        if r.returncode != 0:
            return ms, "(deskhand type failed: %s)" % r.stderr.decode(errors="replace").strip()

        def text_now():
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    return f.read()
            except FileNotFoundError:
                return ""
        h.wait_for(lambda: text_now() == text, 5)
        time.sleep(0.3)     # anything late (doubled) arrives too
        return ms, text_now()
    finally:
        p.stop()


def type_foot(sway, text):
    term = wl_util.FootCat(sway, app_id="benchtype")
    try:
        t0 = time.monotonic()
        r = subprocess.run(sway.argv([h.binary(), "type", "-"]), env=sway.environ(),
                           input=text.encode(), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=300)
        ms = (time.monotonic() - t0) * 1000
        if r.returncode != 0:
            raise RuntimeError("deskhand type on sway: %s" % r.stderr.decode())
        if not text.endswith("\n"):
            r = wl_util.deskhand(sway, "key", "ctrl+d")
            assert r.returncode == 0, r.stderr
        return ms, term.finish().decode("utf-8", "replace")
    finally:
        term.stop()


def typing(m, sway, mixed, runs):
    ascii_text = ("The quick brown fox jumps over the lazy dog; 0123456789 ~a" * 2)[:len(mixed)]
    cases = [("Mutter GTK, mixed", lambda: type_gtk(m, mixed), mixed),
             ("Mutter GTK, ASCII", lambda: type_gtk(m, ascii_text), ascii_text),
             ("sway foot, mixed", lambda: type_foot(sway, mixed), mixed)]
    res = {name: dict(times=[], exact=0, lost=0, added=0) for name, _, _ in cases}
    for run in range(runs):
        for name, fn, want in cases:
            ms, got = fn()
            lost, added = lost_and_added(want, got)
            r = res[name]
            r["times"].append(ms)
            r["exact"] += got == want
            r["lost"] += lost
            r["added"] += added
            print("  typing run %d %-18s %7.1f ms  %s" % (
                run + 1, name, ms, "exact" if got == want else
                "NOT exact: %d lost, %d added: %r" % (lost, added, got)), flush=True)
    return res


# ---- the table ------------------------------------------------------------------------

def print_summary(s, lat, agent, typed, runs, nchars):
    med = s["med"]
    dm, ds, dx = (med["deskhand on " + n] for n in ("mutter", "sway", "Xvfb"))
    gst = med["gst pipewiresrc (Mutter)"]
    setup = s["phases"]["deskhand on mutter"][1]
    lat_d = statistics.median(x[0] for x in lat)
    lat_df = statistics.median(x[1] for x in lat)
    obs = [x[3] for x in lat if x[3] == x[3]]  # not NaN: seen
    lat_o = statistics.median(obs) if obs else float("nan")
    lat_oc = statistics.median(x[4] for x in lat)
    am, asw, ax = (agent_step.median_ms(agent[n][0]) for n in ("mutter", "sway", "Xvfb"))
    rm, rs, rx = (agent[n][1] / 1024 for n in ("mutter", "sway", "Xvfb"))
    tm, ta, tf = (statistics.median(typed[n]["times"]) for n in
                  ("Mutter GTK, mixed", "Mutter GTK, ASCII", "sway foot, mixed"))
    rows = [
        ("screenshot: Mutter / sway", "%.1f / %.1f ms" % (dm, ds), "%.2f" % (dm / ds)),
        ("screenshot: Mutter / Xvfb", "%.1f / %.1f ms" % (dm, dx), "%.2f" % (dm / dx)),
        ("screenshot: Mutter / gst pipewiresrc", "%.1f / %.1f ms" % (dm, gst),
         "%.2f" % (dm / gst)),
        ("  Mutter's set-up (to 1st frame) / all", "%.1f / %.1f ms" % (setup, dm),
         "%.2f" % (setup / dm)),
        ("click to frame: agent's capture / observer", "%.1f / %.1f ms" % (lat_d, lat_o),
         "%.2f" % (lat_d / lat_o)),
        ("  frames the agent's stream got", "%.0f" % lat_df, ""),
        ("  observer's captures (5 ms apart)", "%.0f" % lat_oc, ""),
        ("agent OS step: Mutter / sway", "%.1f / %.1f ms" % (am, asw), "%.2f" % (am / asw)),
        ("agent OS step: Mutter / Xvfb", "%.1f / %.1f ms" % (am, ax), "%.2f" % (am / ax)),
        ("agent peak RSS: Mutter / sway", "%.1f / %.1f MB" % (rm, rs), "%.2f" % (rm / rs)),
        ("agent peak RSS: Mutter / Xvfb", "%.1f / %.1f MB" % (rm, rx), "%.2f" % (rm / rx)),
        ("typing %d: Mutter mixed / ASCII" % nchars, "%.0f / %.0f ms" % (tm, ta),
         "%.2f" % (tm / ta)),
        ("typing %d mixed: Mutter / sway" % nchars, "%.0f / %.0f ms" % (tm, tf),
         "%.2f" % (tm / tf)),
    ]
    print()
    print("%-42s %24s %8s" % ("measure (medians)", "values", "ratio"))
    for name, vals, ratio in rows:
        print("%-42s %24s %8s" % (name, vals, ratio))
    print("agent's captures after a click that showed it: %d of %d; the observer saw %d of %d"
          % (sum(x[2] for x in lat), len(lat), len(obs), len(lat)))
    for name, t in typed.items():
        print("typing exact, %-18s %d of %d runs (%d characters lost, %d added in all)"
              % (name + ":", t["exact"], runs, t["lost"], t["added"]))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="screenshot runs per tool")
    ap.add_argument("--typing-runs", type=int, default=3)
    ap.add_argument("--clicks", type=int, default=10)
    ap.add_argument("--steps", type=int, default=40, help="agent steps per display")
    args = ap.parse_args()
    for tool in ("mutter", "pipewire", "wireplumber", "gst-launch-1.0", "sway", "foot",
                 "Xvfb", "xterm"):
        if shutil.which(tool) is None:
            sys.exit("bench/gnome.py: %s is not installed (.ci/install-deps installs it)"
                     % tool)
    mixed = bench_typing_text()
    with mutter.Mutter(monitors=1, size=SIZE) as m, \
            wayland.Sway(outputs=1, size=SIZE) as sway:
        X = None
        try:
            X = XDisplay()
            noise_foots(m)
            wl_util.noise_foot(sway, "noise-a", 1, chars=16000)
            wl_util.noise_foot(sway, "noise-b", 2, chars=16000)
            noise_xterms(X)
            for comp in (m, sway, X):
                wait_still(comp)
            hand = mutter.MutterHand(m)
            displays = {"mutter": m, "sway": sway, "Xvfb": X}
            shots = screenshots(displays, hand, args.runs)
            print_screenshots(shots, args.runs)
            print("the agent's step (%d pointer moves each; settle + screenshot + encode + "
                  "request):" % args.steps, flush=True)
            agent = agent_steps(displays, args.steps)
            first_click, lat = latency(m, args.clicks)
            print_latency(first_click, lat)
            print("typing %d characters (%d outside ASCII), %d runs each:" % (
                len(mixed), len([c for c in mixed if ord(c) > 126]), args.typing_runs),
                flush=True)
            typed = typing(m, sway, mixed, args.typing_runs)
            hand.stop()
        finally:
            if X is not None:
                X.stop()
    print_summary(shots, lat, agent, typed, args.typing_runs, len(mixed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
