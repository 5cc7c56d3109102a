"""DIR/report.html (issue 26): `deskhand batch --report DIR` over a batch
folder the real agent filled (the script provider on a private Xvfb): the
summary, the table of tasks, each step's screenshot with its action drawn,
the model's text, the call, the gate's decision and the check's output;
read back with html.parser and opened in Chromium (file://, also after the
folder was moved), where every image loads through its relative path.

Hostile text (the model's, the tools', the checker's, the audit's reasons,
file names and ids) stays text: in Chromium no script runs, no dialog
opens and no request leaves for a planted address. A folder with missing,
garbled or oddly shaped files still gets a report that says what is
missing."""
import http.server
import json
import os
import shutil
import threading
import unittest

import harness as h
import reportlib as rl
from reportlib import computer

MISSING = rl.browser_missing()
# CI installs the browser (.ci/install-deps): there a missing one is a
# failure, not a skip that would let the browser cases pass unseen.
if MISSING and os.environ.get("DESKHAND_REQUIRE_BROWSER"):
    raise SystemExit("Bail out! the browser tests cannot run: " + MISSING)

CSP = ("default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; "
       "base-uri 'none'; form-action 'none'")

# The successful task, on a 1920x1080 screen the model sees as 1280x720:
# each drawn point is the screen's, scaled back to the model's picture.
OK_TURNS = [
    {"text": "Let me look at the screen.", "tool_calls": [computer(action="screenshot")]},
    {"text": "I click the field.",
     "tool_calls": [computer(action="left_click", coordinate=[400, 240])]},
    {"text": "I drag the slider.",
     "tool_calls": [computer(action="left_click_drag", start_coordinate=[100, 100],
                             coordinate=[300, 200])]},
    {"text": "I scroll down.",
     "tool_calls": [computer(action="scroll", coordinate=[640, 400], scroll_direction="down",
                             scroll_amount=3)]},
    {"text": "I type the name.", "tool_calls": [computer(action="type", text="hello report")]},
    {"text": "I select everything.", "tool_calls": [computer(action="key", text="ctrl+a")]},
    {"text": "Done: the field says hello report."},
]
# The failed one: no --os-auto-approve and nobody to answer, so its
# click is denied ("no-answer"), and its checker fails.
FAIL_TURNS = [
    {"text": "A first look.", "tool_calls": [computer(action="screenshot")]},
    {"text": "I click OK.", "tool_calls": [computer(action="double_click", coordinate=[640, 360])]},
    {"text": "It did not work."},
]


def setUpModule():
    global OUT, B
    OUT = h.tmpdir()
    with h.Xvfb(1920, 1080) as X:
        rc = rl.run_agent(X, OUT, "ok-task", OK_TURNS, instruction="Type hello report",
                          screen="1920x1080")
        assert rc == 0, "the ok task's agent exited %d" % rc
    with h.Xvfb(1280, 800) as X:
        rc = rl.run_agent(X, OUT, "fail.task_2", FAIL_TURNS, auto_approve=False,
                          instruction="Press OK")
    os.makedirs(os.path.join(OUT, "open-task"))
    rl.write_json(os.path.join(OUT, "open-task", "task.json"),
                  {"id": "open-task", "instruction": "Not started yet", "check": ["true"]})
    with open(os.path.join(OUT, "ok-task", "check.out"), "w") as f:
        f.write("the field holds: hello report\n")
    with open(os.path.join(OUT, "fail.task_2", "check.out"), "w") as f:
        f.write("expected OK pressed\nit was not\n")
    rl.write_results(OUT, [
        rl.result_line("ok-task", True, 0, 0, 7, 6, 12.5, screen="1920x1080"),
        rl.result_line("fail.task_2", False, 1, rc, 3, 1, 4.5,
                       error="the check failed (exit status 1)"),
    ])
    rl.report(OUT)
    B = rl.Browser() if MISSING is None else None


def tearDownModule():
    if B is not None:
        B.stop()


def section(doc, tid):
    return doc.one("section", id="task-" + tid)


