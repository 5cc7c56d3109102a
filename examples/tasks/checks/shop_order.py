#!/usr/bin/env python3
"""Checker of the Chromium task: the order the page POSTed to its server.
apps/shop.py serves the page and writes each order it receives to
order.json in the workspace; only a form really submitted by the browser
gets there.

    python3 shop_order.py                     (cwd = the task's workspace)
"""
import json
import sys

WANT = {"item": "blue-mug", "quantity": "3"}


def main():
    try:
        order = json.load(open("order.json", encoding="utf-8"))
    except (OSError, ValueError) as e:
        print("no order reached the shop: %s" % e)
        return 1
    got = {k: str(order.get(k, "")).strip() for k in WANT}
    if got != WANT:
        print("the shop received %r; expected %r" % (order, WANT))
        return 1
    print("the shop received the order %r" % (order,))
    return 0


if __name__ == "__main__":
    sys.exit(main())
