#!/usr/bin/env python3
"""
The agent's own cost per OS step, with an instant fake model: on a private
1920x1080 Xvfb with a busy desktop, deskhand runs N computer actions
(alternating pointer moves, each followed by settle + screenshot + encode +
the next request), approved by --os-auto-approve so no human is in the
loop. Prints the time per step, the peak resident memory, and the start-up
time of `deskhand --version`, against a fresh `python3 -c pass` for scale.

    bench/agent_step.py [STEPS]          (default 40)
    bench/agent_step.py [STEPS] --against OTHER_BUILD_DIR
                                         this build and another (an older
                                         commit's), alternated on one desktop
"""
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, os.path.join(TOP, "tests", "fake_llm"))
os.environ.setdefault("DESKHAND_BUILD", os.path.join(TOP, "build"))

import harness as h  # noqa: E402
from fakellm import FakeLLM  # noqa: E402


def busy_desktop(X):
    """Noisy wallpaper plus terminals full of text."""
    procs = []
    noise = os.path.join(h.tmpdir(), "noise.png")
    subprocess.run(["convert", "-size", "1920x1080", "plasma:fractal", noise],
                   check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    if os.path.exists(noise):
        subprocess.run(["display", "-window", "root", noise], env=X.env(),
                       check=False, timeout=60)
    for i in range(4):
        procs.append(h.Proc(["xterm", "-geometry", "80x30+%d+%d" % (60 + 430 * i, 80 + 60 * i),
                             "-e", "sh", "-c", "ls -laR /usr/share/doc | head -400; sleep 600"],
                            env=X.env()))
    time.sleep(2)
    return procs


def run_agent(X, binary, steps, display_env=None, prefix=(), tmpdir=h.tmpdir):
    """One agent run of `steps` pointer moves; (per-step gaps in s, peak RSS KB, whole run s).
    On X's display, or on the one display_env names (bench/wayland.py: a
    sway's WAYLAND_DISPLAY, deskhand run through `prefix` as its uid, in a
    directory from `tmpdir` that uid may write)."""
    turns = []
    for i in range(steps):
        x, y = (100 + 7 * i) % 1200, (100 + 5 * i) % 700
        turns.append({"tool_calls": [{"name": "computer", "arguments": {
            "action": "mouse_move", "coordinate": [x, y]}}]})
    turns.append({"text": "done"})
    d = tmpdir()
    env = dict(display_env if display_env is not None else X.env(),
               HOME=d, XDG_DATA_HOME=d, XDG_CONFIG_HOME=d)
    for k in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        env.pop(k, None)
    with FakeLLM(turns) as srv:
        args = [binary, "--provider", "openai", "--api-base", srv.base_url("openai"),
                "--os", "--os-auto-approve", "--max-steps", str(steps + 5),
                "--conversation", os.path.join(d, "c.json"),
                "--audit", os.path.join(d, "a.jsonl"), "-m", "move around"]
        # A child's peak memory (wait4's ru_maxrss) counts the memory of the
        # process it was forked from, this one, whose pages it shared until
        # exec: 29 MB here, 257 MB from bench/wayland.py after it decoded
        # its PNGs. GNU time is a small process to be forked from.
        rss_file = os.path.join(d, "maxrss")
        gnu_time = ["/usr/bin/time", "-f", "%M", "-o", rss_file] \
            if os.path.exists("/usr/bin/time") else []
        t0 = time.monotonic()
        errf = open(os.path.join(d, "stderr"), "w+")
        p = subprocess.Popen(gnu_time + list(prefix) + args, env=env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.DEVNULL, stderr=errf)
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
        total = time.monotonic() - t0
        rss_kb = usage.ru_maxrss
        if gnu_time:
            with open(rss_file) as f:
                rss_kb = int(f.read().split()[-1])
        if p.returncode != 0:
            errf.seek(0)
            raise RuntimeError("agent run failed: " + errf.read()[-400:])
        # Per step: from the end of one answer to the next request, so
        # the fake model's own time is not counted.
        times = [r["time"] for r in srv.requests]
        answered = list(srv.answered)
    return sorted(b - a for a, b in zip(answered, times[1:])), rss_kb, total


def median_ms(gaps):
    return gaps[len(gaps) // 2] * 1000


def compare(X, steps, other):
    """This build and `other` (another build directory), alternated on the
    same desktop, three runs each: the agent's step is no slower, or is."""
    builds = [("this", h.binary()), ("other", os.path.join(other, "deskhand"))]
    got = {label: [] for label, _ in builds}
    for _ in range(3):
        for label, binary in builds:
            got[label] += run_agent(X, binary, steps)[0]
    for label, binary in builds:
        gaps = sorted(got[label])
        print("agent OS step, %s build (%s): median of %d steps over 3 runs %.1f ms" %
              (label, binary, len(gaps), median_ms(gaps)))


def main():
    args = sys.argv[1:]
    other = None
    if "--against" in args:
        i = args.index("--against")
        other = args[i + 1]
        del args[i:i + 2]
    steps = int(args[0]) if args else 40
    X = h.Xvfb(1920, 1080)
    procs = busy_desktop(X)
    try:
        if other is not None:
            compare(X, steps, other)
            return 0
        try:
            gaps, rss_kb, total = run_agent(X, h.binary(), steps)
        except RuntimeError as e:
            print(e)
            return 1
        print("agent OS step (action+settle+screenshot+encode+request), median of %d: "
              "%.1f ms (target <= 50); whole run %.2f s" % (len(gaps), median_ms(gaps), total))
        print("peak resident memory of deskhand: %.1f MB (target < 30)%s" % (
            rss_kb / 1024, "" if os.path.exists("/usr/bin/time") else
            " (without GNU time: this benchmark's own memory counts too)"))
    finally:
        for p in procs:
            p.stop()
        X.stop()

    n = 50
    t0 = time.monotonic()
    for _ in range(n):
        subprocess.run([h.binary(), "--version"], stdout=subprocess.DEVNULL)
    ver = (time.monotonic() - t0) / n * 1000
    t0 = time.monotonic()
    for _ in range(n):
        subprocess.run(["python3", "-c", "pass"], stdout=subprocess.DEVNULL)
    py = (time.monotonic() - t0) / n * 1000
    print("deskhand --version: %.2f ms (target < 10); python3 -c pass: %.1f ms; ratio %.3f"
          % (ver, py, ver / py))
    return 0


if __name__ == "__main__":
    sys.exit(main())