class Page(unittest.TestCase):
    """The page as html.parser reads it."""

    @classmethod
    def setUpClass(cls):
        cls.text = rl.report(OUT)
        cls.doc = rl.parse(cls.text)

    def test_policy_first_and_strict(self):
        head = self.doc.one("head")
        metas = head.find("meta")
        self.assertEqual(metas[0].attrs.get("charset"), "utf-8")
        self.assertEqual(metas[1].attrs["http-equiv"], "Content-Security-Policy")
        self.assertEqual(metas[1].attrs["content"], CSP)
        self.assertEqual(self.doc.find("script"), [])

    def test_summary(self):
        s = self.doc.one("dl", id="summary")
        fig = {n.attrs["data-k"]: n.text() for n in s.find("dd")}
        self.assertEqual(fig["tasks"], "3")
        self.assertEqual(fig["finished"], "2")
        self.assertEqual(fig["succeeded"], "1")
        self.assertEqual(fig["failed"], "1")
        self.assertEqual(fig["unfinished"], "1")
        self.assertTrue(fig["rate"].startswith("50.0 %"), fig["rate"])
        self.assertEqual(fig["seconds"], "median 8.5, mean 8.5")
        self.assertEqual(fig["steps"], "median 5.0, mean 5.0")

    def test_table(self):
        rows = {r.attrs["data-id"]: r for r in self.doc.one("table", id="tasks").find("tr")
                if "data-id" in r.attrs}
        self.assertEqual(sorted(rows), ["fail.task_2", "ok-task", "open-task"])
        cells = lambda tid: {c.cls()[-1]: c.text() for c in rows[tid].find("td") if c.cls()}
        ok, bad, open_ = cells("ok-task"), cells("fail.task_2"), cells("open-task")
        self.assertEqual((ok["success"], ok["check_exit"], ok["agent_exit"], ok["steps"],
                          ok["actions"], ok["seconds"], ok["error"]),
                         ("yes", "0", "0", "7", "6", "12.5", ""))
        self.assertEqual((bad["success"], bad["check_exit"], bad["error"]),
                         ("no", "1", "the check failed (exit status 1)"))
        self.assertEqual(open_["success"], "unfinished")
        self.assertEqual(rows["ok-task"].one("a").attrs["href"], "#task-ok-task")

    def test_every_step_with_text_call_and_decision(self):
        ok = section(self.doc, "ok-task")
        steps = ok.find("li", cls="step")
        self.assertEqual([s.one("p", cls="said").text() for s in steps],
                         [t["text"] for t in OK_TURNS])
        calls = ok.find("div", cls="call")
        self.assertEqual([c.one("code", cls="action").text() for c in calls],
                         ["screenshot", "left_click", "left_click_drag", "scroll", "type", "key"])
        for c in calls:
            approved = c.one("li", cls="approved")
            self.assertEqual(approved.one("span", cls="by").text(), "policy")
            self.assertEqual(c.one("li", cls="executed").one("span", cls="status").text(), "0")
        self.assertIn('"text":\t"hello report"', calls[4].one("pre", cls="args").text())
        self.assertIn("done: left_click at 400,240", calls[1].one("pre", cls="result").text())
        self.assertEqual(ok.one("pre", cls="instruction").text(), "Type hello report")
        check = ok.one("details", data_name="check.out")
        self.assertIn("the field holds: hello report", check.text())
        self.assertEqual(check.one("a").attrs["href"], "ok-task/check.out")

    def test_denied_call(self):
        bad = section(self.doc, "fail.task_2")
        click = bad.find("div", cls="call")[1]
        denied = click.one("li", cls="denied")
        self.assertEqual(denied.one("span", cls="by").text(), "no-answer")
        self.assertEqual(denied.one("span", cls="reason").text(), "no answer (end of input)")
        self.assertEqual(click.find("li", cls="executed"), [])
        self.assertEqual(bad.one("dd", data_k="error").text(), "the check failed (exit status 1)")
        self.assertIn("it was not", bad.one("details", data_name="check.out").text())

    def test_unfinished(self):
        s = section(self.doc, "open-task")
        self.assertIn("unfinished", s.cls())
        self.assertIn("has not finished", s.text())
        self.assertEqual(s.one("pre", cls="instruction").text(), "Not started yet")
        self.assertEqual(s.find("li", cls="step"), [])
        # A task that has not begun lacks its files by nature: no note for them.
        self.assertEqual(s.find("ul", cls="notes"), [])

    def test_images_are_relative_and_exist(self):
        imgs = self.doc.find("img")
        self.assertGreaterEqual(len(imgs), 8)
        for img in imgs:
            src = img.attrs["src"]
            self.assertRegex(src, r"^[A-Za-z0-9][A-Za-z0-9._-]*/conversation\.images/\d{4}\.png$")
            self.assertTrue(os.path.isfile(os.path.join(OUT, src)), src)
            self.assertEqual(img.parent.attrs["href"], src)

    def test_screenshot_before_the_action(self):
        """An action is drawn on what the model saw before it; an
        observation shows what it got back."""
        calls = section(self.doc, "ok-task").find("div", cls="call")
        srcs = [c.one("img").attrs["src"].split("/")[-1] for c in calls]
        self.assertEqual(srcs, ["0001.png", "0001.png", "0002.png", "0003.png", "0004.png",
                                "0005.png"])

    def test_drawn_actions(self):
        calls = section(self.doc, "ok-task").find("div", cls="call")
        svgs = [c.find("svg") for c in calls]
        self.assertEqual(svgs[0], [])  # a screenshot has no place
        click, drag, scroll, typed, key = (s[0] for s in svgs[1:])
        for s in (click, drag, scroll, typed, key):
            self.assertEqual(s.attrs["viewbox"], "0 0 1280 720")
        # The screen's 600,360 on 1920x1080, in the model's 1280x720 picture.
        self.assertEqual((click.attrs["data-x"], click.attrs["data-y"]), ("400.0", "240.0"))
        self.assertEqual(len(click.find("circle", cls="click")), 1)
        line = drag.one("line", cls="drag")
        self.assertEqual([line.attrs[k] for k in ("x1", "y1", "x2", "y2")],
                         ["100.0", "100.0", "300.0", "200.0"])
        self.assertEqual(len(drag.find("polygon", cls="arrow")), 1)
        sl = scroll.one("line", cls="scroll")
        self.assertEqual(sl.attrs["x1"], sl.attrs["x2"])
        self.assertGreater(float(sl.attrs["y2"]), float(sl.attrs["y1"]))  # down
        self.assertEqual(scroll.one("text", cls="label").text(), "scroll down ×3")
        self.assertEqual(typed.one("text", cls="label").text(), "type: “hello report”")
        self.assertEqual(key.one("text", cls="label").text(), "key: ctrl+a")

    def test_rewritten_atomically_and_the_same(self):
        again = rl.report(OUT)
        self.assertEqual(again, self.text)
        self.assertEqual([n for n in os.listdir(OUT) if n.startswith(".report")], [])

    def test_no_dir(self):
        r = h.run([h.binary(), "batch", "--report", os.path.join(OUT, "nowhere")])
        self.assertEqual(r.returncode, 1)
        self.assertIn("nowhere", r.stderr.decode())


