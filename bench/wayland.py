#!/usr/bin/env python3
"""
bench/wayland.py — deskhand on a wlroots compositor against the tools a
Wayland user would otherwise reach for, in one run: on a headless sway it
starts (tests/lib/wayland.py: one 1920x1080 output, two foot windows full
of noisy coloured text side by side),

  - the whole process of `deskhand screenshot -o F` against `grim F` (PNG,
    its default level 6) and `grim -t ppm F` (no encoding: the floor of a
    capture), N interleaved runs each, medians and ratios, and whether
    deskhand's pixels are grim's (both PNGs decoded, and grim's PPM);
  - typing bench/typing's mixed short text (Latin-1, Greek, Cyrillic, CJK,
    an emoji, a tab) into a freshly started foot running `cat > file`:
    `deskhand type` against `wtype`, time per run, and whether each came
    out exact (the characters lost or added when not);
  - the agent's cost per OS step (bench/agent_step.py: pointer moves, each
    followed by settle + screenshot + encode + the next request, with an
    instant fake model) on this sway, beside the same on a private Xvfb
    with agent_step's busy desktop.

Figures, not verdicts: it never fails on a slow or inexact result (only
when a tool cannot run). Every client runs as the compositor's uid.

    bench/wayland.py [--runs N] [--typing-runs N] [--steps N]
                                              (build first: ninja -C build)
"""
import argparse
import difflib
import importlib.machinery
import importlib.util
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, os.path.join(TOP, "tests", "os"))
os.environ.setdefault("DESKHAND_BUILD", os.path.join(TOP, "build"))
os.environ.pop("DESKHAND_BIN", None)

import harness as h  # noqa: E402
import wayland  # noqa: E402
import wl_util  # noqa: E402
import agent_step  # noqa: E402


