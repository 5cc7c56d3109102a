#!/usr/bin/env python3
"""deskhand batch against the shell loop a user would write
(bench/batch-loop.sh): the example suite (examples/tasks/, its scripted
solutions) run by the loop, one task at a time, and by deskhand batch with
--parallel 1, 2 and 4, in one run. For each: tasks per minute (wall time),
and memory per task: the peak of the whole process tree's proportional set
size (PSS: shared pages counted once), sampled every 50 ms, divided by the
tasks running at once. And the container image's size when podman has it.

    ninja -C build && python3 bench/batch.py [--runs N]
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.environ.get("DESKHAND_BUILD", os.path.join(TOP, "build"))
DESKHAND = os.environ.get("DESKHAND_BIN", os.path.join(BUILD, "deskhand"))
TASKS = os.path.join(TOP, "examples", "tasks", "tasks.jsonl")
AGENT = ["--provider", "script", "--script", "{tasks}/solutions/pass/{id}.json", "-y",
         "--os-auto-approve"]


def children():
    """pid -> its children, for the whole machine, read once."""
    kids = {}
    for p in os.listdir("/proc"):
        if not p.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % p) as f:
                ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        kids.setdefault(ppid, []).append(int(p))
    return kids


def tree_pss_kib(root):
    kids, total, todo = children(), 0, [root]
    while todo:
        pid = todo.pop()
        todo.extend(kids.get(pid, []))
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except OSError:
            pass
    return total


def measure(argv, env):
    """Wall seconds, peak tree PSS (MiB), the last line of standard output."""
    start = time.monotonic()
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    peak = [0]

    def sample():
        while p.poll() is None:
            peak[0] = max(peak[0], tree_pss_kib(p.pid))
            time.sleep(0.05)
    t = threading.Thread(target=sample)
    t.start()
    out = p.communicate()[0].decode()
    t.join()
    wall = time.monotonic() - start
    lines = out.strip().splitlines()
    return wall, peak[0] / 1024, lines[-1] if lines else "(no output)"


def image_size():
    if shutil.which("podman") is None:
        return None
    for name in ("localhost/deskhand-test:ci", "deskhand", "localhost/deskhand"):
        r = subprocess.run(["podman", "image", "inspect", name, "--format", "{{.Size}}"],
                           capture_output=True, text=True)
        if r.returncode == 0 and r.stdout.strip().isdigit():
            return name, int(r.stdout.strip())
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args()
    with open(TASKS) as f:
        n = sum(1 for line in f if line.strip() and not line.startswith("#"))
    env = dict(os.environ, DESKHAND_BIN=DESKHAND)
    for k in ("DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS"):
        env.pop(k, None)
    ways = [("shell loop (bench/batch-loop.sh)", 1,
             lambda out: [os.path.join(TOP, "bench", "batch-loop.sh"), TASKS, out] + AGENT)]
    for par in (1, 2, 4):
        ways.append(("deskhand batch --parallel %d" % par, par,
                     lambda out, par=par: [DESKHAND, "batch", TASKS, "--out", out,
                                           "--parallel", str(par)] + AGENT))
    print("the example suite: %d tasks (xterm, Mousepad, zenity, Chromium, xcalc, PCManFM), "
          "scripted solutions, %d run(s) each" % (n, args.runs))
    base = None
    for name, par, argv in ways:
        walls, peaks, last = [], [], ""
        for _ in range(args.runs):
            out = tempfile.mkdtemp(prefix="deskhand-bench-batch-", dir="/var/tmp")
            try:
                wall, peak, last = measure(argv(os.path.join(out, "r")), env)
            finally:
                shutil.rmtree(out, ignore_errors=True)
            walls.append(wall)
            peaks.append(peak)
        wall = sorted(walls)[len(walls) // 2]
        rate = n / wall * 60
        base = base or rate
        print("  %-34s %5.1f tasks/min (%.2fx the loop)  %5.0f MiB/task (peak %4.0f MiB)  "
              "%.1f s   [%s]" % (name, rate, rate / base, max(peaks) / min(par, n), max(peaks),
                                 wall, last))
    img = image_size()
    if img:
        print("  container image %s: %.0f MB" % (img[0], img[1] / 1e6))
    else:
        print("  container image: not built here (podman build -f deploy/Containerfile .)")


if __name__ == "__main__":
    sys.exit(main())