IMAGES_LOADED = rl.IMAGES_LOADED
IMAGE_SIZES = rl.IMAGE_SIZES


@unittest.skipIf(MISSING, MISSING)
class InChromium(unittest.TestCase):
    def open(self, page, out):
        url = "file://" + os.path.join(out, "report.html")
        B.do("open", page=page, url=url)
        B.wait(page, IMAGES_LOADED)
        return url

    def check_images(self, page, out):
        sizes = B.eval(page, IMAGE_SIZES)
        self.assertGreaterEqual(len(sizes), 8)
        for src, w in sizes:
            self.assertGreater(w, 0, src)
        rec = B.record(page)
        prefix = "file://" + out + "/"
        self.assertEqual([u for u in rec["requests"] if not u.startswith(prefix)], [])
        self.assertEqual(rec["errors"], [])
        self.assertEqual(rec["dialogs"], [])

    def test_page(self):
        self.open("main", OUT)
        self.check_images("main", OUT)
        fig = B.eval("main", "Object.fromEntries([...document.querySelectorAll('#summary dd')]"
                             ".map(d => [d.dataset.k, d.textContent]))")
        self.assertEqual((fig["tasks"], fig["succeeded"], fig["failed"], fig["unfinished"]),
                         ("3", "1", "1", "1"))
        steps = B.eval("main", "[...document.querySelectorAll('section.task')].map(s => "
                               "[s.dataset.id, s.querySelectorAll('li.step').length])")
        self.assertEqual(steps, [["fail.task_2", 3], ["ok-task", 7], ["open-task", 0]])
        # Each drawing lies over its picture, the click's circle where the
        # model pointed: 400,240 of 1280x720, wherever the page put the image.
        where = B.eval("main", """(() => {
            const s = document.querySelector('#task-ok-task svg[data-action=left_click]');
            const img = s.parentNode.querySelector('img').getBoundingClientRect();
            const box = s.getBoundingClientRect();
            const c = s.querySelector('circle.click').getBoundingClientRect();
            return {img: [img.x, img.y, img.width, img.height],
                    svg: [box.x, box.y, box.width, box.height],
                    cx: (c.x + c.width / 2 - img.x) / img.width,
                    cy: (c.y + c.height / 2 - img.y) / img.height};
        })()""")
        for a, b in zip(where["img"], where["svg"]):
            self.assertAlmostEqual(a, b, delta=1.5)
        self.assertAlmostEqual(where["cx"], 400 / 1280, delta=0.01)
        self.assertAlmostEqual(where["cy"], 240 / 720, delta=0.01)
        n = B.eval("main", "document.querySelectorAll('svg.overlay').length")
        self.assertEqual(n, 6)  # five in the ok task, the denied double click

    def test_moved_folder(self):
        """The folder works wherever it is copied: every link is relative."""
        moved = os.path.join(h.tmpdir(), "moved batch")
        shutil.copytree(OUT, moved, symlinks=True)
        self.open("moved", moved)
        self.check_images("moved", moved.replace(" ", "%20"))


