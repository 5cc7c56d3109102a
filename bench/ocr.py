#!/usr/bin/env python3
"""
Grounding benchmark for `deskhand find-text`: screens generated on a private
1920x1080 Xvfb, one per theme (light, dark, coloured), each holding the same
grid of one-line texts in four font kinds (xterm with a core bitmap font,
xterm with anti-aliased DejaVu Sans Mono through -fa, a Tk label in DejaVu
Sans, a Tk label in bold DejaVu Serif) at five sizes (8..20 px), plus the
cases issue 15 names: xterm lines on a #3a4756 desktop (black on white and
white on black, default font) and the display of xcalc. For each text, one full-screen call of
find-text; the true place is where the text's pixels are (the bounding
box of the pixels that differ from the window's and the desktop's colour).

Prints per theme: recall (a match whose centre lies within the text's box
grown by 10 px; a match elsewhere is a miss), the median and worst distance
from the true centre, and the time per call. Figures, not verdicts.

    bench/ocr.py [--theme light|dark|coloured] [--verbose] [--save DIR]
    DESKHAND_BIN=/path/to/other/deskhand bench/ocr.py   (another build)
"""
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
os.environ.setdefault("DESKHAND_BUILD", os.path.join(TOP, "build"))

import harness as h  # noqa: E402
import pngread  # noqa: E402

SIZES = (8, 10, 13, 16, 20)
BITMAP = {8: "5x8", 10: "6x10", 13: "6x13", 16: "9x15", 20: "10x20"}
KINDS = ("xterm-bitmap", "xterm-ttf", "tk-sans", "tk-serif-bold")

# (desktop, [(window bg, fg)...]) cycled over the items of a screen
THEMES = {
    "light": ("#d8dee9", [("#ffffff", "#000000"), ("#f0f0f0", "#333333"),
                          ("#fafafa", "#1a1a1a")]),
    "dark": ("#3a4756", [("#1e1e1e", "#dcdcdc"), ("#3a4756", "#ffffff"),
                         ("#2b2b2b", "#a9b7c6"), ("#000000", "#33ff33")]),
    "coloured": ("#2e5e4e", [("#1e66f5", "#ffffff"), ("#2e7d32", "#ffffff"),
                             ("#f9a825", "#000000"), ("#c62828", "#ffffff"),
                             ("#b2dfdb", "#263238"), ("#6a1b9a", "#f3e5f5")]),
}

WORDS = ("Open Settings|Save Draft|Print Preview|Export Report|Network Status|"
         "Delete Folder|Quarterly Sales|Invite Members|Battery Saver|"
         "Recent Files|Account Balance|Upload Photos|Check Updates|"
         "Display Scale|Backup Now|Shipping Address|Sort Ascending|"
         "Compose Message|Mute Audio|Order 4821|Restart Server|"
         "Billing Cycle|Folder Options|Zoom Level|Cancel Request").split("|")


def texts_for(theme):
    """Distinct phrases per screen: the theme shifts the list."""
    k = list(THEMES).index(theme) * 7
    return WORDS[k:] + WORDS[:k]


def hexrgb(c):
    return tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))


def layout(theme):
    """Items: dict(kind, size, text, x, y, bg, fg)."""
    desk, colours = THEMES[theme]
    words = texts_for(theme)
    items = []
    for ki, kind in enumerate(KINDS):
        for si, size in enumerate(SIZES):
            n = ki * len(SIZES) + si
            bg, fg = colours[n % len(colours)]
            items.append(dict(kind=kind, size=size, text=words[n],
                              x=60 + 460 * ki, y=80 + 150 * si, bg=bg, fg=fg))
    return desk, items


def start_xterm(X, it, font_args):
    script = "printf '\\033[?25l%s'; sleep 3600" % it["text"]
    return h.Proc(["xterm", "-b", "2", "-bw", "0", "-geometry",
                   "%dx1+%d+%d" % (len(it["text"]) + 2, it["x"], it["y"]),
                   "-bg", it["bg"], "-fg", it["fg"]] + font_args +
                  ["-e", "sh", "-c", script], env=X.env())


TK_SCRIPT = r"""
import sys, tkinter as tk
root = tk.Tk(); root.withdraw()
for line in sys.stdin.read().splitlines():
    fam, size, weight, x, y, bg, fg, text = line.split("\t")
    w = tk.Toplevel(root); w.overrideredirect(1); w.geometry("+%s+%s" % (x, y))
    tk.Label(w, text=text, font=(fam, -int(size), weight), bg=bg, fg=fg,
             padx=8, pady=4, bd=0).pack()
root.mainloop()
"""


def start_screen(X, theme):
    desk, items = layout(theme)
    subprocess.run(["xsetroot", "-solid", desk], env=X.env(), check=True)
    procs, tk_lines = [], []
    for it in items:
        if it["kind"] == "xterm-bitmap":
            procs.append(start_xterm(X, it, ["-fn", BITMAP[it["size"]]]))
        elif it["kind"] == "xterm-ttf":
            procs.append(start_xterm(X, it, ["-fa", "DejaVu Sans Mono",
                                             "-fs", "%g" % (it["size"] * 0.75)]))
        else:
            fam, weight = (("DejaVu Sans", "normal") if it["kind"] == "tk-sans"
                           else ("DejaVu Serif", "bold"))
            tk_lines.append("\t".join([fam, str(it["size"]), weight, str(it["x"]),
                                       str(it["y"]), it["bg"], it["fg"], it["text"]]))
    tk = h.Proc([sys.executable, "-c", TK_SCRIPT], env=X.env(),
                stdin=subprocess.PIPE)
    tk.p.stdin.write(("\n".join(tk_lines) + "\n").encode())
    tk.p.stdin.close()
    procs.append(tk)
    if theme == "dark":
        # issue 15: xterm lines on a desktop of #3a4756 in the default font,
        # xterm's own colours (black on white) and reversed
        for text, y, colours in (("Invoice Total 391", 870, ["-bg", "#ffffff", "-fg", "#000000"]),
                                 ("Payment Due 1204", 950, ["-bg", "#000000", "-fg", "#ffffff"])):
            it = dict(kind="issue-xterm", size=13, text=text, x=60, y=y,
                      bg=colours[1], fg=colours[3])
            procs.append(start_xterm(X, it, []))
            items.append(it)
    return desk, items, procs


