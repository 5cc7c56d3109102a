"""The model server breaks for real, over loopback, in each wire format
(OpenAI's, Anthropic's, OpenAI Responses', Gemini's server-sent events
from streamGenerateContent?alt=sse, Ollama's newline-delimited JSON from
/api/chat): the process killed mid-stream, garbage after a valid start, a
stream that hangs open (bounded by --model-timeout / "model_timeout"), the
connection closed during a 20 MB body. Each time deskhand says so on one
line, exits 1..127, runs nothing the broken answer held, leaves the
conversation and the audit log whole, and the same conversation goes on
at the next run."""
import json
import os
import select
import subprocess
import sys
import unittest

import harness as h
from agentlib import FakeLLM, Run, call, check_audit

FAKE = os.path.join(h.SRCDIR, "tests", "fake_llm", "fakellm.py")
FORMATS = ("openai", "anthropic", "responses", "gemini", "ollama")
# What each format's own flags add to the common ones (a later --provider wins).
FLAGS = {"responses": ["--api", "responses"], "gemini": ["--provider", "gemini"],
         "ollama": ["--provider", "ollama"]}


class Run(Run):
    """Also OpenAI's Responses API at a compatible server's address, Gemini
    (its key in the environment) and Ollama."""

    def args(self, srv, fmt="openai", *more):
        return super().args(srv, fmt) + FLAGS.get(fmt, []) + list(more)

    def env(self, X=None, **extra):
        return super().env(X, **dict({"GEMINI_API_KEY": "fake-gemini-key"}, **extra))


class Checks:
    def assert_failed_cleanly(self, r, p, want, marker=None):
        """The run ended on `want`, told once on one line, and left
        everything whole; nothing of the broken answer ran or was kept."""
        err = p.stderr.decode("utf-8", "replace")
        self.assertGreaterEqual(p.returncode, 1, err)
        self.assertLess(p.returncode, 128, err)
        # One error line, saying what broke (warnings of retries aside).
        lines = [l for l in err.splitlines() if l.startswith("deskhand: ")]
        self.assertEqual(len(lines), 1, err)
        self.assertIn(want, lines[0])
        if marker is not None:
            self.assertFalse(os.path.exists(marker), "the cut answer's call ran")
        conv = r.conversation()
        # The broken answer is not in the conversation as if it were whole.
        self.assertEqual([m["role"] for m in conv["messages"]][-1], "user", conv)
        v = h.run([h.binary(), "audit", "verify", r.audit], env=r.env())
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)
        events = r.audit_events()
        check_audit(self, events)
        self.assertNotIn("executed", [e["event"] for e in events])
        return conv

    def assert_resumes(self, r, fmt, before):
        """The next run continues the same conversation: the old turns are sent."""
        with FakeLLM([{"text": "carried on"}]) as srv:
            p = r.run(srv, fmt, "-m", "go on")
            self.assertEqual(p.returncode, 0, p.stderr)
            sent = json.dumps(srv.requests[0]["body"], ensure_ascii=False)
        self.assertIn(before, sent)
        self.assertIn("go on", sent)
        self.assertIn(b"carried on", p.stdout)
        roles = [m["role"] for m in r.conversation()["messages"]]
        self.assertEqual(roles[-1], "assistant")
        v = h.run([h.binary(), "audit", "verify", r.audit], env=r.env())
        self.assertEqual(v.returncode, 0, v.stdout + v.stderr)


def cut_turn(r, fault, fmt):
    """Text, then a call that would leave a mark: the fault lands after the
    first 6 events. Gemini's text comes as 6 events and its call whole in
    the 7th; Ollama's as 5 lines, then a line with the whole call, then the
    last ("done": true): there the fault comes after the call, before the end."""
    marker = os.path.join(r.work, "ran")
    code = "touch '%s'" % marker
    if fmt == "gemini":
        turn = {"text": "I will run it now.", "text_chunks": 6,
                "calls": [{"name": "execute", "args": {"language": "shell", "code": code}}]}
    else:
        turn = {"text": "I will run it now.", "text_chunk": 4,
                "tool_calls": [call("execute", language="shell", code=code)], "arg_chunk": 5}
    turn["faults"] = [fault]
    return turn, marker