class _Planted(http.server.BaseHTTPRequestHandler):
    hits = []

    def do_GET(self):
        _Planted.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *a):
        pass


def attack_fixture():
    """A batch folder whose every foreign text is hostile."""
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Planted)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    planted = "http://127.0.0.1:%d" % srv.server_address[1]
    out = h.tmpdir()
    said = ("<script>window.pwned=1</script><img src=x onerror=\"window.pwned=2;alert(2)\">"
            "</textarea></pre></p><svg onload=\"window.pwned=3\"></svg><img src=\"%s/said\">"
            "<style>body{background:url(%s/css)}</style>" % (planted, planted))
    typed = "</text></svg><script>window.pwned=4</script><img src=%s/typed>" % planted
    code = "printf '%%s' '<script>window.pwned=5</script><iframe src=%s/out>'" % planted
    turns = [
        {"text": said, "tool_calls": [computer(action="screenshot")]},
        {"text": "\"><script>window.pwned=6</script>",
         "tool_calls": [computer(action="type", text=typed)]},
        {"text": "code", "tool_calls": [rl.call("execute", language="shell", code=code)]},
        {"text": "another look", "tool_calls": [computer(action="screenshot")]},
        {"text": "</li></ol></section><a href=\"javascript:window.pwned=7\">x</a>"},
    ]
    with h.Xvfb(1280, 800) as X:
        rc = rl.run_agent(X, out, "evil", turns, instruction="<iframe src=\"%s/task\">" % planted)
    assert rc == 0, rc
    d = os.path.join(out, "evil")
    conv_path = os.path.join(d, "conversation.json")
    with open(conv_path) as f:
        conv = json.load(f)
    # Image paths deskhand never writes: each must be refused, not linked.
    bad_paths = ["../../etc/passwd", "/etc/passwd", "conversation.images/../../x/0001.png",
                 "javascript:window.pwned=8", "%s/img.png" % planted,
                 "conversation.images/0001.png\" onerror=\"window.pwned=9"]
    tools = [m for m in conv["messages"] if m["role"] == "tool"]
    first = tools[0]["content"][0]
    first["image"]["path"] = bad_paths[0]
    tools[2]["content"][0]["text"] += "</pre><script>window.pwned=10</script>"
    # The others, each the answer to a call of a step of their own.
    ids = ["b%d" % i for i in range(len(bad_paths) - 1)]
    at = conv["messages"].index(tools[2]) + 1
    conv["messages"][at:at] = [
        {"role": "assistant", "content": [
            {"type": "tool_call", "id": i, "name": "computer",
             "arguments": json.dumps({"action": "screenshot"})} for i in ids]},
        {"role": "tool", "content": [
            {"type": "tool_result", "call_id": i, "text": "", "is_error": False,
             "image": {"path": p, "width": 10, "height": 10}}
            for i, p in zip(ids, bad_paths[1:])]}]
    rl.write_json(conv_path, conv)
    call_id = first["call_id"]
    with open(os.path.join(d, "audit.jsonl"), "a") as f:
        f.write(json.dumps({"event": "approved", "id": call_id, "by": "<b onmouseover=alert(11)>",
                            "reason": "<script>window.pwned=11</script>"}) + "\n")
    with open(os.path.join(d, "check.out"), "w") as f:
        f.write("</pre></details><script>window.pwned=12</script><img src=%s/check>" % planted)
    # Ids that are not task ids: never a path, an element id or a link.
    os.makedirs(os.path.join(out, 'bad"id'))
    rl.write_json(os.path.join(out, 'bad"id', "task.json"), {"id": 'bad"id'})
    rl.write_results(out, [
        rl.result_line("evil", False, 1, 0, 5, 4, 1.0,
                       error="\"><script>window.pwned=13</script><img src=%s/err>" % planted,
                       screen="\"><img src=x onerror=alert(14)>"),
        rl.result_line('x" onmouseover="window.pwned=15', True, 0, 0, 1, 1, 1.0),
        rl.result_line("../../etc", True, 0, 0, 1, 1, 1.0),
        "<script>window.pwned=16</script>",
    ])
    return srv, out, said, typed


