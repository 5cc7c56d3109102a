"""A whole supervised task from Chromium (issue 14's browser tests): the
real deskhand on a private Xvfb with the recording client, the fake model,
and Debian's chromium driven by playwright-core. Watch, approve, deny,
edit, pause, take over, stop; the observer cannot answer; a reload keeps
the timeline; another local page cannot act; hostile text stays text."""
import http.server
import json
import os
import threading
import unittest

import harness as h
import xinput_util as xi
from consolelib import Agent, Browser, FakeLLM, browser_missing, call, check_audit

MISSING = browser_missing()
# CI installs the browser (.ci/install-deps): there a missing one is a
# failure, not a skip that would let the browser tests pass unseen.
if MISSING and os.environ.get("DESKHAND_REQUIRE_BROWSER"):
    raise SystemExit("Bail out! the browser tests cannot run: " + MISSING)


def setUpModule():
    global X, B
    X = h.Xvfb(1280, 800)
    B = Browser() if MISSING is None else None


def tearDownModule():
    if B is not None:
        B.stop()
    X.stop()


def click(x, y):
    return {"tool_calls": [call("computer", action="left_click", coordinate=[x, y])]}


def presses(evs):
    return [(e["x"], e["y"]) for e in evs if e["kind"] == "press" and e["button"] == "1"]


QUESTION_OPEN = ("document.getElementById('question').hidden === false && "
                 "!document.getElementById('q-y').disabled")


def timeline_texts(page):
    return B.eval(page, "[...document.querySelectorAll('#timeline li')].map(l => l.textContent)")


