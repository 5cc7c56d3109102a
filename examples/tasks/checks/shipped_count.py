#!/usr/bin/env python3
"""Checker of the terminal task: shipped.txt, written by the shell in the
xterm, holds the number of orders whose status is "shipped".

    python3 shipped_count.py ORDERS.csv      (cwd = the task's workspace)

The expected count is computed from the pristine ORDERS.csv (the copy in the
suite, not the workspace's, which the agent could have changed), so the
checker needs no answer written into it. Exit 0: right; 1: wrong or missing.
"""
import csv
import sys


def main():
    with open(sys.argv[1], newline="", encoding="utf-8") as f:
        want = sum(1 for row in csv.DictReader(f) if row["status"] == "shipped")
    try:
        got = open("shipped.txt", encoding="utf-8").read()
    except OSError as e:
        print("shipped.txt was not written: %s" % e)
        return 1
    if got.strip() != str(want):
        print("shipped.txt holds %r; %d orders are shipped" % (got, want))
        return 1
    print("shipped.txt holds %d, the number of shipped orders" % want)
    return 0


if __name__ == "__main__":
    sys.exit(main())