def bench_typing_text():
    """bench/typing's short mixed string (one definition for both benches)."""
    path = os.path.join(HERE, "typing")
    loader = importlib.machinery.SourceFileLoader("bench_typing", path)
    spec = importlib.util.spec_from_loader("bench_typing", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod.SHORT


def timed(sway, argv, input=None):
    """Runs argv as the compositor's uid; wall seconds (raises on failure)."""
    t0 = time.monotonic()
    r = subprocess.run(sway.argv(argv), env=sway.environ(), input=input, cwd=sway.home,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, timeout=300)
    t1 = time.monotonic()
    if r.returncode != 0:
        raise RuntimeError("%s failed: %s" % (argv[0], r.stderr.decode(errors="replace")))
    return t1 - t0


# ---- screenshots --------------------------------------------------------------

def screenshots(sway, runs):
    d = sway.tmpdir(prefix="deskhand-bench-shots-")
    files = {"deskhand": os.path.join(d, "deskhand.png"), "grim": os.path.join(d, "grim.png"),
             "grim ppm": os.path.join(d, "grim.ppm")}
    cmds = {"deskhand": [h.binary(), "screenshot", "-o", files["deskhand"]],
            "grim": ["grim", files["grim"]],
            "grim ppm": ["grim", "-t", "ppm", files["grim ppm"]]}
    times = {k: [] for k in cmds}
    for _ in range(2):  # warm: page cache, fonts, the compositor's buffers
        for k in cmds:
            timed(sway, cmds[k])
    for _ in range(runs):
        for k in cmds:
            times[k].append(timed(sway, cmds[k]) * 1000)
    base = statistics.median(timed(sway, ["true"]) * 1000 for _ in range(15))
    med = {k: statistics.median(v) for k, v in times.items()}
    sizes = {k: os.path.getsize(f) for k, f in files.items()}
    mine = wl_util.png_pixels(files["deskhand"])
    theirs = wl_util.png_pixels(files["grim"])
    with open(files["grim ppm"], "rb") as f:
        raw = wl_util.ppm(f.read())
    same_png = mine == theirs
    same_ppm = mine == raw
    why = "" if same_png and same_ppm else \
        " (first difference " + wl_util.first_difference(mine[2], raw[2], mine[0]) + ")"
    return dict(med=med, min={k: min(v) for k, v in times.items()},
                max={k: max(v) for k, v in times.items()}, sizes=sizes, base=base,
                same="yes: grim's PNG and PPM decode to deskhand's pixels" if same_png and
                same_ppm else "NO%s" % why, size=mine[:2])


# ---- typing -----------------------------------------------------------------------

def lost_and_added(want, got):
    """Characters of `want` missing from `got`, and characters added."""
    sm = difflib.SequenceMatcher(None, want, got, autojunk=False)
    kept = sum(b.size for b in sm.get_matching_blocks())
    return len(want) - kept, len(got) - kept


def type_once(sway, argv, text, input=None):
    """Types into a fresh foot running cat; (seconds, text that arrived)."""
    term = wl_util.FootCat(sway, app_id="benchtype")
    try:
        secs = timed(sway, argv, input=input)
        if not text.endswith("\n"):
            # cat reads a line without its newline at the first ctrl+d;
            # the second (in finish) ends it.
            r = wl_util.deskhand(sway, "key", "ctrl+d")
            assert r.returncode == 0, r.stderr
        got = term.finish().decode("utf-8", "replace")
    finally:
        term.stop()
    return secs, got


def typing(sway, text, runs):
    tools = [("deskhand", [h.binary(), "type", "-"], text.encode()),
             ("wtype", ["wtype", "-"], text.encode())]
    res = {name: dict(times=[], exact=0, lost=0, added=0) for name, _, _ in tools}
    for run in range(runs):
        for name, argv, data in tools:
            secs, got = type_once(sway, argv, text, input=data)
            lost, added = lost_and_added(text, got)
            r = res[name]
            r["times"].append(secs * 1000)
            r["exact"] += got == text
            r["lost"] += lost
            r["added"] += added
            print("  typing run %d %-8s %7.1f ms  %s" % (
                run + 1, name, secs * 1000, "exact" if got == text else
                "NOT exact: %d lost, %d added: %r" % (lost, added, got)), flush=True)
    return res


# ---- the agent's step -------------------------------------------------------------

def agent_steps(sway, steps):
    """(sway gaps, sway RSS KB, Xvfb gaps, Xvfb RSS KB)."""
    gaps_w, rss_w, _ = agent_step.run_agent(
        None, h.binary(), steps, display_env=sway.environ(), prefix=sway.prefix(),
        tmpdir=lambda: sway.tmpdir(prefix="deskhand-bench-agent-"))
    X = h.Xvfb(1920, 1080)
    procs = agent_step.busy_desktop(X)
    try:
        gaps_x, rss_x, _ = agent_step.run_agent(X, h.binary(), steps)
    finally:
        for p in procs:
            p.stop()
        X.stop()
    return gaps_w, rss_w, gaps_x, rss_x


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=15, help="screenshot runs per tool")
    ap.add_argument("--typing-runs", type=int, default=5)
    ap.add_argument("--steps", type=int, default=40, help="agent steps per display")
    args = ap.parse_args()
    for tool in ("sway", "grim", "wtype", "foot", "Xvfb", "xterm"):
        if shutil.which(tool) is None:
            sys.exit("bench/wayland.py: %s is not installed (.ci/install-deps installs it)"
                     % tool)
    text = bench_typing_text()
    with wayland.Sway(outputs=1, size=(1920, 1080)) as sway:
        # The typing's foots come and go over the noisy ones, which stay.
        wl_util.noise_foot(sway, "noise-a", 1, chars=16000)
        wl_util.noise_foot(sway, "noise-b", 2, chars=16000)
        wl_util.wait_still(sway)
        shots = screenshots(sway, args.runs)
        print_screenshots(shots, args.runs)
        print("typing %d characters (%d outside ASCII) into a fresh foot running cat, "
              "%d runs each:" % (len(text), len([c for c in text if ord(c) > 126]),
                                 args.typing_runs), flush=True)
        typed = typing(sway, text, args.typing_runs)
        # A desktop has a keyboard on its seat already: the tools' own
        # keyboards then need no wait for clients to take one up (headless
        # sway has none, and each tool's keyboard is the seat's first).
        print("the same with a keyboard already on the seat, as on a desktop:", flush=True)
        hand = wayland.VirtualInput(sway, pointer=False)
        try:
            typed_kb = typing(sway, text, args.typing_runs)
        finally:
            hand.stop()
        gaps_w, rss_w, gaps_x, rss_x = agent_steps(sway, args.steps)
    print_summary(shots, typed, typed_kb, args.typing_runs, gaps_w, rss_w, gaps_x, rss_x)
    return 0