@unittest.skipIf(MISSING, MISSING)
class Supervise(unittest.TestCase):
    def setUp(self):
        xi.deskhand(X, "move", 640, 400)  # away from the kill switch's corners
        self.rec = xi.Recorder(X)
        xi.marker(self.rec, X, 101)
        self.rec.reset()
        self.agent = None
        self.srv = None
        self.n = getattr(Supervise, "n", 0) + 1
        Supervise.n = self.n

    def tearDown(self):
        if self.agent is not None:
            self.agent.stop()
        if self.srv is not None:
            self.srv.stop()
        self.rec.stop()

    def start(self, turns, page="p", open_page=True):
        """The agent, idle at its prompt; the approver's page open; the task sent."""
        self.srv = FakeLLM(turns)
        self.srv.start()
        self.agent = Agent(self.srv, X=X, message=None)
        self.page = "%s%d" % (page, self.n)
        if open_page:
            r = B.do("open", page=self.page, url=self.agent.approver)
            # The token was swapped for a cookie and left the address bar.
            self.assertEqual(r["url"], "http://127.0.0.1:%d/" % self.agent.port)
            B.wait(self.page, "document.body.dataset.role === 'approver'")
        return self.agent

    def answer(self, key, after=0):
        B.wait(self.page, QUESTION_OPEN + " && +document.getElementById('question').dataset.qid > %d"
               % after)
        qid = int(B.eval(self.page, "document.getElementById('question').dataset.qid"))
        B.do("click", page=self.page, sel="#q-" + key)
        return qid

    def control_seen(self, what):
        """The page's control reached the agent before the next click: two
        fetches from one page may arrive in either order, and an answer
        that overtook the pause let the agent past the hold."""
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')].some("
               "l => l.textContent === 'Control: %s')" % what)

    def settled(self):
        return xi.marker(self.rec, X, 202)

    def test_live_screen_changes_when_a_window_opens(self):
        self.rec.stop()
        self.start([{"text": "done"}])
        seq = B.wait(self.page, "+document.getElementById('screen').dataset.seq || 0")
        self.assertGreaterEqual(seq, 1)
        # The pointer is drawn over the frame.
        B.wait(self.page, "!document.getElementById('pointer').hidden")
        self.rec = xi.Recorder(X)  # a full-screen window maps: the screen changes
        newer = B.wait(self.page, "+document.getElementById('screen').dataset.seq > %d && "
                       "+document.getElementById('screen').dataset.seq" % seq)
        self.assertGreater(newer, seq)
        w = B.eval(self.page, "document.getElementById('screen').naturalWidth")
        self.assertEqual(w, 1280)

    def test_approve_and_the_click_arrives(self):
        a = self.start([click(100, 100), {"text": "done"}])
        a.say("go")
        self.answer("y")
        evs = self.rec.wait_events(lambda evs: presses(evs))
        self.assertEqual(presses(evs), [("100", "100")])
        B.wait(self.page, "document.getElementById('q-who').textContent.includes("
               "'by console:approver')")
        # The terminal was told who answered; the log says where.
        self.assertTrue(h.wait_for(lambda: "answered in the console:approver" in a.stderr(), 20))
        approved = [e for e in a.run.audit_events() if e["event"] == "approved"]
        self.assertEqual([e.get("from") for e in approved], ["console:approver"])
        # The target was marked on the live screen while asked.
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')].some("
               "l => l.textContent.startsWith('executed'))")
        a.close_stdin()
        self.assertEqual(a.wait(60), 0, a.stderr())
        check_audit(self, a.run.audit_events())

    def test_deny_and_nothing_arrives(self):
        a = self.start([click(100, 100), {"text": "done"}])
        a.say("go")
        self.answer("n")
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')].some("
               "l => l.textContent.startsWith('denied'))")
        a.close_stdin()
        self.assertEqual(a.wait(60), 0, a.stderr())
        self.assertEqual(presses(self.settled()), [])
        denied = [e for e in a.run.audit_events() if e["event"] == "denied"]
        self.assertEqual([(e["by"], e.get("from")) for e in denied], [("user", "console:approver")])

    def test_edit_then_approve(self):
        a = self.start([click(100, 100), {"text": "done"}])
        a.say("go")
        B.wait(self.page, QUESTION_OPEN)
        qid = int(B.eval(self.page, "document.getElementById('question').dataset.qid"))
        B.do("click", page=self.page, sel="#q-e")
        B.do("fill", page=self.page, sel="#q-edit-text",
             text=json.dumps({"action": "left_click", "coordinate": [300, 200]}))
        B.do("click", page=self.page, sel="#q-edit-send")
        # The edited action is a new proposal, asked again.
        B.wait(self.page, "document.getElementById('q-body').textContent.includes('300')")
        self.answer("y", after=qid)
        evs = self.rec.wait_events(lambda evs: presses(evs))
        self.assertEqual(presses(evs), [("300", "200")])
        a.close_stdin()
        self.assertEqual(a.wait(60), 0, a.stderr())
        proposed = [e for e in a.run.audit_events() if e["event"] == "proposed"]
        self.assertEqual(len(proposed), 2)
        check_audit(self, a.run.audit_events())

    def test_take_over_and_resume(self):
        a = self.start([click(100, 100), click(500, 500), {"text": "done"}])
        a.say("go")
        B.wait(self.page, QUESTION_OPEN)
        B.do("click", page=self.page, sel="#takeover")
        self.control_seen("takeover")
        self.answer("y")
        self.rec.wait_events(lambda evs: presses(evs))
        # The agent holds before its next action while the human drives.
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')].some("
               "l => l.textContent === 'Control: held')")
        r = xi.deskhand(X, "click", 700, 300)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.rec.wait_events(lambda evs: ("700", "300") in presses(evs))
        B.do("click", page=self.page, sel="#resume")
        self.assertTrue(self.srv.wait_requests(3, 60))
        a.close_stdin()
        self.assertEqual(a.wait(60), 0, a.stderr())
        # Its second action never ran; the model was told and shown the screen.
        self.assertEqual(presses(self.settled()), [("100", "100"), ("700", "300")])
        body = json.dumps(self.srv.requests[2]["body"])
        self.assertIn("took over the desktop", body)
        self.assertIn("image", body)

    def test_pause_resume_and_stop(self):
        a = self.start([click(100, 100), click(500, 500), {"text": "done"}])
        a.say("go")
        B.wait(self.page, QUESTION_OPEN)
        B.do("click", page=self.page, sel="#pause")
        self.control_seen("pause")
        qid = self.answer("y")
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')].some("
               "l => l.textContent === 'Control: held')")
        B.do("click", page=self.page, sel="#resume")
        B.wait(self.page, QUESTION_OPEN + " && +document.getElementById('question').dataset.qid > %d"
               % qid)
        B.do("click", page=self.page, sel="#stop")
        B.wait(self.page, "document.getElementById('q-who').textContent.includes('stop')")
        a.close_stdin()
        a.wait(60)
        self.assertEqual(presses(self.settled()), [("100", "100")])
        self.assertIn("interrupted", a.stderr())

    def test_observer_cannot_answer(self):
        a = self.start([click(100, 100), {"text": "done"}])
        obs = "o%d" % self.n
        B.do("open", page=obs, url=a.observer)
        B.wait(obs, "document.body.dataset.role === 'observer'")
        a.say("go")
        B.wait(obs, "document.getElementById('question').hidden === false")
        self.assertEqual(B.eval(obs, "getComputedStyle(document.getElementById('q-buttons'))"
                                     ".display"), "none")
        self.assertEqual(B.eval(obs, "getComputedStyle(document.querySelector('.controls'))"
                                     ".display"), "none")
        # Even by hand, with its own CSRF token, it is refused.
        status = B.eval(obs, """(async () => {
            const s = await (await fetch('/api/state')).json();
            const qid = +document.getElementById('question').dataset.qid;
            const r = await fetch('/api/answer', {method: 'POST', headers: {
                'Content-Type': 'application/json', 'X-Deskhand-CSRF': s.csrf},
                body: JSON.stringify({qid, answer: 'y'})});
            return r.status; })()""")
        self.assertEqual(status, 403)
        self.answer("n")
        B.wait(obs, "document.getElementById('q-who').textContent.includes('by console:approver')")
        self.assertEqual(presses(self.settled()), [])

    def test_reload_keeps_the_timeline(self):
        a = self.start([click(100, 100), {"text": "all done"}])
        a.say("go")
        self.answer("y")
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')].some("
               "l => l.textContent === 'Model: all done')")
        before = timeline_texts(self.page)
        B.do("reload", page=self.page)
        B.wait(self.page, "document.querySelectorAll('#timeline li').length >= %d" % len(before))
        self.assertEqual(timeline_texts(self.page), before)
        self.assertIn("Task: go", before)

    def test_another_local_page_cannot_act(self):
        a = self.start([click(100, 100), {"text": "done"}])
        evil = EvilSite(a.port)
        try:
            a.say("go")
            B.wait(self.page, QUESTION_OPEN)
            qid = int(B.eval(self.page, "document.getElementById('question').dataset.qid"))
            # Same site as the console (127.0.0.1, another port): the cookie goes along.
            ev = "e%d" % self.n
            B.do("open", page=ev, url=evil.url, **{"with": self.page})
            result = B.wait(ev, "window.results && window.results.length === 3 && window.results")
            self.assertEqual(result[0], "blocked", result)       # CORS preflight refused
            self.assertIn(result[1], ("blocked", "opaque"), result)  # simple POST: no effect
            self.assertEqual(result[2], "blocked", result)       # reading state: no CORS
            self.assertTrue(evil.hits, "the attack page did not load")
            # Nothing happened: the question is still open, nothing paused or stopped.
            self.assertEqual(int(B.eval(self.page,
                             "document.getElementById('question').dataset.qid")), qid)
            self.assertFalse([t for t in timeline_texts(self.page) if t.startswith("Control:")])
            self.answer("n")
        finally:
            evil.stop()
        self.assertEqual(presses(self.settled()), [])

    def test_hostile_text_stays_text(self):
        xss = "<img src=x onerror=\"document.title='pwned'\"><script>document.title='pwned'</script>"
        turns = [{"text": "hello " + xss, "tool_calls": [call(
            "execute", language="python", code="print(1) # </pre>" + xss)]}, {"text": "ok"}]
        a = self.start(turns)
        a.say("go " + xss)
        B.wait(self.page, QUESTION_OPEN)
        # The timeline is rebuilt from the start whenever the page's stream
        # reconnects (seen once under a loaded full run: empty when the
        # question was already open): wait for its entries, then read them.
        B.wait(self.page, "[...document.querySelectorAll('#timeline li')]"
                          ".some(l => l.textContent.includes('</pre><img src=x'))")
        texts = timeline_texts(self.page)
        self.assertTrue([t for t in texts if t.startswith("Task: go <img")], texts)
        self.assertTrue([t for t in texts if "</pre><img src=x" in t], texts)
        self.assertIn(xss, B.eval(self.page, "document.getElementById('q-body').textContent"))
        self.assertEqual(B.eval(self.page, "document.querySelectorAll('main img, main script')"
                                           ".length"), 1)  # only the live screen
        self.assertNotEqual(B.eval(self.page, "document.title"), "pwned")
        self.answer("n")

    def test_details_with_a_hostile_window_title(self):
        title = "<img src=x onerror=\"document.title='pwned'\">"
        term = xi.Xterm(X, title=title)  # at 0,0: the click below aims at it
        try:
            a = self.start([click(100, 100), {"text": "done"}])
            a.say("go")
            qid = self.answer("d")
            # The details reach the page too, and the same proposal is asked again.
            B.wait(self.page, QUESTION_OPEN + " && +document.getElementById('question')"
                   ".dataset.qid > %d" % qid)
            details = B.wait(self.page, "document.getElementById('q-details').textContent")
            self.assertIn("window:", details)
            self.assertIn(title, details)
            self.assertEqual(B.eval(self.page, "document.querySelectorAll('main img').length"), 1)
            self.assertNotEqual(B.eval(self.page, "document.title"), "pwned")
            self.answer("n", after=qid)
            a.close_stdin()
            self.assertEqual(a.wait(60), 0, a.stderr())
        finally:
            term.stop()


