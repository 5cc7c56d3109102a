#!/usr/bin/env python3
"""The Chromium task's app: a one-page shop on 127.0.0.1, shown in Chromium.

It serves apps/shop.html on a port the kernel picks (so parallel tasks never
collide), starts Chromium on it as its child, and writes each order the page
POSTs to order.json in the working directory (the task's workspace), which is
what checks/shop_order.py reads. It ends when Chromium ends.

    python3 shop.py            (cwd = the workspace; DISPLAY and HOME set)
"""
import http.server
import json
import os
import subprocess
import sys
import threading
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
PAGE = open(os.path.join(HERE, "shop.html"), "rb").read()
DONE = (b"<!doctype html><html><head><meta charset=utf-8><title>Order placed</title>"
        b"</head><body style='font:18px sans-serif;margin:40px'><h1>Thank you</h1>"
        b"<p>Your order was placed.</p></body></html>")


class Shop(http.server.BaseHTTPRequestHandler):
    def reply(self, body, status=200):
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/":
            self.reply(PAGE)
        else:
            self.reply(b"not found", 404)

    def do_POST(self):
        if self.path != "/order":
            self.reply(b"not found", 404)
            return
        n = int(self.headers.get("Content-Length") or 0)
        form = urllib.parse.parse_qs(self.rfile.read(n).decode("utf-8"),
                                     keep_blank_values=True)
        order = {k: v[-1] for k, v in form.items()}
        # Written whole, then renamed: the checker never reads half an order.
        with open("order.json.tmp", "w", encoding="utf-8") as f:
            json.dump(order, f)
        os.replace("order.json.tmp", "order.json")
        self.reply(DONE)

    def log_message(self, fmt, *args):
        sys.stderr.write("shop: " + fmt % args + "\n")


def main():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Shop)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = "http://127.0.0.1:%d/" % server.server_address[1]
    home = os.environ.get("HOME", os.getcwd())
    argv = ["chromium", "--user-data-dir=" + os.path.join(home, "chromium"),
            "--no-first-run", "--no-default-browser-check", "--password-store=basic",
            "--disable-features=Translate,MediaRouter", "--noerrdialogs",
            "--disable-session-crashed-bubble", "--window-position=40,40",
            "--window-size=1100,700", "--app=" + url]
    # Chromium refuses to start as root with its own sandbox (containers, CI);
    # --test-type drops the bar that would warn of it on the page.
    if os.geteuid() == 0:
        argv[1:1] = ["--no-sandbox", "--test-type"]
    sys.exit(subprocess.call(argv))


if __name__ == "__main__":
    main()