def print_screenshots(s, runs):
    print("deskhand on sway (headless, pixman), %dx%d, two foots of noisy text; %d CPUs"
          % (s["size"][0], s["size"][1], os.cpu_count() or 0))
    print("screenshot, whole process, %d interleaved runs each:" % runs)
    print("  %-24s %10s %10s %10s %12s" % ("", "median ms", "min ms", "max ms", "file bytes"))
    for k in s["med"]:
        print("  %-24s %10.1f %10.1f %10.1f %12d" % (
            {"deskhand": "deskhand screenshot -o F", "grim": "grim F (PNG)",
             "grim ppm": "grim -t ppm F"}[k], s["med"][k], s["min"][k], s["max"][k],
            s["sizes"][k]))
    print("  (starting any process as the compositor's uid costs %.1f ms, included above)"
          % s["base"])
    print("  same pixels: %s" % s["same"], flush=True)


def print_summary(s, typed, typed_kb, runs, gaps_w, rss_w, gaps_x, rss_x):
    med = s["med"]
    dt = statistics.median(typed["deskhand"]["times"])
    wt = statistics.median(typed["wtype"]["times"])
    dk = statistics.median(typed_kb["deskhand"]["times"])
    wk = statistics.median(typed_kb["wtype"]["times"])
    sw, sx = agent_step.median_ms(gaps_w), agent_step.median_ms(gaps_x)
    rows = [
        ("screenshot: deskhand / grim (PNG)", "%.1f / %.1f ms" % (med["deskhand"], med["grim"]),
         "%.2f" % (med["deskhand"] / med["grim"])),
        ("screenshot: deskhand / grim -t ppm", "%.1f / %.1f ms" % (med["deskhand"],
                                                                   med["grim ppm"]),
         "%.2f" % (med["deskhand"] / med["grim ppm"])),
        ("PNG size: deskhand / grim", "%d / %d B" % (s["sizes"]["deskhand"], s["sizes"]["grim"]),
         "%.2f" % (s["sizes"]["deskhand"] / s["sizes"]["grim"])),
        ("typing: deskhand / wtype", "%.1f / %.1f ms" % (dt, wt), "%.2f" % (dt / wt)),
        ("  with a keyboard on the seat", "%.1f / %.1f ms" % (dk, wk), "%.2f" % (dk / wk)),
        ("agent OS step: sway / Xvfb", "%.1f / %.1f ms" % (sw, sx), "%.2f" % (sw / sx)),
        ("agent peak RSS: sway / Xvfb", "%.1f / %.1f MB" % (rss_w / 1024, rss_x / 1024),
         "%.2f" % (rss_w / rss_x)),
    ]
    print()
    print("%-38s %24s %8s" % ("measure (medians)", "values", "ratio"))
    for name, vals, ratio in rows:
        print("%-38s %24s %8s" % (name, vals, ratio))
    for name in ("deskhand", "wtype"):
        for t, how in ((typed[name], ""), (typed_kb[name], ", keyboard on the seat")):
            print("typing exact, %-8s %d of %d runs (%d characters lost, %d added in all%s)"
                  % (name + ":", t["exact"], runs, t["lost"], t["added"], how))
    print("screenshot pixels: %s" % s["same"])
    print("agent steps: %d on each display (pointer moves; settle + screenshot + encode "
          "+ request)" % len(gaps_w))


if __name__ == "__main__":
    sys.exit(main())
