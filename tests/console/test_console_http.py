"""The console's security, tried as an attacker would, over plain HTTP
(http.client sends exactly the headers given): issue 14's list, one test
per point, each failing without its defence.

A real deskhand runs with --console 0 against the fake model; the model
proposes code, so a question stays open for the answer tests."""
import http.client
import json
import os
import re
import socket
import subprocess
import time
import unittest

import harness as h
from consolelib import (Agent, Events, FakeLLM, call, login, post, request,
                        stalled_stream, token_of)
from agentlib import Held
from trickle import Trickle, closed_by_server

MARK = os.path.join(h.tmpdir(), "ran")


def code_turns(n=1, mark=MARK):
    turns = []
    for i in range(n):
        turns.append({"tool_calls": [call("execute", language="python",
                                          code="open(%r, 'a').write('x')" % mark)]})
    turns.append({"text": "done"})
    return turns


def setUpModule():
    global SRV, A
    SRV = FakeLLM(code_turns(3))
    SRV.start()
    A = Agent(SRV)


def tearDownModule():
    A.stop()
    SRV.stop()


class Auth(unittest.TestCase):
    """Tokens, cookies, the Host allowlist."""

    def test_no_token_is_401(self):
        for path in ("/", "/api/events", "/api/state", "/frame.png", "/console.js"):
            st, _, _ = request(A.port, "GET", path)
            self.assertEqual(st, 401, path)

    def test_wrong_token_is_401(self):
        with FakeLLM(code_turns()) as srv:
            a = Agent(srv)
            try:
                good = token_of(a.approver)
                flip = lambda c: "0" if c != "0" else "1"  # noqa: E731
                for bad in (good[:-1] + flip(good[-1]), flip(good[0]) + good[1:], good[:-1],
                            good + "0"):
                    st, hd, _ = request(a.port, "GET", "/?t=" + bad)
                    self.assertEqual(st, 401, bad)
                    self.assertNotIn("set-cookie", hd)
                # None of them was taken for it: the right one still works, once.
                st, _, _ = request(a.port, "GET", "/?t=" + good)
                self.assertEqual(st, 303)
            finally:
                a.stop()

    def test_token_once_then_cookie_and_redirect(self):
        with FakeLLM(code_turns()) as srv:
            a = Agent(srv)
            try:
                st, hd, _ = request(a.port, "GET", "/?t=" + token_of(a.approver))
                self.assertEqual(st, 303)
                self.assertEqual(hd["location"], "/")
                attrs = [x.strip() for x in hd["set-cookie"].split(";")]
                self.assertRegex(attrs[0], r"^dh_s=[0-9a-f]{32}$")
                self.assertIn("HttpOnly", attrs)
                self.assertIn("SameSite=Strict", attrs)
                self.assertIn("Path=/", attrs)
                self.assertNotIn(token_of(a.approver), attrs[0])
                # The cookie works; the link does not work twice.
                st, _, body = request(a.port, "GET", "/api/state", {"Cookie": attrs[0]})
                self.assertEqual((st, json.loads(body)["role"]), (200, "approver"))
                st, hd, _ = request(a.port, "GET", "/?t=" + token_of(a.approver))
                self.assertEqual(st, 401)
                self.assertNotIn("set-cookie", hd)
                # A guessed cookie is nobody.
                st, _, _ = request(a.port, "GET", "/api/state", {"Cookie": "dh_s=" + "a" * 32})
                self.assertEqual(st, 401)
            finally:
                a.stop()

    def test_bad_tokens_are_rate_limited(self):
        with FakeLLM(code_turns()) as srv:
            a = Agent(srv)
            try:
                codes = [request(a.port, "GET", "/?t=" + "f" * 32)[0] for _ in range(12)]
                self.assertIn(429, codes)
                self.assertEqual(codes[:5], [401] * 5)
                # While limited, even the right token waits: no guessing at speed.
                st, _, _ = request(a.port, "GET", "/?t=" + token_of(a.approver))
                self.assertEqual(st, 429)
            finally:
                a.stop()

    def test_forged_host_is_403(self):
        cookie, _ = SESSION
        for host in ("evil.example:%d" % A.port, "127.0.0.1:%d" % (A.port + 1),
                     "127.0.0.1", "attacker.localhost:%d" % A.port, ""):
            st, _, _ = request(A.port, "GET", "/api/state", {"Cookie": cookie}, host=host)
            self.assertEqual(st, 403, host)
        for host in ("127.0.0.1:%d" % A.port, "localhost:%d" % A.port, "[::1]:%d" % A.port):
            st, _, _ = request(A.port, "GET", "/api/state", {"Cookie": cookie}, host=host)
            self.assertEqual(st, 200, host)

    def test_tokens_and_cookies_never_logged(self):
        cookie, csrf = SESSION
        secrets = [token_of(A.approver), token_of(A.observer), cookie.split("=")[1], csrf]
        for path in (A.run.audit, A.run.audit + ".head", A.run.conv):
            if os.path.exists(path):
                with open(path) as f:
                    text = f.read()
                for s in secrets:
                    self.assertNotIn(s, text, path)
        for s in secrets[2:]:
            self.assertNotIn(s, A.stdout() + A.stderr())
        # The links are in the 0600 file beside the log, for this user only.
        self.assertEqual(os.stat(A.file).st_mode & 0o777, 0o600)

    def test_comparisons_are_constant_time(self):
        # Read from the source: every secret is compared by same_secret(),
        # which is base's comparison that looks at every byte; no
        # strcmp/memcmp touches one.
        with open(os.path.join(h.SRCDIR, "agent", "console", "http.c")) as f:
            src = f.read()
        with open(os.path.join(h.SRCDIR, "base", "secret.c")) as f:
            base = f.read()
        mine = src[src.index("static bool same_secret"):]
        self.assertIn("return base_same_secret(a, b, CONSOLE_TOKEN_HEX);",
                      mine[:mine.index("\n}\n")])
        body = base[base.index("bool base_same_secret"):]
        body = body[:body.index("\n}\n")]
        self.assertIn("diff |=", body)
        self.assertNotIn("return false;\n\t}", body.split("for (")[1])
        for bad in re.findall(r"(?:strcmp|memcmp|strncmp)\(([^()]*)\)", src):
            self.assertNotRegex(bad, r"token|csrf|->id|\.id|cookie", bad)