class Attacks(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.srv, cls.out, cls.said, cls.typed = attack_fixture()
        cls.text = rl.report(cls.out)

    @property
    def doc(self):
        # Parsed by each case, so that a page html.parser cannot read still
        # reaches Chromium's case.
        return rl.parse(self.text)

    @classmethod
    def tearDownClass(cls):
        cls.srv.shutdown()
        cls.srv.server_close()

    def test_markup_is_text(self):
        self.assertEqual(self.doc.find("script"), [])
        self.assertEqual(self.doc.find("iframe"), [])
        self.assertEqual(self.doc.find("style")[1:], [])  # the page's own, alone
        for n in self.doc.walk():
            self.assertEqual([a for a in n.attrs if a.startswith("on")], [], n.tag)
            for a in ("href", "src"):
                v = n.attrs.get(a)
                if v is not None:
                    self.assertRegex(v, r"^(#task-evil|evil/[A-Za-z0-9./]*)$", (n.tag, a))
                    self.assertNotIn("..", v)
        evil = section(self.doc, "evil")
        self.assertEqual(evil.find("li", cls="step")[0].one("p", cls="said").text(), self.said)
        self.assertIn(self.typed[:40], evil.find("svg")[0].one("text", cls="label").text())
        self.assertIn("<script>window.pwned=11</script>", evil.text())
        check = evil.one("details", data_name="check.out")
        self.assertIn("<script>window.pwned=12</script>", check.text())

    def test_paths_refused(self):
        evil = section(self.doc, "evil")
        refused = [n.text() for n in evil.find("p", cls="refused")]
        self.assertEqual(len(refused), 6, refused)
        self.assertIn("../../etc/passwd", refused[0])
        srcs = [i.attrs["src"] for i in evil.find("img")]
        # The typed text on what it got back (the screenshot before was
        # refused); the other screenshots' own pictures were all refused.
        self.assertEqual(srcs, ["evil/conversation.images/0002.png",
                                "evil/conversation.images/0003.png"])

    def test_bad_ids(self):
        ids = [r.attrs["data-id"] for r in self.doc.find("tr") if "data-id" in r.attrs]
        self.assertEqual(ids, ["evil"])
        self.assertIn("1 folder with a task.json but a name that is not a task id", self.text)
        self.assertIn("results.jsonl: 2 lines without a valid task id, left out", self.text)
        self.assertIn("results.jsonl: 1 line is not a JSON object", self.text)

    @unittest.skipIf(MISSING, MISSING)
    def test_nothing_runs_in_chromium(self):
        url = "file://" + os.path.join(self.out, "report.html")
        B.do("open", page="evil", url=url)
        B.wait("evil", IMAGES_LOADED)
        # Hover over everything: an onmouseover that got through would fire.
        B.eval("evil", "document.querySelectorAll('*').forEach(e => e.dispatchEvent("
                       "new MouseEvent('mouseover', {bubbles: true})))")
        self.assertIsNone(B.eval("evil", "window.pwned === undefined ? null : window.pwned"))
        self.assertEqual(B.eval("evil", "document.scripts.length"), 0)
        self.assertEqual(B.eval("evil", "document.querySelectorAll('iframe,object,embed')"
                                        ".length"), 0)
        text = B.eval("evil", "document.body.innerText")
        self.assertIn("<script>window.pwned=1</script>", text)
        self.assertIn("<script>window.pwned=13</script>", text)
        rec = B.record("evil")
        self.assertEqual(rec["dialogs"], [])
        self.assertEqual(rec["errors"], [])
        here = "file://" + self.out + "/"
        self.assertEqual([u for u in rec["requests"] if not u.startswith(here)], [])
        self.assertEqual(_Planted.hits, [])


class Malformed(unittest.TestCase):
    """Files missing, garbled or of the wrong shape: the report is written,
    shows what is there and says what is missing. No X, no agent."""

    @classmethod
    def setUpClass(cls):
        out = cls.out = h.tmpdir()

        def put(tid, name, data):
            os.makedirs(os.path.join(out, tid), exist_ok=True)
            with open(os.path.join(out, tid, name), "w") as f:
                f.write(data if isinstance(data, str) else json.dumps(data))

        put("garbled", "task.json", {"instruction": "garbled files"})
        put("garbled", "conversation.json", '{"messages": [{"role": "assistant", "con')
        put("garbled", "audit.jsonl", 'junk\n[1, 2]\n{"event":"approved","id":"c1","by":"user"}\n')
        put("shapes", "task.json", [1, 2])
        put("shapes", "conversation.json", {"messages": [
            {"role": "assistant", "content": "not a list"},
            {"role": "assistant", "content": [
                {"type": "text", "text": 5},
                {"type": "tool_call", "name": "computer", "arguments": "{not json"},
                {"type": "tool_call", "id": "c2", "name": "computer",
                 "arguments": json.dumps({"action": "left_click", "coordinate": [1e308, -5]})}]},
            {"role": "tool", "content": [
                {"type": "tool_result", "call_id": "c2", "text": None,
                 "image": {"path": "conversation.images/0001.png", "width": -3, "height": "x"}}]},
            {"role": "assistant", "content": [
                {"type": "tool_call", "id": "c3", "name": "computer",
                 "arguments": json.dumps({"action": "scroll", "coordinate": [5, 5],
                                          "scroll_direction": "sideways"})}]},
            {"role": "tool", "content": [
                {"type": "tool_result", "call_id": "c3", "text": "ok",
                 "image": {"path": "conversation.images/0002.png", "width": 64, "height": 40}}]},
            {"role": "assistant", "content": [
                {"type": "tool_call", "id": "c4", "name": "computer",
                 "arguments": json.dumps({"action": "left_click", "coordinate": [10, 10]})}]},
            5, None, {"role": 7}]})
        put("shapes", "audit.jsonl", '{"event":"executed","id":"c2","status":"x"}\n')
        put("noconv", "task.json", {"instruction": "finished without a conversation"})
        put("bigcheck", "task.json", {"instruction": "a chatty checker"})
        put("bigcheck", "check.out", "START\n" + "x" * 100000 + "\nVERDICT: failed\n")
        put("linked", "task.json", {"instruction": "a planted link"})
        secret = os.path.join(h.tmpdir(), "secret")
        with open(secret, "w") as f:
            f.write("SECRET-TOKEN-123")
        os.symlink(secret, os.path.join(out, "linked", "check.out"))
        os.symlink(secret, os.path.join(out, "linked", "conversation.json"))
        rl.write_results(out, [rl.result_line(t, False, 1, 0, 1, 0, 2.0, error="e")
                               for t in ("garbled", "shapes", "noconv", "bigcheck", "linked",
                                         "nofolder")] +
                         ["{\"id\": \"shapes\", \"success\": \"yes\", \"steps\": \"many\", "
                          "\"seconds\": 1e300, \"error\": 5, \"check_exit\": null}", "", "garbage"])
        cls.text = rl.report(out)
        cls.doc = rl.parse(cls.text)

    def notes(self, tid):
        return [li.text() for ul in section(self.doc, tid).find("ul", cls="notes")
                for li in ul.find("li")]

    def test_all_tasks_shown(self):
        ids = [r.attrs["data-id"] for r in self.doc.find("tr") if "data-id" in r.attrs]
        self.assertEqual(ids, ["bigcheck", "garbled", "linked", "noconv", "nofolder", "shapes"])
        self.assertIn("results.jsonl: 1 line is not a JSON object (the first: line 9), left out",
                      self.text)

    def test_garbled(self):
        n = self.notes("garbled")
        self.assertTrue(any(x.startswith("conversation.json: not JSON") for x in n), n)
        self.assertIn("audit.jsonl: 2 lines are not a JSON object (the first: line 1), left out", n)
        self.assertIn("No conversation to show.", section(self.doc, "garbled").text())

    def test_shapes(self):
        s = section(self.doc, "shapes")
        self.assertIn("task.json: not a JSON object", self.notes("shapes"))
        # The newest line counts, whatever its types.
        row = self.doc.one("tr", data_id="shapes")
        cells = {c.cls()[-1]: c.text() for c in row.find("td") if c.cls()}
        self.assertEqual((cells["success"], cells["steps"], cells["seconds"], cells["error"]),
                         ("no", "—", "—", ""))
        self.assertEqual(len(s.find("li", cls="step")), 4)
        # A click far off the picture is held to it; a size that is not one
        # draws nothing; an image not on disk says so.
        svgs = s.find("svg")
        self.assertEqual([v.attrs["data-action"] for v in svgs], ["scroll", "left_click"])
        self.assertEqual((svgs[1].attrs["data-x"], svgs[1].attrs["viewbox"]), ("10.0", "0 0 64 40"))
        self.assertEqual(svgs[0].find("line"), [])
        self.assertIn("(the file is missing)", s.text())

    def test_missing_files(self):
        n = self.notes("noconv")
        self.assertIn("conversation.json: missing", n)
        self.assertIn("audit.jsonl: missing", n)
        self.assertIn("the task's folder nofolder/ is missing", self.notes("nofolder"))

    def test_long_check_output(self):
        pre = section(self.doc, "bigcheck").one("details", data_name="check.out").one("pre")
        t = pre.text()
        self.assertTrue(t.startswith("START\n"), t[:20])
        self.assertTrue(t.endswith("VERDICT: failed\n"), t[-20:])
        self.assertRegex(t, r"\[… \d+ bytes left out …\]")
        self.assertLess(len(t), 20000)

    def test_links_not_followed(self):
        self.assertNotIn("SECRET-TOKEN", self.text)
        n = self.notes("linked")
        self.assertIn("check.out: not a plain file, not read", n)
        self.assertIn("conversation.json: not a plain file, not read", n)


if __name__ == "__main__":
    h.main()