def broken_run(test, fmt, fault, *flags, **env):
    """One run whose one answer shows text and then breaks with `fault`:
    shown, it is not retried. (Run, result, marker, the server's address.)"""
    r = Run()
    turn, marker = cut_turn(r, fault, fmt)
    with FakeLLM([turn]) as srv:
        p = r.run(srv, fmt, "-y", *flags, "-m", "first task", env=r.env(**env) if env else None)
        test.assertEqual(len(srv.requests), 1)
        return r, p, marker, srv.base_url(fmt)


class ServerDies(unittest.TestCase, Checks):
    def test_model_server_process_killed_mid_stream(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r = Run()
                turn, marker = cut_turn(r, {"hang_after_events": 6}, fmt)
                script = os.path.join(r.dir, "script.json")
                with open(script, "w") as f:
                    json.dump([turn], f)
                srv = subprocess.Popen([sys.executable, FAKE, script], stdout=subprocess.PIPE)
                try:
                    class At:
                        port = int(srv.stdout.readline().split()[1])
                        base_url = FakeLLM.base_url
                    dh = subprocess.Popen(r.args(At(), fmt, "-y", "-m", "first task"),
                                          env=r.env(), stdin=subprocess.DEVNULL,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
                    try:
                        # Killed while it holds the stream open: the first
                        # 6 events (Ollama's: its whole call) were sent.
                        self.assertTrue(select.select([srv.stdout], [], [], 60)[0])
                        self.assertEqual(srv.stdout.readline(), b"hanging\n")
                        srv.kill()          # SIGKILL: the kernel closes its sockets
                        srv.wait()
                        out, err = dh.communicate(timeout=120)
                    finally:
                        if dh.poll() is None:
                            dh.kill()
                            dh.wait()
                finally:
                    if srv.poll() is None:
                        srv.kill()
                        srv.wait()
                    srv.stdout.close()
                p = subprocess.CompletedProcess(dh.args, dh.returncode, out, err)
                self.assert_failed_cleanly(r, p, "the stream was cut before the answer was "
                                                 "complete", marker)
                self.assert_resumes(r, fmt, "first task")

    # Where a cut lands inside the call: OpenAI's, Anthropic's and Responses'
    # arguments come in pieces (8 events in, some have come); Gemini's call
    # is one event and Ollama's one line: cut inside its arguments. And the
    # last event or line (Gemini's holds the call and the finish, Ollama's
    # "done": true) cut just before its end, the event's blank line or the
    # line's newline: whole JSON, but not a whole event or line.
    INSIDE_CALL = {"gemini": ({"cut_after_events": 6, "cut_before": "touch"},
                              {"cut_after_events": 6, "cut_into": -2}),
                   "ollama": ({"cut_after_events": 5, "cut_before": "touch"},
                              {"cut_after_events": 6, "cut_into": -1})}

    def test_stream_cut_inside_a_call_runs_nothing(self):
        for fmt in FORMATS:
            for fault in self.INSIDE_CALL.get(fmt, ({"cut_after_events": 8},)):
                with self.subTest(fmt=fmt, fault=fault):
                    r, p, marker, _ = broken_run(self, fmt, fault)
                    self.assert_failed_cleanly(r, p, "the stream was cut before the answer "
                                                     "was complete", marker)
                    self.assert_resumes(r, fmt, "first task")


class Garbage(unittest.TestCase, Checks):
    def test_garbage_after_a_valid_start(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r, p, marker, _ = broken_run(self, fmt, {
                    "garbage_after_events": 6, "text": "<html>502 Bad Gateway</html>"})
                self.assert_failed_cleanly(r, p, "not a JSON object" if fmt == "ollama"
                                           else "not JSON", marker)
                self.assertIn(b"502 Bad Gateway", p.stderr)
                self.assert_resumes(r, fmt, "first task")


class Hangs(unittest.TestCase, Checks):
    def test_model_timeout_bounds_a_stream_that_hangs_open(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                # The environment's limit would wait for ever (the fake
                # holds 300 s): the option is what ends it.
                r, p, marker, base = broken_run(self, fmt, {"hang_after_events": 6},
                                                "--model-timeout", "1",
                                                DESKHAND_HTTP_IDLE_TIMEOUT="86400")
                self.assert_failed_cleanly(r, p, "no data from %s" % base, marker)
                self.assertIn(b"for 1 s", p.stderr)
                self.assert_resumes(r, fmt, "first task")

    def test_model_timeout_bounds_a_server_that_never_answers(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                # Headers, then silence, at every attempt: nothing was shown,
                # so each is retried, and the retries end too.
                r = Run()
                turn, marker = cut_turn(r, {"hang_after_events": 0, "repeat": 5}, fmt)
                with FakeLLM([turn]) as srv:
                    p = r.run(srv, fmt, "-y", "--model-timeout", "1", "-m", "first task",
                              env=r.env(DESKHAND_HTTP_IDLE_TIMEOUT="86400"))
                    self.assertEqual(len(srv.requests), 5)
                self.assert_failed_cleanly(r, p, "no data from %s" % srv.base_url(fmt), marker)
                self.assertEqual(p.stdout, b"")
                self.assert_resumes(r, fmt, "first task")

    def test_model_timeout_from_the_config_file(self):
        r = Run()
        cfg = os.path.join(r.dir, "config.json")
        with open(cfg, "w") as f:
            json.dump({"model_timeout": 1}, f)
        turn, marker = cut_turn(r, {"hang_after_events": 6}, "openai")
        with FakeLLM([turn]) as srv:
            p = r.run(srv, "openai", "--config", cfg, "-y", "-m", "first task")
        self.assert_failed_cleanly(r, p, "for 1 s", marker)

    def test_model_timeout_is_checked(self):
        r = Run()
        for bad in ("0", "-1", "soon", "86401"):
            with self.subTest(bad=bad):
                p = h.run([h.binary(), "--model-timeout", bad, "-m", "x"], env=r.env())
                self.assertEqual(p.returncode, 2)
                self.assertIn(b"--model-timeout", p.stderr)


class BigBody(unittest.TestCase, Checks):
    BIG = 20 << 20

    # Gemini and Ollama answer a streamed request only as a stream: theirs
    # is 20 MB of text events, shown as it comes, so the cut is not retried.
    STREAMED = ("gemini", "ollama")

    def test_connection_closed_during_a_20_mb_body(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r = Run()
                fault = {"big_body": self.BIG, "cut_at": self.BIG // 2, "repeat": 5}
                with FakeLLM([{"text": "never", "faults": [fault]}]) as srv:
                    p = r.run(srv, fmt, "-m", "first task")
                    if fmt in self.STREAMED:
                        self.assertEqual(len(srv.requests), 1)
                        self.assertGreater(p.stdout.count(b"x"), self.BIG // 4)
                    else:
                        self.assertEqual(len(srv.requests), 5)   # nothing shown: retried
                self.assert_failed_cleanly(r, p, "the stream was cut before the answer was "
                                           "complete" if fmt in self.STREAMED else
                                           "request to %s" % srv.base_url(fmt))
                self.assertNotIn("xxxxxxxx", json.dumps(r.conversation()))
                self.assert_resumes(r, fmt, "first task")

    def test_a_retry_after_a_cut_20_mb_body_answers(self):
        r = Run()
        fault = {"big_body": self.BIG, "cut_at": self.BIG - 1}
        with FakeLLM([{"text": "the real answer", "faults": [fault]}]) as srv:
            p = r.run(srv, "openai", "-m", "first task")
            self.assertEqual(len(srv.requests), 2)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"the real answer", p.stdout)
        self.assertIn(b"retrying", p.stderr)
        msgs = r.conversation()["messages"]
        self.assertEqual([m["role"] for m in msgs], ["user", "assistant"])
        self.assertNotIn("xxxxxxxx", json.dumps(msgs))


if __name__ == "__main__":
    h.main()
