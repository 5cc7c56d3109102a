#!/usr/bin/python3
"""The comparison for bench/elements: a whole-desktop pyatspi walk as
OSWorld's harness does it (every application, every node to depth 50 and
1,024 children, each asked its role, name, states, attributes, position,
size and text), timed the same way. Written for this benchmark from the
description of that approach; pyatspi comes with python3-pyatspi."""
import statistics
import sys
import time

import pyatspi

MAX_DEPTH, MAX_WIDTH = 50, 1024


def node(acc, depth, count):
    count[0] += 1
    try:
        acc.getRoleName()
        acc.name
        acc.getState().getStates()
        acc.getAttributes()
    except Exception:
        return
    try:
        comp = acc.queryComponent()
        comp.getPosition(pyatspi.XY_SCREEN)
        comp.getSize()
    except NotImplementedError:
        pass
    except Exception:
        pass
    try:
        text = acc.queryText()
        text.getText(0, text.characterCount)
    except NotImplementedError:
        pass
    except Exception:
        pass
    if depth >= MAX_DEPTH:
        return
    try:
        n = min(acc.childCount, MAX_WIDTH)
    except Exception:
        return
    for i in range(n):
        try:
            child = acc.getChildAtIndex(i)
        except Exception:
            continue
        if child is not None:
            node(child, depth + 1, count)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 10
    times, nodes = [], 0
    for _ in range(runs):
        count = [0]
        t0 = time.monotonic()
        node(pyatspi.Registry.getDesktop(0), 0, count)
        times.append((time.monotonic() - t0) * 1000)
        nodes = count[0]
    print("OSWorld-style whole-desktop pyatspi walk: %d nodes; first %.1f ms; then median "
          "%.1f ms (min %.1f, max %.1f, %d runs)" % (nodes, times[0],
                                                     statistics.median(times[1:]),
                                                     min(times[1:]), max(times[1:]), runs - 1))


main()