EVIL_JS = """window.results = [];
const target = 'http://127.0.0.1:%d';
(async () => {
  try {
    await fetch(target + '/api/control', {method: 'POST', credentials: 'include',
      headers: {'Content-Type': 'application/json', 'X-Deskhand-CSRF': 'x'.repeat(32)},
      body: JSON.stringify({action: 'stop'})});
    window.results.push('sent');
  } catch (e) { window.results.push('blocked'); }
  try {
    const r = await fetch(target + '/api/control', {method: 'POST', mode: 'no-cors',
      credentials: 'include', headers: {'Content-Type': 'text/plain'},
      body: JSON.stringify({action: 'pause'})});
    window.results.push(r.type === 'opaque' ? 'opaque' : 'sent');
  } catch (e) { window.results.push('blocked'); }
  try {
    const r = await fetch(target + '/api/state', {credentials: 'include'});
    window.results.push('read ' + (await r.text()));
  } catch (e) { window.results.push('blocked'); }
})();
"""


class EvilSite:
    """Another page served on a local port: same site as the console."""

    def __init__(self, console_port):
        site = self
        self.hits = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def do_GET(self):
                site.hits.append(self.path)
                if self.path == "/evil.js":
                    body, ctype = (EVIL_JS % console_port).encode(), "text/javascript"
                else:
                    body, ctype = b"<!doctype html><script src=/evil.js></script>", "text/html"
                self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = "http://127.0.0.1:%d/" % self.httpd.server_address[1]
        self.t = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.t.start()

    def stop(self):
        self.httpd.shutdown()
        self.httpd.server_close()


if __name__ == "__main__":
    h.main()
