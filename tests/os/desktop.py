"""
Real screen content for the capture tests and bench/screenshot: a noisy
photographic wallpaper (ImageMagick's plasma fractal, fixed seed) set as the
root background, and xterms full of text (source code, coloured listings).

Everything started here is owned by the caller through harness.Proc and is
ended by pid, never by name.
"""
import os
import subprocess
import time

import harness as h

# Files with plenty of text that exist on any Debian machine with the
# build dependencies installed.
TEXT_SOURCES = [
    "cat /usr/include/X11/Xlib.h",
    "ls --color=always -l /usr/bin",
    "cat /usr/include/png.h",
    "ls --color=always -la /usr/lib/x86_64-linux-gnu",
    "cat /usr/include/stdio.h /usr/include/stdlib.h",
    "cat /usr/include/zlib.h",
]


def magick(name):
    """ImageMagick's tool itself (a stand-in may shadow it on PATH)."""
    real = "/usr/bin/" + name
    return real if os.path.exists(real) else name


def wallpaper(x, path, seed=7, blur="0x1"):
    """Writes a plasma-fractal wallpaper of the screen's size to path and
    makes it the root background. Returns path."""
    subprocess.run([magick("convert"), "-size", "%dx%d" % (x.width, x.height),
                    "-seed", str(seed), "plasma:fractal", "-blur", blur,
                    "-depth", "8", path], check=True, timeout=120)
    # display exits non-zero without a window manager but sets the root.
    subprocess.run([magick("display"), "-window", "root", path],
                   env=x.env(), timeout=60, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    return path


def xterms(x, count=6, cols=110, rows=34, sources=None, title=None,
           extra_env=None, faces=(None, "DejaVu Sans Mono")):
    """Starts `count` xterms tiled over the screen, each printing a text
    source and then waiting; they take turns at the fonts in `faces` (None:
    the bitmap font "fixed", else an anti-aliased Xft face, as on most
    desktops). Returns the list of harness.Proc."""
    sources = sources or TEXT_SOURCES
    env = x.env(LANG="C.UTF-8", LC_ALL="C.UTF-8", **(extra_env or {}))
    procs = []
    marks = h.tmpdir()
    per_row = 3
    for i in range(count):
        gx = 20 + (i % per_row) * (x.width // per_row)
        gy = 20 + (i // per_row) * (x.height // 2)
        # The marker file says the text is all written; drawing it follows.
        ready = os.path.join(marks, "xterm-%d" % i)
        cmd = sources[i % len(sources)] + "; : > '%s'; exec sleep 100000" % ready
        args = ["xterm", "-geometry", "%dx%d+%d+%d" % (cols, rows, gx, gy)]
        face = faces[i % len(faces)]
        args += ["-fa", face, "-fs", "9"] if face else ["-fn", "fixed"]
        if title:
            args += ["-T", title]
        args += ["-e", "sh", "-c", cmd]
        proc = h.Proc(args, env=env)
        proc.ready_file = ready
        procs.append(proc)
    return procs


def wait_still(x, shot, procs=(), timeout=60.0):
    """Waits until the xterms in `procs` have written all their text, then
    until three screenshots taken 0.3 s apart are identical (they finished
    drawing it). `shot(path)` writes a PNG of the screen. Raises when the
    screen is not still within `timeout`: a test comparing pixels must not
    go on with a screen that is still changing."""
    for p in procs:
        if not h.wait_for(lambda: os.path.exists(p.ready_file), timeout):
            raise AssertionError("an xterm did not write its text within %d s" % timeout)
    d = h.tmpdir()
    a, b = os.path.join(d, "a.png"), os.path.join(d, "b.png")
    deadline = time.monotonic() + timeout
    shot(a)
    same = 0
    while same < 2 and time.monotonic() < deadline:
        time.sleep(0.3)
        shot(b)
        with open(a, "rb") as fa, open(b, "rb") as fb:
            same = same + 1 if fa.read() == fb.read() else 0
        os.replace(b, a)
    os.unlink(a)
    os.rmdir(d)
    if same < 2:
        raise AssertionError("the screen did not stay still within %d s" % timeout)


def busy_desktop(x, workdir):
    """The benchmark's desktop: wallpaper plus six xterms full of text.
    Returns the xterm processes (caller stops them)."""
    wallpaper(x, os.path.join(workdir, "wallpaper.png"))
    procs = xterms(x)
    deskhand = h.binary()
    wait_still(x, lambda p: subprocess.run(
        [deskhand, "screenshot", "-o", p], env=x.env(), check=True,
        timeout=60), procs)
    return procs
