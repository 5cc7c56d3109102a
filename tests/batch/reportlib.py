"""What the report's tests share: a batch folder made by the real agent
(the script provider on a private Xvfb), results lines as `deskhand batch`
writes them, the report written by `deskhand batch --report`, the page read
back as a tree (html.parser), and Chromium through tests/batch/browser.mjs."""
import html.parser
import json
import os
import shutil
import subprocess

import harness as h

HERE = os.path.dirname(os.path.abspath(__file__))
CONSOLE = os.path.join(os.path.dirname(HERE), "console")
CHROMIUM = os.environ.get("DESKHAND_CHROMIUM", "/usr/bin/chromium")


def browser_missing():
    """Why the browser cases cannot run here, or None."""
    if not os.path.exists(CHROMIUM):
        return "no chromium at %s (.ci/install-deps installs it)" % CHROMIUM
    if not shutil.which("node"):
        return "no node (.ci/install-deps installs it)"
    if not os.path.isdir(os.path.join(CONSOLE, "node_modules", "playwright-core")):
        return "playwright-core is not installed in tests/console (.ci/install-deps runs npm ci)"
    return None


def call(name, **args):
    return {"name": name, "arguments": args}


def computer(**args):
    return call("computer", **args)


def agent_env(X, home):
    e = X.env()
    for k in list(e):
        if k.endswith("_API_KEY") or k.endswith("_BASE_URL"):
            del e[k]
    e.update(HOME=home, XDG_DATA_HOME=os.path.join(home, "data"),
             XDG_CONFIG_HOME=os.path.join(home, "config"), LANG="C.UTF-8")
    return e


def write_json(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, ensure_ascii=False)


def run_agent(X, out, tid, turns, auto_approve=True, instruction="go", screen=None):
    """One task as `deskhand batch` runs it: DIR/ID/task.json, then the agent
    with the scripted turns, its conversation, audit log and standard output
    in DIR/ID/. Returns the agent's exit status."""
    d = os.path.join(out, tid)
    for sub in ("workspace", "home"):
        os.makedirs(os.path.join(d, sub), exist_ok=True)
    task = {"id": tid, "instruction": instruction, "check": ["true"]}
    if screen:
        task["screen"] = screen
    write_json(os.path.join(d, "task.json"), task)
    script = os.path.join(d, "home", "script.json")
    write_json(script, {"turns": turns})
    args = [h.binary(), "--provider", "script", "--script", script, "--os", "-y", "--json",
            "--workspace", os.path.join(d, "workspace"),
            "--conversation", os.path.join(d, "conversation.json"),
            "--audit", os.path.join(d, "audit.jsonl"), "-m", instruction]
    if auto_approve:
        args.insert(-2, "--os-auto-approve")
    with open(os.path.join(d, "agent.jsonl"), "wb") as so, \
            open(os.path.join(d, "agent.err"), "wb") as se:
        p = subprocess.run(args, env=agent_env(X, os.path.join(d, "home")),
                           stdin=subprocess.DEVNULL, stdout=so, stderr=se, timeout=120)
    return p.returncode


def result_line(tid, success, check_exit, agent_exit, steps, actions, seconds,
                error=None, screen="1280x800"):
    return {"id": tid, "success": success, "check_exit": check_exit,
            "agent_exit": agent_exit, "steps": steps, "actions": actions,
            "seconds": seconds, "error": error, "started": "2026-01-01T00:00:00Z",
            "ended": "2026-01-01T00:01:00Z", "screen": screen}


def write_results(out, lines):
    """DIR/results.jsonl as the contract has it: one line per finished task."""
    tmp = os.path.join(out, ".results.jsonl.tmp")
    with open(tmp, "w") as f:
        for line in lines:
            f.write((line if isinstance(line, str) else json.dumps(line)) + "\n")
    os.rename(tmp, os.path.join(out, "results.jsonl"))


def audit_events(out, tid):
    with open(os.path.join(out, tid, "audit.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def report(out):
    """deskhand batch --report OUT; the page's text."""
    r = h.run([h.binary(), "batch", "--report", out], timeout=60)
    if r.returncode != 0:
        raise AssertionError("batch --report exited %d: %s" % (r.returncode, r.stderr.decode()))
    with open(os.path.join(out, "report.html"), encoding="utf-8") as f:
        return f.read()


# ---- the page as a tree -------------------------------------------------

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}


class Node:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []

    def text(self):
        return "".join(c if isinstance(c, str) else c.text() for c in self.children)

    def cls(self):
        return (self.attrs.get("class") or "").split()

    def walk(self):
        for c in self.children:
            if isinstance(c, Node):
                yield c
                yield from c.walk()

    def find(self, tag=None, cls=None, **attrs):
        """Every element below with that tag, class and attribute values."""
        out = []
        for n in self.walk():
            if tag and n.tag != tag:
                continue
            if cls and cls not in n.cls():
                continue
            if any(n.attrs.get(k.replace("_", "-")) != v for k, v in attrs.items()):
                continue
            out.append(n)
        return out

    def one(self, *a, **kw):
        found = self.find(*a, **kw)
        if len(found) != 1:
            raise AssertionError("%d elements match %r %r" % (len(found), a, kw))
        return found[0]


class _Tree(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = self.cur = Node("#document", {}, None)

    def handle_starttag(self, tag, attrs):
        n = Node(tag, attrs, self.cur)
        self.cur.children.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.cur.children.append(Node(tag, attrs, self.cur))

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is None:
            raise AssertionError("</%s> closes nothing" % tag)
        self.cur = n.parent

    def handle_data(self, data):
        self.cur.children.append(data)


def parse(text):
    t = _Tree()
    t.feed(text)
    t.close()
    if t.cur is not t.root:
        raise AssertionError("<%s> is never closed" % t.cur.tag)
    return t.root


# ---- Chromium ------------------------------------------------------------

# The report's images load lazily; these make them load now, then read them.
IMAGES_LOADED = ("(() => { const i = [...document.images]; i.forEach(x => x.loading = 'eager');"
                 " return i.length > 0 && i.every(x => x.complete); })()")
IMAGE_SIZES = "[...document.images].map(i => [i.getAttribute('src'), i.naturalWidth])"

class Browser:
    """tests/batch/browser.mjs as a child of the test."""

    def __init__(self):
        self.log = open(os.path.join(h.tmpdir(), "browser.log"), "wb")
        self.p = subprocess.Popen(["node", os.path.join(HERE, "browser.mjs")],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=self.log, start_new_session=True, cwd=HERE)

    def do(self, op, **kw):
        kw["op"] = op
        self.p.stdin.write((json.dumps(kw) + "\n").encode())
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            self.log.flush()
            with open(self.log.name, "rb") as f:
                raise RuntimeError("the browser driver ended: " + f.read().decode()[-3000:])
        r = json.loads(line)
        if not r.get("ok"):
            raise AssertionError("browser %s failed: %s" % (op, r.get("error")))
        return r

    def eval(self, page, js):
        return self.do("eval", page=page, js=js).get("value")

    def wait(self, page, js, timeout=30000):
        return self.do("wait", page=page, js=js, timeout=timeout)["value"]

    def record(self, page):
        return self.do("record", page=page)["value"]

    def stop(self):
        if self.p.poll() is None:
            try:
                self.p.stdin.write(b'{"op":"quit"}\n')
                self.p.stdin.flush()
                self.p.wait(20)
            except Exception:
                os.killpg(self.p.pid, 9)
                self.p.wait()