class StateChanges(unittest.TestCase):
    """POST + JSON + exact Origin + CSRF header bound to the session and role."""

    def test_get_on_a_state_changing_path_is_405(self):
        cookie, csrf = SESSION
        for path in ("/api/answer", "/api/control"):
            st, hd, _ = request(A.port, "GET", path, {"Cookie": cookie, "X-Deskhand-CSRF": csrf,
                                                      "Origin": A.origin})
            self.assertEqual(st, 405, path)
            self.assertEqual(hd.get("allow"), "POST")

    def test_forged_origin_is_403(self):
        cookie, csrf = SESSION
        for origin in ("http://evil.example", "http://127.0.0.1:%d" % (A.port + 1),
                       "null", "https://127.0.0.1:%d" % A.port, A.origin + "/", ""):
            st, _, _ = post(A, "/api/control", cookie, csrf, {"action": "pause"}, origin=origin)
            self.assertEqual(st, 403, origin)
        # No Origin at all is refused too.
        st, _, _ = request(A.port, "POST", "/api/control",
                           {"Cookie": cookie, "X-Deskhand-CSRF": csrf,
                            "Content-Type": "application/json"}, json.dumps({"action": "pause"}))
        self.assertEqual(st, 403)
        self.assertNotIn("pause", [e.get("what") for e in events_now()])

    def test_csrf_header_is_bound_to_the_session(self):
        cookie, csrf = SESSION
        ocookie, ocsrf = OBSERVER
        for bad in ("", "0" * 32, ocsrf, csrf[:-1]):
            st, _, _ = post(A, "/api/control", cookie, bad, {"action": "pause"})
            self.assertEqual(st, 403, bad)
        st, _, _ = request(A.port, "POST", "/api/control",
                           {"Cookie": cookie, "Origin": A.origin,
                            "Content-Type": "application/json"}, json.dumps({"action": "pause"}))
        self.assertEqual(st, 403)

    def test_observer_cannot_answer_or_control(self):
        ocookie, ocsrf = OBSERVER
        for path, body in (("/api/answer", {"qid": 1, "answer": "y"}),
                           ("/api/control", {"action": "stop"})):
            st, _, _ = post(A, path, ocookie, ocsrf, body)
            self.assertEqual(st, 403, path)
        self.assertFalse(os.path.exists(MARK))

    def test_only_json_bodies(self):
        cookie, csrf = SESSION
        for ctype in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data",
                      "application/jsonp"):
            st, _, _ = post(A, "/api/control", cookie, csrf, {"action": "pause"},
                            headers={"Content-Type": ctype})
            self.assertEqual(st, 415, ctype)

    def test_oversized_body_is_413(self):
        cookie, csrf = SESSION
        big = {"action": "pause", "pad": "x" * (64 * 1024)}
        st, _, _ = post(A, "/api/control", cookie, csrf, big)
        self.assertEqual(st, 413)
        # Without a Content-Length (chunked): counted as it comes.
        c = socket.create_connection(("127.0.0.1", A.port))
        head = ("POST /api/control HTTP/1.1\r\nHost: %s\r\nCookie: %s\r\nX-Deskhand-CSRF: %s\r\n"
                "Origin: %s\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                % (A.host, cookie, csrf, A.origin))
        c.sendall(head.encode())
        chunk = b"x" * 8192
        try:
            for _ in range(12):
                c.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            c.sendall(b"0\r\n\r\n")
        except OSError:
            pass
        reply = c.recv(4096)
        c.close()
        self.assertTrue(reply.startswith(b"HTTP/1.1 413"), reply[:40])

    def test_too_many_headers(self):
        cookie, _ = SESSION
        hd = {"Cookie": cookie}
        hd.update({"X-Pad-%d" % i: "1" for i in range(60)})
        st, _, _ = request(A.port, "GET", "/api/state", hd)
        self.assertEqual(st, 431)

    def test_nothing_switches_on_auto_approve(self):
        cookie, csrf = SESSION
        for body in ({"action": "os_auto_approve"}, {"action": "%os_auto_approve true"},
                     {"action": "auto_run"}, {"action": "-y"}, {"auto_run": True}):
            st, _, _ = post(A, "/api/control", cookie, csrf, body)
            self.assertEqual(st, 400, body)
        st, _, _ = post(A, "/api/answer", cookie, csrf, {"qid": 1, "answer": "a"})
        self.assertEqual(st, 400)
        sessions = [e for e in A.run.audit_events() if e["event"] in ("session", "setting")]
        self.assertEqual([e["event"] for e in sessions], ["session"])
        self.assertFalse(sessions[0]["settings"]["os_auto_approve"])
        self.assertFalse(sessions[0]["settings"]["auto_run"])


class Answers(unittest.TestCase):
    """First answer wins; the end of the terminal's input only silences the terminal."""

    def test_terminal_first_then_the_console_is_told_and_refused(self):
        mark = os.path.join(h.tmpdir(), "ran")
        held = Held({"text": "done"})
        turns = code_turns(mark=mark)[:1] + [held]
        with FakeLLM(turns) as srv:
            a = Agent(srv)
            try:
                cookie, csrf = login(a)
                ev = Events(a, cookie)
                q = ev.question()
                a.say("n")
                done = ev.wait(lambda e: e.get("type") == "answered")
                self.assertEqual((done[0]["who"], done[0]["answer"], done[0]["qid"]),
                                 ("terminal", "no", q["qid"]))
                # The model is held: the same question, answered already, is refused.
                self.assertTrue(srv.wait_requests(2, 30))
                st, _, body = post(a, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
                self.assertEqual(st, 409, body)
                held.release()
                self.assertEqual(a.wait(60), 0, a.stderr())
                ev.close()
                self.assertFalse(os.path.exists(mark))
                denied = [e for e in a.run.audit_events() if e["event"] == "denied"]
                self.assertEqual([e.get("from") for e in denied], ["terminal"])
            finally:
                held.release()
                a.stop()

    def test_console_first_then_the_terminal_line_is_not_the_answer(self):
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark=mark)) as srv:
            a = Agent(srv)
            try:
                cookie, csrf = login(a)
                ev = Events(a, cookie)
                q = ev.question()
                st, _, _ = post(a, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
                self.assertEqual(st, 200)
                self.assertEqual(a.wait(60), 0, a.stderr())
                ev.close()
                self.assertTrue(os.path.exists(mark))
                self.assertIn("answered in the console:approver: yes", a.stderr())
                approved = [e for e in a.run.audit_events() if e["event"] == "approved"]
                self.assertEqual([e.get("from") for e in approved], ["console:approver"])
            finally:
                a.stop()

    def test_end_of_input_waits_for_the_console(self):
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark=mark)) as srv:
            a = Agent(srv)
            try:
                cookie, csrf = login(a)
                ev = Events(a, cookie)
                q = ev.question()
                a.close_stdin()
                self.assertTrue(h.wait_for(lambda: "waits for an answer in the console"
                                           in a.stderr(), 30), a.stderr())
                self.assertIsNone(a.proc.poll())
                st, _, _ = post(a, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
                self.assertEqual(st, 200)
                self.assertEqual(a.wait(60), 0, a.stderr())
                ev.close()
                self.assertTrue(os.path.exists(mark))
            finally:
                a.stop()

    def test_without_a_console_end_of_input_is_still_no(self):
        mark = os.path.join(h.tmpdir(), "ran")
        from agentlib import Run
        with FakeLLM(code_turns(mark=mark)) as srv:
            r = Run()
            p = r.run(srv, "openai", "-m", "go", input=b"")
            self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(os.path.exists(mark))
        denied = [e for e in r.audit_events() if e["event"] == "denied"]
        self.assertEqual([e["by"] for e in denied], ["no-answer"])


class Headers(unittest.TestCase):
    def test_every_response_has_the_security_headers(self):
        cookie, _ = SESSION
        for path, hd in (("/", {"Cookie": cookie}), ("/console.js", {"Cookie": cookie}),
                         ("/api/state", {"Cookie": cookie, "Origin": "http://evil.example"}),
                         ("/", {}), ("/?t=" + "0" * 32, {})):
            st, got, _ = request(A.port, "GET", path, hd)
            csp = got.get("content-security-policy", "")
            self.assertIn("frame-ancestors 'none'", csp, path)
            self.assertIn("default-src 'self'", csp, path)
            self.assertNotIn("unsafe-inline", csp)
            self.assertEqual(got.get("x-content-type-options"), "nosniff", path)
            self.assertEqual(got.get("cache-control"), "no-store", path)
            self.assertFalse([k for k in got if k.startswith("access-control-")], path)

    def test_the_page_has_no_inline_script_and_no_cdn(self):
        cookie, _ = SESSION
        st, hd, body = request(A.port, "GET", "/", {"Cookie": cookie})
        self.assertEqual(st, 200)
        page = body.decode()
        self.assertEqual(re.findall(r"<script(?![^>]*\bsrc=)[^>]*>", page), [])
        self.assertNotRegex(page, r"\son[a-z]+\s*=")
        self.assertNotRegex(page, r"(?:src|href)=\"(?:https?:)?//")
        st, hd, js = request(A.port, "GET", "/console.js", {"Cookie": cookie})
        self.assertEqual(hd["content-type"].split(";")[0], "text/javascript")
        self.assertNotIn(b"innerHTML", js)
        self.assertLess(len(page) + len(js), 64 * 1024)


class Binding(unittest.TestCase):
    def test_loopback_by_default(self):
        with open("/proc/net/tcp") as f:
            rows = [l.split() for l in f.read().splitlines()[1:]]
        mine = [r for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == A.port]
        self.assertEqual([r[1].split(":")[0] for r in mine], ["0100007F"])

    def test_non_loopback_needs_allow_remote(self):
        ip = local_address()
        from agentlib import Run
        with FakeLLM(code_turns()) as srv:
            for listen in (ip + ":0", "0.0.0.0:0"):
                r = Run()
                p = h.run(r.args(srv, "openai", "--console", listen, "-m", "go"),
                          env=r.env(), input=b"", timeout=60)
                self.assertNotEqual(p.returncode, 0, listen)
                self.assertIn(b"--console-allow-remote" if listen != "0.0.0.0:0" else b"wildcard",
                              p.stderr)
            self.assertFalse(os.path.exists(MARK))
            a = Agent(srv, flags=("--console-allow-remote",), listen=ip + ":0")
            try:
                self.assertIn("TLS", a.stderr())
                self.assertIn("non-loopback", a.stderr())
                self.assertIn("http://%s:%d/" % (ip, a.port), a.approver)
                # Reached at that address, named by it in Host.
                c = http.client.HTTPConnection(ip, a.port, timeout=30)
                c.request("GET", "/?t=" + token_of(a.approver),
                          headers={"Host": "%s:%d" % (ip, a.port)})
                self.assertEqual(c.getresponse().status, 303)
                c.close()
            finally:
                a.stop()


def local_address():
    """This machine's address on its default route (no packet is sent)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.123", 9))
        ip = s.getsockname()[0]
    except OSError:
        ip = None
    finally:
        s.close()
    if ip is None or ip.startswith("127."):
        raise unittest.SkipTest("no non-loopback address on this machine")
    return ip


class Limits(unittest.TestCase):
    def test_slow_clients_cannot_stall_the_agent(self):
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark=mark)) as srv:
            a = Agent(srv)
            slow = []
            try:
                # Connections that never finish their headers, up to and past the limit.
                for _ in range(60):
                    try:
                        s = socket.create_connection(("127.0.0.1", a.port), timeout=5)
                        s.sendall(b"GET / HTTP/1.1\r\nHost: x")
                        slow.append(s)
                    except OSError:
                        break
                self.assertTrue(h.wait_for(lambda: "Run this code?" in a.stdout(), 30))
                a.say("y")
                self.assertEqual(a.wait(60), 0, a.stderr())
                self.assertTrue(os.path.exists(mark))
            finally:
                for s in slow:
                    s.close()
                a.stop()

    def test_trickling_strangers_cannot_lock_the_approver_out(self):
        """Slowloris: 60 connections whose headers never end, each sending a
        byte every second (the idle timeout never fires). Before, the first
        48 held every slot and the approver's page could not get in."""
        mark = os.path.join(h.tmpdir(), "ran")
        with FakeLLM(code_turns(mark=mark)) as srv:
            a = Agent(srv)
            trickle = Trickle(a.port, 60)
            try:
                self.assertTrue(h.wait_for(lambda: "Run this code?" in a.stdout(), 30))
                time.sleep(1.5)
                cookie, csrf = login(a)
                q = Events(a, cookie).question()
                st, _, _ = post(a, "/api/answer", cookie, csrf, {"qid": q["qid"], "answer": "y"})
                self.assertEqual(st, 200)
                self.assertEqual(a.wait(60), 0, a.stderr())
                self.assertTrue(os.path.exists(mark))
            finally:
                trickle.stop()
                a.stop()

    def test_a_stranger_holds_its_connection_for_ten_seconds_however_it_trickles(self):
        with FakeLLM([{"text": "done"}]) as srv:
            a = Agent(srv, message=None)
            trickle = Trickle(a.port, 4)
            try:
                time.sleep(11)
                # The next connection sweeps: each of the four is past its time.
                extra = socket.create_connection(("127.0.0.1", a.port), timeout=5)
                self.assertTrue(h.wait_for(lambda: all(map(closed_by_server, trickle.socks)), 10),
                                "a trickling stranger kept its connection past 10 s")
                self.assertEqual(login(a)[0][:5], "dh_s=")
                extra.close()
            finally:
                trickle.stop()
                a.stop()

    def test_a_stream_that_stops_reading_is_dropped_and_memory_stays_bounded(self):
        big = "<b>x</b>" * (256 * 1024)  # 2 MiB of model text in one event
        turns = [{"text": big}, {"tool_calls": [call("execute", language="python", code="1")]},
                 {"text": "done"}]
        with FakeLLM(turns) as srv:
            a = Agent(srv, message=None)
            socks = []
            try:
                cookie, _ = login(a, approver=False)
                for _ in range(10):
                    socks.append(stalled_stream(a, cookie))
                rss0 = rss(a.proc.pid)
                a.say("talk")
                # Each stalled stream holds at most what one event needs.
                self.assertTrue(h.wait_for(lambda: all(close_wait(x) for x in socks), 90),
                                "the stalled streams were not dropped")
                self.assertLess(rss(a.proc.pid) - rss0, 64 * 1024)  # KiB
            finally:
                for s in socks:
                    s.close()
                a.stop()


def rss(pid):
    with open("/proc/%d/status" % pid) as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def close_wait(sock):
    """Whether the server closed this connection: its end is no longer
    ESTABLISHED (FIN-WAIT-1 while our full window keeps its FIN out, or gone)."""
    ours = sock.getsockname()[1]
    server = sock.getpeername()[1]
    with open("/proc/net/tcp") as f:
        for l in f.read().splitlines()[1:]:
            r = l.split()
            if int(r[1].split(":")[1], 16) == server and int(r[2].split(":")[1], 16) == ours:
                return r[3] != "01"
    return True


def events_now():
    """The timeline as a new page replays it (all at once, in order)."""
    cookie, _ = SESSION
    ev = Events(A, cookie)
    ev.wait(lambda e: e.get("type") == "question", 30)
    ev.close()
    return list(ev.events)


SESSION = OBSERVER = None


def _login():
    global SESSION, OBSERVER
    SESSION = login(A)
    OBSERVER = login(A, approver=False)


_setup = setUpModule


def setUpModule():  # noqa: F811
    _setup()
    _login()


if __name__ == "__main__":
    h.main()