def shoot(X, path=None):
    path = path or os.path.join(h.tmpdir(), "bench-ocr.png")
    r = h.run([h.binary(), "screenshot", "-o", path, "--max-side", "1920"],
              env=X.env())
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode())
    with open(path, "rb") as f:
        return pngread.read_raw(f.read())


def truth(img, desk, it, slot_w=440, slot_h=60):
    """Bounding box of the pixels in the item's slot that are neither the
    desktop's nor the window's colour (the glyphs, anti-aliasing included)."""
    w, hgt, rows, bpp = img
    backs = [hexrgb(desk), hexrgb(it["bg"])]
    xs, ys = [], []
    for y in range(it["y"], min(hgt, it["y"] + slot_h)):
        row = rows[y]
        for x in range(it["x"], min(w, it["x"] + slot_w)):
            p = row[x * bpp:x * bpp + 3]
            if all(sum(abs(p[i] - b[i]) for i in range(3)) > 60 for b in backs):
                xs.append(x)
                ys.append(y)
    if not xs:
        return None
    return min(xs), min(ys), max(xs), max(ys)


def find(X, text):
    t0 = time.monotonic()
    r = h.run([h.binary(), "find-text", text], env=X.env(), timeout=120)
    dt = time.monotonic() - t0
    if r.returncode != 0:
        return None, dt
    f = r.stdout.decode().split()
    return (int(f[0]), int(f[1])), dt


def score(X, items, boxes):
    rows = []
    for it, box in zip(items, boxes):
        got, dt = find(X, it["text"])
        hit, err = False, None
        if got is not None and box is not None:
            x0, y0, x1, y1 = box
            tx, ty = (x0 + x1) / 2, (y0 + y1) / 2
            err = ((got[0] - tx) ** 2 + (got[1] - ty) ** 2) ** 0.5
            hit = x0 - 10 <= got[0] <= x1 + 10 and y0 - 10 <= got[1] <= y1 + 10
        rows.append(dict(it, hit=hit, err=err, dt=dt, got=got, box=box))
    return rows


def xcalc_case(X):
    """xcalc's display after typing 4096*3 = (12288)."""
    p = h.Proc(["xcalc", "-geometry", "+1500+700"], env=X.env())
    ok = h.wait_for(lambda: b"xcalc" in h.run(
        ["xdotool", "search", "--name", "Calculator"], env=X.env()).stdout
        or h.run(["xdotool", "search", "--class", "xcalc"], env=X.env()).stdout,
        timeout=20)
    time.sleep(1)
    if ok:
        wid = h.run(["xdotool", "search", "--class", "xcalc"],
                    env=X.env()).stdout.split()[0]
        h.run(["xdotool", "windowfocus", "--sync", wid], env=X.env())
        h.run(["xdotool", "type", "--window", wid, "4096*3="], env=X.env())
        time.sleep(1)
    got, dt = find(X, "12288")
    p.stop()
    return got is not None, dt


def report(theme, rows, verbose):
    hits = [r for r in rows if r["hit"]]
    errs = sorted(r["err"] for r in hits)
    dts = [r["dt"] for r in rows]
    print("%-9s recall %5.1f%% (%2d/%2d)  centre error median %4.1f px, max %5.1f px"
          "  time/call median %.2f s, max %.2f s" % (
              theme, 100.0 * len(hits) / len(rows), len(hits), len(rows),
              statistics.median(errs) if errs else float("nan"),
              max(errs) if errs else float("nan"),
              statistics.median(dts), max(dts)))
    by_kind = {}
    for r in rows:
        by_kind.setdefault(r["kind"], []).append(r["hit"])
    print("          " + "  ".join("%s %d/%d" % (k, sum(v), len(v))
                                   for k, v in by_kind.items()))
    if verbose:
        for r in rows:
            print("    %-4s %-13s %2dpx %-18s got %-12s true %s  %.2fs" % (
                "ok" if r["hit"] else "MISS", r["kind"], r["size"], r["text"],
                r["got"], r["box"], r["dt"]))


def main():
    args = sys.argv[1:]
    verbose = "--verbose" in args
    themes = list(THEMES)
    save = args[args.index("--save") + 1] if "--save" in args else None
    if "--theme" in args:
        themes = [args[args.index("--theme") + 1]]
    print("find-text: %s" % h.binary())
    with h.Xvfb() as X:
        all_dts = []
        for theme in themes:
            desk, items, procs = start_screen(X, theme)
            try:
                time.sleep(3)  # every client mapped and drawn
                img = shoot(X, save and os.path.join(save, theme + ".png"))
                boxes = [truth(img, desk, it) for it in items]
                rows = score(X, items, boxes)
                report(theme, rows, verbose)
                all_dts += [r["dt"] for r in rows]
                if theme == "dark":
                    found, dt = xcalc_case(X)
                    print("          xcalc display '12288': %s (%.2f s)" % (
                        "found" if found else "NOT FOUND", dt))
            finally:
                for p in procs:
                    p.stop()
        print("all       time/call median %.2f s over %d calls" % (
            statistics.median(all_dts), len(all_dts)))


if __name__ == "__main__":
    main()
