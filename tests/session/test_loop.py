"""The agent loop end to end, over real loopback HTTP in both wire formats:
state across execute calls, resume, crashes, broken and unreachable servers,
bad tool calls, step limits, --json, declined code."""
import json
import os
import signal
import subprocess
import time
import unittest

import harness as h
from agentlib import FakeLLM, Run, call, check_audit, texts, tool_results

FORMATS = ("openai", "anthropic")


class Loop(unittest.TestCase):
    def test_state_persists_and_results_reach_the_model(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r = Run()
                turns = [
                    {"tool_calls": [call("execute", language="python", code="x = 41")]},
                    {"tool_calls": [call("execute", language="python", code="print(x + 1)")],
                     "arg_chunk": 3},
                    {"text": "The answer is 42."},
                ]
                with FakeLLM(turns) as srv:
                    p = r.run(srv, fmt, "-y", "-m", "compute")
                    self.assertEqual(p.returncode, 0, p.stderr)
                    self.assertIn(b"The answer is 42.", p.stdout)
                    self.assertEqual(len(srv.requests), 3)
                    results = tool_results(srv.requests[2]["body"], fmt)
                    self.assertEqual(len(results), 2)
                    self.assertIn("42", results[1][1])
                check_audit(self, r.audit_events())
                conv = r.conversation()
                self.assertEqual([m["role"] for m in conv["messages"]],
                                 ["user", "assistant", "tool", "assistant", "tool",
                                  "assistant"])

    def test_resume_sends_the_old_turns(self):
        r = Run()
        with FakeLLM([{"text": "first answer"}, {"text": "second answer"}]) as srv:
            p1 = r.run(srv, "openai", "-m", "first question")
            self.assertEqual(p1.returncode, 0, p1.stderr)
            p2 = r.run(srv, "openai", "-m", "second question")
            self.assertEqual(p2.returncode, 0, p2.stderr)
            msgs = srv.requests[1]["body"]["messages"]
            sent = [(m["role"], m["content"] if isinstance(m["content"], str) else
                     json.dumps(m["content"])) for m in msgs if m["role"] != "system"]
            self.assertEqual(sent[0], ("user", "first question"))
            self.assertEqual(sent[1][0], "assistant")
            self.assertIn("first answer", sent[1][1])
            self.assertEqual(sent[2], ("user", "second question"))
        self.assertIn(b"resuming", p2.stderr)

    def test_kill_9_leaves_a_readable_conversation(self):
        r = Run()
        turns = [{"tool_calls": [call("execute", language="shell", code="echo one")]},
                 {"text": "slow " * 50, "delay": 0.5, "text_chunk": 5}]
        with FakeLLM(turns) as srv:
            proc = subprocess.Popen(r.args(srv, "openai", "-y", "-m", "go"),
                                    env=r.env(), stdin=subprocess.DEVNULL,
                                    stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                    start_new_session=True)
            try:
                self.assertEqual(srv.wait_requests(2, 60), 2)
                time.sleep(0.3)     # mid-stream of the slow answer
            finally:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        conv = r.conversation()
        roles = [m["role"] for m in conv["messages"]]
        self.assertEqual(roles, ["user", "assistant", "tool"])
        self.assertIn("one", json.dumps(conv["messages"][2]))
        leftovers = [n for n in os.listdir(r.dir) if n.startswith(".") or "tmp" in n]
        self.assertEqual(leftovers, [])

    def test_broken_stream_is_a_clear_error_and_keeps_the_conversation(self):
        for fmt in FORMATS:
            with self.subTest(fmt=fmt):
                r = Run()
                turns = [{"text": "this answer will be cut somewhere in the middle",
                          "text_chunk": 4, "faults": [{"cut_after_events": 4}]}]
                with FakeLLM(turns) as srv:
                    p = r.run(srv, fmt, "-m", "hello there")
                self.assertEqual(p.returncode, 1)
                err = p.stderr.decode()
                self.assertIn(fmt, err)
                self.assertIn("cut", err)
                conv = r.conversation()
                self.assertEqual(conv["messages"][0]["role"], "user")
                self.assertIn("hello there", json.dumps(conv["messages"][0]))

    def test_unreachable_server(self):
        r = Run()
        import socket
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()   # nobody listens there now
        p = h.run([h.binary(), "--provider", "openai", "--api-base",
                   "http://127.0.0.1:%d/v1" % port, "--conversation", r.conv,
                   "--audit", r.audit, "-m", "hi"], env=r.env(), timeout=60)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"openai", p.stderr)
        self.assertIn(b"127.0.0.1", p.stderr)

    def test_server_error_names_provider_status_and_message(self):
        r = Run()
        turns = [{"text": "never", "faults": [
            {"status": 401, "body": {"error": {"message": "Incorrect API key provided"}}}]}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-m", "hi")
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"openai: HTTP 401: Incorrect API key provided", p.stderr)

    def test_bad_tool_calls_are_errors_for_the_model(self):
        r = Run()
        turns = [
            {"tool_calls": [
                {"name": "execute", "arguments": "{\"language\": \"python\", \"code\": "},
                call("frobnicate", x=1),
                call("execute", language="cobol", code="DISPLAY 1"),
                call("computer", action="left_click", coordinate=[1, 2]),
            ]},
            {"text": "I see the errors."},
        ]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "-m", "go")
            self.assertEqual(p.returncode, 0, p.stderr)
            results = tool_results(srv.requests[1]["body"], "openai")
        self.assertEqual(len(results), 4)
        self.assertIn("not a JSON object", results[0][1])
        self.assertIn("unknown tool", results[1][1])
        self.assertIn("unknown language", results[2][1])
        self.assertIn("--os", results[3][1])
        check_audit(self, r.audit_events())
        self.assertFalse([e for e in r.audit_events() if e["event"] == "executed"])

    def test_max_steps(self):
        r = Run()
        turns = [{"tool_calls": [call("execute", language="shell", code="true")]}] * 5
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "--max-steps", "2", "-m", "loop")
            self.assertEqual(len(srv.requests), 2)
        self.assertEqual(p.returncode, 1)
        self.assertIn(b"stopped after 2 steps", p.stderr)

    def test_json_events(self):
        r = Run()
        turns = [{"text": "Running.", "tool_calls": [
                     call("execute", language="shell", code="echo out; echo err >&2")]},
                 {"text": "Done."}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "-y", "--json", "-m", "go")
        self.assertEqual(p.returncode, 0, p.stderr)
        events = [json.loads(l) for l in p.stdout.decode().splitlines()]
        kinds = [e["event"] for e in events]
        for k in ("text", "tool_call", "decision", "output", "result"):
            self.assertIn(k, kinds)
        outs = "".join(e["text"] for e in events if e["event"] == "output")
        self.assertIn("out", outs)
        self.assertIn("err", outs)

    def test_declined_code_never_runs(self):
        r = Run()
        marker = os.path.join(r.work, "ran")
        turns = [{"tool_calls": [call("execute", language="shell",
                                      code="touch '%s'" % marker)]},
                 {"text": "ok"}]
        for answer in (b"n\n", b""):      # a no, and end of input
            with self.subTest(answer=answer):
                with FakeLLM(turns) as srv:
                    p = r.run(srv, "openai", "-m", "go", input=answer)
                    self.assertEqual(p.returncode, 0, p.stderr)
                    res = tool_results(srv.requests[1]["body"], "openai")
                # A no is a decline; the end of input is no answer, told so.
                self.assertIn("declined" if answer else "nobody answered", res[0][1])
                self.assertFalse(os.path.exists(marker))
                os.unlink(r.conv)
        check_audit(self, r.audit_events())
        denied = [e for e in r.audit_events() if e["event"] == "denied"]
        self.assertEqual(len(denied), 2)

    def test_an_approval_the_audit_log_cannot_record_denies(self):
        # The human says yes, but by then the audit log cannot grow (the
        # file-size limit is lowered to its size while deskhand asks): the
        # code must not run, the user is told why, and the run ends.
        r = Run()
        marker = os.path.join(r.work, "ran")
        turns = [{"tool_calls": [call("execute", language="shell",
                                      code="touch '%s'" % marker)]},
                 {"tool_calls": [call("execute", language="shell",
                                      code="touch '%s'" % marker)]},
                 {"text": "never"}]
        with FakeLLM(turns) as srv:
            p = subprocess.Popen(r.args(srv, "openai", "-m", "go"), env=r.env(),
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE)
            try:
                asked = h.wait_for(lambda: any(e["event"] == "asked"
                                               for e in r.audit_events()), 30)
                self.assertTrue(asked, "deskhand never asked")
                size = os.path.getsize(r.audit)
                lim = h.run(["prlimit", "--pid", str(p.pid), "--fsize=%d" % size])
                self.assertEqual(lim.returncode, 0, lim.stderr)
                out, err = p.communicate(b"y\ny\n", timeout=120)
            finally:
                if p.poll() is None:
                    p.kill()
                    p.wait()
        self.assertNotEqual(p.returncode, 0, err)
        self.assertLess(p.returncode, 128)
        self.assertIn(b"the audit log cannot be written", err)
        self.assertFalse(os.path.exists(marker))
        self.assertEqual(len(srv.requests), 1, "the run went on after the failure")
        events = [e["event"] for e in r.audit_events()]
        self.assertNotIn("approved", events)
        self.assertNotIn("executed", events)

    def test_code_runs_in_the_workspace_and_files_stay_put(self):
        r = Run()
        turns = [{"tool_calls": [call("execute", language="shell", code="pwd")]}, {"text": "ok"}]
        with FakeLLM(turns) as srv:
            p = h.run(r.args(srv, "openai", "-y", "-m", "where") , env=r.env(), cwd=r.dir)
            self.assertEqual(p.returncode, 0, p.stderr)
            res = tool_results(srv.requests[1]["body"], "openai")
        self.assertEqual(res[0][1].strip(), os.path.realpath(r.work))
        self.assertTrue(os.path.exists(r.conv))
        for bad in (os.path.join(r.dir, "missing"), r.conv):
            p = h.run([h.binary(), "--workspace", bad, "-m", "x"], env=r.env())
            self.assertEqual(p.returncode, 2)
            self.assertIn(b"--workspace", p.stderr)

    def test_usage_errors(self):
        r = Run()
        for args in (["--max-steps", "zero"], ["--provider", "gpt"], ["--safe-mode", "yes"],
                     ["--provider", "script"], ["-m"]):
            with self.subTest(args=args):
                p = h.run([h.binary()] + args, env=r.env())
                self.assertEqual(p.returncode, 2)
                self.assertIn(b"deskhand:", p.stderr)

    def test_lines_from_stdin_are_messages(self):
        r = Run()
        with FakeLLM([{"text": "one"}, {"text": "two"}]) as srv:
            p = r.run(srv, "openai", input=b"first\n%tokens\nsecond\n")
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertEqual(len(srv.requests), 2)
            self.assertIn("second", texts(srv.requests[1]["body"]))
            self.assertNotIn("%tokens", texts(srv.requests[1]["body"]))
        self.assertIn(b"tokens", p.stdout)

    def test_magic_commands_from_the_users_lines(self):
        r = Run()
        saved = os.path.join(r.dir, "saved.json")
        md = os.path.join(r.dir, "conv.md")
        lines = ["first question", "%save_message " + saved, "%markdown " + md,
                 "%undo", "%tokens", "%safe_mode auto", "%verbose true", "%help",
                 "%frobnicate", "%load_message " + saved, "%info", "second question",
                 "%reset", ""]
        with FakeLLM([{"text": "answer one"}, {"text": "answer two"}]) as srv:
            p = r.run(srv, "openai", input="\n".join(lines).encode())
            self.assertEqual(p.returncode, 0, p.stderr)
            second = srv.requests[1]["body"]["messages"]
        out = p.stdout.decode() + p.stderr.decode()
        with open(saved) as f:
            self.assertEqual(len(json.load(f)["messages"]), 2)
        with open(md) as f:
            self.assertIn("answer one", f.read())
        self.assertIn("unknown command %frobnicate", out)
        self.assertIn("safe_mode:     auto", out)
        self.assertIn("%load_message", out)      # the help text
        # undo removed the first exchange, load_message brought it back
        self.assertEqual([m["role"] for m in second if m["role"] != "system"],
                         ["user", "assistant", "user"])
        self.assertEqual(r.conversation()["messages"], [])  # after %reset
        settings = [e for e in r.audit_events() if e["event"] == "setting"]
        self.assertEqual(len(settings), 1)

    def test_anthropic_prompt_cache(self):
        # Two breakpoints by default (tools + system prompt, and the newest
        # block), none with --no-prompt-cache; the server's cache counts
        # reach %tokens.
        r = Run()
        turns = [{"tool_calls": [call("execute", language="shell", code="echo hi")]},
                 {"text": "done", "usage": {"input": 20, "output": 5,
                                            "cache_read": 1500, "cache_write": 40}},
                 {"text": "plain"}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "anthropic", "-y", input=b"say hi\n%tokens\n")
            self.assertEqual(p.returncode, 0, p.stderr)
            q = r.run(srv, "anthropic", "--no-prompt-cache", "-m", "again")
            self.assertEqual(q.returncode, 0, q.stderr)
            bodies = [req["body"] for req in srv.requests]
        for body in bodies[:2]:
            self.assertEqual(json.dumps(body).count('"cache_control"'), 2)
            self.assertEqual(body["system"][0]["cache_control"], {"type": "ephemeral"})
            last = body["messages"][-1]["content"][-1]
            self.assertEqual(last["cache_control"], {"type": "ephemeral"})
        self.assertEqual(bodies[1]["messages"][-1]["content"][-1]["type"], "tool_result")
        self.assertNotIn("cache_control", json.dumps(bodies[2]))
        self.assertIsInstance(bodies[2]["system"], str)
        self.assertIn(b"20 input tokens (and 1500 read from the prompt cache, "
                      b"40 written to it), 5 output tokens", p.stdout)

    def test_list_conversations(self):
        r = Run()
        with FakeLLM([{"text": "hi"}]) as srv:
            p = h.run([h.binary(), "--provider", "openai", "--api-base",
                       srv.base_url("openai"), "-m", "list me please"], env=r.env())
            self.assertEqual(p.returncode, 0, p.stderr)
        p = h.run([h.binary(), "--conversations"], env=r.env())
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"list me please", p.stdout)
        self.assertIn(b"2 messages", p.stdout)

    def test_script_provider(self):
        r = Run()
        script = os.path.join(r.dir, "script.json")
        with open(script, "w") as f:
            json.dump({"turns": [
                {"tool_calls": [call("execute", language="python", code="print(6*7)")]},
                {"text": "Forty-two."}]}, f)
        p = h.run([h.binary(), "--provider", "script", "--script", script, "-y",
                   "--conversation", r.conv, "--audit", r.audit, "-m", "go"],
                  env=r.env(), timeout=60)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertIn(b"42", p.stdout)
        self.assertIn(b"Forty-two.", p.stdout)


if __name__ == "__main__":
    h.main()
