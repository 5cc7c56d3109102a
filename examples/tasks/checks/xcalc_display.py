#!/usr/bin/env python3
"""Checker of the calculator task: the number on xcalc's display.

xcalc (Debian's x11-apps) has no file and no API, but its display can be
selected: a click on the display runs its selection() action, and xcalc
then owns the PRIMARY selection, whose text is the whole number shown
(xcalc(1), "the entire number in the calculator display can be selected").
So this checker asks the running calculator itself, on the task's display:

  1. finds the xcalc window (xdotool search --class XCalc);
  2. finds its display, the widest short window in its top part
     (xwininfo -tree: Xaw widgets are X windows), and clicks its middle;
  3. reads PRIMARY (xclip -o) and compares the number.

A click toggles the selection, so when the first read finds nothing (the
agent had clicked the display already) it clicks once more.

    python3 xcalc_display.py EXPECTED         (DISPLAY = the task's display)
"""
import re
import subprocess
import sys
import time

GEOM = re.compile(r"(\d+)x(\d+)[+-]-?\d+[+-]-?\d+\s+\+(-?\d+)\+(-?\d+)")


def run(*argv):
    return subprocess.run(argv, capture_output=True, text=True, timeout=10)


def display_window(win):
    """(x, y, w, h) on the screen of xcalc's display, or None."""
    top = GEOM.search(run("xwininfo", "-id", win, "-stats").stdout.replace("\n", " "))
    tree = run("xwininfo", "-tree", "-id", win).stdout
    boxes = [tuple(map(int, m.groups())) for m in GEOM.finditer(tree)]
    if not boxes:
        return None
    # The top-level box is the first; the display is in its upper quarter.
    _, wh, _, wy = boxes[0]
    cands = [(w, h, x, y) for (w, h, x, y) in boxes[1:]
             if h <= 30 and y < wy + wh / 4]
    if not cands:
        return None
    w, h, x, y = max(cands)
    return x, y, w, h


def primary():
    r = run("xclip", "-o", "-selection", "primary")
    return r.stdout.strip() if r.returncode == 0 else None


def main():
    want = float(sys.argv[1])
    found = run("xdotool", "search", "--onlyvisible", "--class", "XCalc").stdout.split()
    if not found:
        print("no xcalc window on the display")
        return 1
    win = found[0]
    box = display_window(win)
    if box is None:
        print("xcalc's display was not found in its window tree")
        return 1
    x, y, w, h = box
    run("xdotool", "windowraise", win)
    text = None
    for _ in range(2):
        run("xdotool", "mousemove", str(x + w // 2), str(y + h // 2), "click", "1")
        time.sleep(0.3)
        text = primary()
        if text:
            break
    if not text:
        print("xcalc did not give its display's number (PRIMARY is empty)")
        return 1
    try:
        got = float(text)
    except ValueError:
        print("xcalc's display shows %r, not a number" % text)
        return 1
    if abs(got - want) > 1e-9 * max(1.0, abs(want)):
        print("xcalc's display shows %s; expected %s" % (text, sys.argv[1]))
        return 1
    print("xcalc's display shows %s" % text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
