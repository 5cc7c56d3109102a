"""The providers over real loopback HTTP against tests/fake_llm: both wire
formats streamed and whole, awkward fragments, tool results with images,
retries (429 with Retry-After, 500 five times, dropped connections, an
overload event), errors that are not retried (401, garbage, a stream cut
after text was shown, an unreachable server), Ctrl-C, kill -9 while the
server is slow, and a conversation file that never holds the API key.

argv[1] is the provider_probe binary (see tests/llm/meson.build)."""
import base64
import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import unittest

import harness as h

sys.path.insert(0, os.path.join(h.SRCDIR, "tests", "fake_llm"))
from fakellm import FakeLLM  # noqa: E402

PROBE = sys.argv[1] if len(sys.argv) > 1 else os.path.join(h.build_dir(), "tests",
                                                           "llm", "provider_probe")
KEY = "sk-test-SECRET-4f9a2c"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 3

# Raw tool arguments full of traps: an escaped quote, a \u escape, raw
# multi-byte characters (2, 3 and 4 bytes).
ARGS = '{"language":"python","code":"print(\\"h\\u00e9llo\\") # \u00e9\u2713\U0001F600"}'
ARGS_B = ARGS.encode()
CODE = 'print("h\u00e9llo") # \u00e9\u2713\U0001F600'


def awkward_splits():
    """Byte offsets inside \\", inside \\u00e9, inside each multi-byte character."""
    esc_quote = ARGS_B.index(b'\\"') + 1
    esc_u = ARGS_B.index(b"\\u00e9") + 3
    e_acute = ARGS_B.index("\u00e9".encode()) + 1
    check = ARGS_B.index("\u2713".encode()) + 2
    emoji = ARGS_B.index("\U0001F600".encode()) + 3
    return [esc_quote, esc_u, e_acute, check, emoji]


class Probe:
    def __init__(self, test, fmt="openai"):
        self.dir = h.tmpdir()
        self.conv = os.path.join(self.dir, "conv.json")
        self.fmt = fmt
        test.addCleanup(lambda: subprocess.run(["rm", "-rf", self.dir]))

    def env(self, **extra):
        e = dict(os.environ)
        for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "OPENAI_BASE_URL",
                  "ANTHROPIC_BASE_URL", "http_proxy", "https_proxy", "HTTP_PROXY",
                  "HTTPS_PROXY", "ALL_PROXY", "all_proxy"):
            e.pop(k, None)
        e["DESKHAND_RETRY_BASE_MS"] = "20"
        e.update(extra)
        return e

    def args(self, srv, *extra, key=True, provider=None):
        provider = provider or self.fmt
        a = [PROBE, "--provider", provider, "--conversation", self.conv]
        if srv is not None:
            a += ["--base", srv.base_url("openai" if provider == "openai" else "root")]
        if key:
            a += ["--api-key", KEY]
        return a + list(extra)

    def run(self, srv, *extra, key=True, provider=None, env=None, timeout=90):
        r = h.run(self.args(srv, *extra, key=key, provider=provider),
                  env=env or self.env(), timeout=timeout)
        out = r.stdout.decode("utf-8")  # strict: a delta never splits a character
        events = [json.loads(line) for line in out.splitlines() if line.strip()]
        return r.returncode, events, r.stderr.decode("utf-8", "replace")

    def saved(self):
        with open(self.conv) as f:
            return json.load(f)


def text_of(events):
    return "".join(e["text"] for e in events if e["event"] == "text")


def calls_of(events):
    return [e for e in events if e["event"] == "tool_call"]


def last(events):
    return events[-1] if events else {}


class Formats(unittest.TestCase):
    def roundtrip(self, fmt, stream, turn_stream=None):
        turn = {"text": "I will run some code now.",
                "tool_calls": [{"id": "call_x1", "name": "execute", "arguments": ARGS}]}
        if turn_stream is not None:
            turn["stream"] = turn_stream
        p = Probe(self, fmt)
        with FakeLLM([turn, {"text": "All done."}]) as srv:
            extra = ["--user", "run it"] + ([] if stream else ["--no-stream"])
            rc, ev, err = p.run(srv, *extra)
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "I will run some code now.")
            calls = calls_of(ev)
            self.assertEqual(len(calls), 1)
            self.assertEqual(calls[0]["id"], "call_x1")
            if fmt == "openai" or stream:
                # Anthropic's whole answer holds the input as an object: no raw text
                self.assertEqual(calls[0]["arguments"], ARGS)
            self.assertEqual(calls[0]["args"]["code"], CODE)
            self.assertEqual(last(ev)["stop"], "tool_use")
            req = srv.requests[0]
            self.assertEqual(req["body"]["stream"], stream)
            saved = p.saved()
            self.assertEqual([m["role"] for m in saved["messages"]], ["user", "assistant"])
            blocks = saved["messages"][1]["content"]
            self.assertEqual(json.loads(blocks[1]["arguments"])["code"], CODE)
            # the answer goes back and the earlier turns travel with it
            rc, ev, err = p.run(srv, "--result", "call_x1", "hello", *extra[2:])
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "All done.")
            self.assertEqual(last(ev)["stop"], "end")
            body = srv.requests[1]["body"]
            return req, body

    def test_openai_streamed(self):
        req, body = self.roundtrip("openai", True)
        self.assertEqual(req["path"], "/v1/chat/completions")
        self.assertEqual(req["headers"]["authorization"], "Bearer " + KEY)
        self.assertEqual(req["body"]["messages"][0], {"role": "system", "content": "You are a test."})
        self.assertEqual(req["body"]["messages"][1], {"role": "user", "content": "run it"})
        msgs = body["messages"]
        self.assertEqual(msgs[2]["tool_calls"][0]["function"]["arguments"], ARGS)
        self.assertEqual(msgs[3], {"role": "tool", "tool_call_id": "call_x1", "content": "hello"})

    def test_openai_whole(self):
        self.roundtrip("openai", False)

    def test_openai_server_ignores_stream_flag(self):
        self.roundtrip("openai", True, turn_stream=False)

    def test_anthropic_streamed(self):
        req, body = self.roundtrip("anthropic", True)
        self.assertEqual(req["path"], "/v1/messages")
        self.assertEqual(req["headers"]["x-api-key"], KEY)
        self.assertEqual(req["headers"]["anthropic-version"], "2023-06-01")
        self.assertNotIn("anthropic-beta", req["headers"])
        self.assertEqual(req["body"]["system"], "You are a test.")
        res = body["messages"][2]["content"][0]
        self.assertEqual(res["type"], "tool_result")
        self.assertEqual(res["tool_use_id"], "call_x1")
        self.assertEqual(res["content"], [{"type": "text", "text": "hello"}])
        self.assertEqual(body["messages"][1]["content"][1]["input"]["code"], CODE)

    def test_anthropic_whole(self):
        self.roundtrip("anthropic", False)

    def test_ollama_needs_no_key(self):
        p = Probe(self, "ollama")
        with FakeLLM([{"text": "local hello"}]) as srv:
            rc, ev, err = p.run(srv, "--user", "hi", key=False)
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "local hello")
            # Ollama's native API (its OpenAI endpoint: --provider openai --api-base .../v1).
            self.assertEqual(srv.requests[0]["path"], "/api/chat")
            self.assertNotIn("authorization", srv.requests[0]["headers"])
            self.assertEqual(srv.requests[0]["body"]["model"], "llama3.1")

    def test_anthropic_computer_tool(self):
        p = Probe(self, "anthropic")
        turn = {"text": "Looking.", "tool_calls": [{"id": "toolu_1", "name": "computer",
                                                    "arguments": {"action": "screenshot"}}]}
        with FakeLLM([turn]) as srv:
            rc, ev, err = p.run(srv, "--user", "look", "--os", "1280x800",
                                "--model", "claude-sonnet-4-5-20250929")
            self.assertEqual(rc, 0, (ev, err))
            req = srv.requests[0]
            self.assertEqual(req["headers"]["anthropic-beta"], "computer-use-2025-01-24")
            tools = {t["name"]: t for t in req["body"]["tools"]}
            self.assertEqual(tools["computer"], {"type": "computer_20250124", "name": "computer",
                                                 "display_width_px": 1280,
                                                 "display_height_px": 800})
            self.assertIn("input_schema", tools["execute"])

    def test_openai_computer_tool_is_a_function(self):
        p = Probe(self, "openai")
        with FakeLLM([{"text": "ok"}]) as srv:
            rc, ev, err = p.run(srv, "--user", "look", "--os", "1280x800")
            self.assertEqual(rc, 0, (ev, err))
            tools = {t["function"]["name"]: t for t in srv.requests[0]["body"]["tools"]}
            action = tools["computer"]["function"]["parameters"]["properties"]["action"]
            self.assertIn("left_click_drag", action["enum"])
            self.assertIn("zoom", action["enum"])


class Fragments(unittest.TestCase):
    def awkward(self, fmt, **turn_extra):
        text = "Caf\u00e9 \u2713 \U0001F600 end"
        tb = text.encode()
        turn = {"text": text, "text_splits": [4, tb.index("\u2713".encode()) + 1,
                                              tb.index("\U0001F600".encode()) + 2],
                "tool_calls": [{"id": "call_q", "name": "execute", "arguments": ARGS}],
                "arg_splits": awkward_splits()}
        turn.update(turn_extra)
        p = Probe(self, fmt)
        with FakeLLM([turn]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), text)
            self.assertEqual(calls_of(ev)[0]["arguments"], ARGS)
            self.assertEqual(calls_of(ev)[0]["args"]["code"], CODE)
            saved = p.saved()["messages"][1]["content"]
            self.assertEqual(saved[0]["text"], text)
            self.assertEqual(saved[1]["arguments"], ARGS)

    def test_openai_awkward_splits(self):
        self.awkward("openai")

    def test_anthropic_awkward_splits(self):
        self.awkward("anthropic")

    def test_openai_one_byte_per_network_chunk_crlf_comments(self):
        self.awkward("openai", net_chunk=1, crlf=True, comments=True)

    def test_anthropic_one_byte_fragments_crlf_comments(self):
        t = {"arg_splits": None, "arg_chunk": 1, "net_chunk": 7, "crlf": True, "comments": True}
        self.awkward("anthropic", **t)

    def test_invalid_arguments_are_reported(self):
        turn = {"tool_calls": [{"id": "c1", "name": "execute", "arguments": '{"code": "x'}]}
        p = Probe(self, "openai")
        with FakeLLM([turn]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            c = calls_of(ev)[0]
            self.assertFalse(c["valid"])
            self.assertIn("not valid JSON", c["args_error"])
            self.assertEqual(c["arguments"], '{"code": "x')

    def test_slow_server_still_answers(self):
        p = Probe(self, "anthropic")
        with FakeLLM([{"text": "slow but sure", "text_chunk": 3, "delay": 0.05}]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "slow but sure")
            self.assertGreater(len([e for e in ev if e["event"] == "text"]), 3)


class Results(unittest.TestCase):
    def test_images_travel_and_only_the_newest_are_kept(self):
        for fmt in ("openai", "anthropic"):
            with self.subTest(fmt=fmt):
                p = Probe(self, fmt)
                png = os.path.join(p.dir, "shot.png")
                with open(png, "wb") as f:
                    f.write(PNG)
                turns = [{"text": "step %d" % i,
                          "tool_calls": [{"id": "call_%d" % i, "name": "computer",
                                          "arguments": {"action": "screenshot"}}]}
                         for i in range(4)] + [{"text": "finished"}]
                with FakeLLM(turns) as srv:
                    rc, ev, err = p.run(srv, "--user", "go", "--os", "640x400")
                    self.assertEqual(rc, 0, (ev, err))
                    for i in range(4):
                        rc, ev, err = p.run(srv, "--result", "call_%d" % i, "shot %d" % i,
                                            "--image", png, "640x400", "--os", "640x400",
                                            "--keep-images", "2")
                        self.assertEqual(rc, 0, (ev, err))
                    body = srv.requests[-1]["body"]
                    raw = json.dumps(body)
                    b64 = base64.b64encode(PNG).decode()
                    self.assertEqual(raw.count(b64), 2)
                    self.assertEqual(raw.count("[screenshot omitted]"), 2)
                    msgs = body["messages"]
                    if fmt == "openai":
                        tool = [m for m in msgs if m["role"] == "tool"]
                        self.assertEqual([m["tool_call_id"] for m in tool],
                                         ["call_%d" % i for i in range(4)])
                        self.assertEqual(msgs[-1]["role"], "user")
                        self.assertEqual(msgs[-1]["content"][1]["image_url"]["url"],
                                         "data:image/png;base64," + b64)
                    else:
                        res = msgs[-1]["content"][0]
                        self.assertEqual(res["tool_use_id"], "call_3")
                        self.assertEqual(res["content"][1]["source"],
                                         {"type": "base64", "media_type": "image/png",
                                          "data": b64})
                    # screenshots are files beside the conversation, not inline
                    saved = open(p.conv).read()
                    self.assertNotIn(b64[:40], saved)
                    self.assertEqual(len(os.listdir(os.path.join(p.dir, "conv.images"))), 4)

    def test_context_window_drops_oldest_turns(self):
        p = Probe(self, "anthropic")
        turns = [{"text": "answer %d" % i} for i in range(4)]
        with FakeLLM(turns) as srv:
            for i in range(3):
                rc, ev, err = p.run(srv, "--user", "question %d " % i + "x" * 12000)
                self.assertEqual(rc, 0, (ev, err))
            rc, ev, err = p.run(srv, "--user", "newest question", "--context-window", "7000",
                                "--max-tokens", "1000")
            self.assertEqual(rc, 0, (ev, err))
            self.assertGreater(last(ev)["dropped"], 0)
            body = srv.requests[-1]["body"]
            raw = json.dumps(body)
            self.assertNotIn("question 0", raw)
            self.assertIn("newest question", raw)
            self.assertEqual(body["system"], "You are a test.")
            self.assertEqual(body["messages"][0]["role"], "user")


class Retries(unittest.TestCase):
    def test_429_then_success_waits_retry_after(self):
        p = Probe(self, "openai")
        turn = {"text": "after the wait", "faults": [{"status": 429, "retry_after": "1"}]}
        with FakeLLM([turn]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "after the wait")
            self.assertEqual(len(srv.requests), 2)
            self.assertGreaterEqual(srv.requests[1]["time"] - srv.requests[0]["time"], 1.0)
            retry = [e for e in ev if e["event"] == "retry"]
            self.assertEqual(len(retry), 1)
            self.assertGreaterEqual(retry[0]["delay_ms"], 1000)
            self.assertIn("HTTP 429", retry[0]["why"])
            self.assertEqual(last(ev)["attempts"], 2)

    def test_500_gives_up_after_exactly_5_attempts(self):
        for fmt in ("openai", "anthropic"):
            with self.subTest(fmt=fmt):
                p = Probe(self, fmt)
                turn = {"text": "never", "faults": [{"status": 500, "repeat": 6}]}
                with FakeLLM([turn]) as srv:
                    rc, ev, err = p.run(srv, "--user", "go")
                    self.assertEqual(rc, 1)
                    self.assertEqual(len(srv.requests), 5)
                    self.assertEqual(last(ev)["message"],
                                     "%s: HTTP 500: fakellm status 500 (api_error) "
                                     "(gave up after 5 attempts)" % fmt)
                    self.assertEqual(len([e for e in ev if e["event"] == "retry"]), 4)
                    self.assertEqual([m["role"] for m in p.saved()["messages"]], ["user"])

    def test_401_is_not_retried_and_quotes_the_server(self):
        p = Probe(self, "openai")
        body = {"error": {"message": "Incorrect API key provided: sk-test***", "type":
                          "invalid_request_error", "code": "invalid_api_key"}}
        with FakeLLM([{"text": "x", "faults": [{"status": 401, "body": body}]}]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 1)
            self.assertEqual(len(srv.requests), 1)
            self.assertEqual(last(ev)["message"],
                             "openai: HTTP 401: Incorrect API key provided: sk-test*** "
                             "(invalid_request_error)")

    def test_dropped_connection_is_retried(self):
        p = Probe(self, "anthropic")
        with FakeLLM([{"text": "second try", "faults": [{"close": True}]}]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "second try")
            self.assertEqual(len(srv.requests), 2)

    def test_overload_event_before_content_is_retried(self):
        p = Probe(self, "anthropic")
        fault = {"stream_error": {"type": "overloaded_error", "message": "Overloaded"}}
        with FakeLLM([{"text": "recovered", "faults": [fault]}]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "recovered")
            self.assertIn("Overloaded", [e for e in ev if e["event"] == "retry"][0]["why"])

    def test_cut_before_content_is_retried(self):
        p = Probe(self, "openai")
        with FakeLLM([{"text": "whole", "faults": [{"cut_after_events": 1}]}]) as srv:
            rc, ev, err = p.run(srv, "--user", "go")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(text_of(ev), "whole")
            self.assertEqual(len(srv.requests), 2)


class Failures(unittest.TestCase):
    def test_cut_stream_after_text_keeps_conversation(self):
        for fmt in ("openai", "anthropic"):
            with self.subTest(fmt=fmt):
                p = Probe(self, fmt)
                turn = {"text": "This answer will be cut off in the middle, sadly.",
                        "text_chunk": 8, "faults": [{"cut_after_events": 4}]}
                with FakeLLM([{"text": "first answer"}, turn]) as srv:
                    rc, ev, err = p.run(srv, "--user", "first")
                    self.assertEqual(rc, 0, (ev, err))
                    rc, ev, err = p.run(srv, "--user", "second")
                    self.assertEqual(rc, 1)
                    self.assertTrue(text_of(ev))  # part of it was shown
                    self.assertRegex(last(ev)["message"],
                                     "^%s: the stream was cut before the answer was complete" % fmt)
                    self.assertEqual(len(srv.requests), 2)  # not retried
                    saved = p.saved()
                    self.assertEqual([m["role"] for m in saved["messages"]],
                                     ["user", "assistant", "user"])
                    self.assertEqual(saved["messages"][2]["content"][0]["text"], "second")

    def test_garbage_instead_of_json(self):
        for fault, want in (({"garbage": "<html>Bad gateway</html>"},
                             'openai: the response is not JSON: "<html>Bad gateway</html>"'),
                            ({"garbage_stream": "{{{ nonsense"},
                             'openai: the stream holds an event that is not JSON: "{{{ nonsense"')):
            with self.subTest(fault=fault):
                p = Probe(self, "openai")
                with FakeLLM([{"text": "x", "faults": [fault]}]) as srv:
                    rc, ev, err = p.run(srv, "--user", "go")
                    self.assertEqual(rc, 1)
                    self.assertEqual(last(ev)["message"], want)
                    self.assertEqual(len(srv.requests), 1)

    def test_unreachable_server(self):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()  # nobody listens there now
        p = Probe(self, "openai")
        args = p.args(None, "--user", "go", "--base", "http://127.0.0.1:%d/v1" % port)
        r = h.run(args, env=p.env(), timeout=60)
        self.assertEqual(r.returncode, 1)
        ev = [json.loads(x) for x in r.stdout.decode().splitlines()]
        self.assertRegex(last(ev)["message"],
                         r"^openai: cannot reach http://127\.0\.0\.1:%d/v1/chat/completions: " % port)
        self.assertEqual([m["role"] for m in p.saved()["messages"]], ["user"])

    def test_missing_key_for_vendor(self):
        p = Probe(self, "anthropic")
        r = h.run([PROBE, "--provider", "anthropic", "--conversation", p.conv, "--user", "x"],
                  env=p.env(), timeout=30)
        self.assertEqual(r.returncode, 1)
        self.assertIn("anthropic: no API key (pass --api-key or set ANTHROPIC_API_KEY)",
                      r.stdout.decode())

    def test_no_data_for_too_long(self):
        p = Probe(self, "openai")
        # Silent after its first event: every attempt times out, none shows text.
        turn = {"text": "late", "delay": 4}
        with FakeLLM([turn] * 5) as srv:
            rc, ev, err = p.run(srv, "--user", "go",
                                env=p.env(DESKHAND_HTTP_IDLE_TIMEOUT="1",
                                          DESKHAND_RETRY_BASE_MS="1"))
            self.assertEqual(rc, 1)
            self.assertIn("no data from http://127.0.0.1:%d/v1/chat/completions for 1 s"
                          % srv.port, last(ev)["message"])


class Durability(unittest.TestCase):
    def test_api_key_never_written(self):
        for fmt, var in (("openai", "OPENAI_API_KEY"), ("anthropic", "ANTHROPIC_API_KEY")):
            with self.subTest(fmt=fmt):
                p = Probe(self, fmt)
                png = os.path.join(p.dir, "s.png")
                with open(png, "wb") as f:
                    f.write(PNG)
                turns = [{"text": "a", "tool_calls": [{"id": "k1", "name": "computer",
                                                       "arguments": {"action": "screenshot"}}]},
                         {"text": "b"}]
                with FakeLLM(turns) as srv:
                    rc, ev, err = p.run(srv, "--user", "go", "--os", "64x64")
                    self.assertEqual(rc, 0, (ev, err))
                    # the second turn takes the key from the environment
                    rc, ev, err = p.run(srv, "--result", "k1", "done", "--image", png, "64x64",
                                        key=False, env=p.env(**{var: KEY}))
                    self.assertEqual(rc, 0, (ev, err))
                    self.assertIn(KEY, json.dumps(srv.requests[1]["headers"]))
                for root, _, files in os.walk(p.dir):
                    for name in files:
                        with open(os.path.join(root, name), "rb") as f:
                            self.assertNotIn(KEY.encode(), f.read(), name)

    def slow_probe(self, fmt, srv, p):
        turn_args = p.args(srv, "--user", "remember this")
        proc = h.Proc(turn_args, env=p.env(), stdout=subprocess.PIPE)
        self.addCleanup(proc.stop)
        self.assertEqual(srv.wait_requests(1, timeout=30), 1)
        ready, _, _ = select.select([proc.p.stdout], [], [], 30)
        self.assertTrue(ready, "no output from the probe")
        line = proc.p.stdout.readline()  # the first text delta has been shown (whole lines)
        self.assertEqual(json.loads(line)["event"], "text")
        return proc

    def test_kill_9_while_slow_leaves_readable_conversation(self):
        p = Probe(self, "anthropic")
        slow = {"text": "a long answer " * 20, "text_chunk": 10, "delay": 0.3}
        with FakeLLM([slow]) as srv:
            proc = self.slow_probe("anthropic", srv, p)
            os.kill(proc.pid, signal.SIGKILL)
            proc.p.wait(30)
            saved = p.saved()
            self.assertEqual(saved["messages"][0]["content"][0]["text"], "remember this")
            self.assertEqual(sorted(os.listdir(p.dir)), ["conv.json"])

    def test_ctrl_c_cancels_cleanly(self):
        p = Probe(self, "openai")
        slow = {"text": "a long answer " * 20, "text_chunk": 10, "delay": 0.3}
        with FakeLLM([slow]) as srv:
            proc = self.slow_probe("openai", srv, p)
            os.kill(proc.pid, signal.SIGINT)
            rc = proc.p.wait(30)
            rest = [json.loads(x) for x in proc.p.stdout.read().decode().splitlines()]
            self.assertEqual(rc, 4)
            self.assertEqual(last(rest)["status"], "cancelled")
            self.assertEqual([m["role"] for m in p.saved()["messages"]], ["user"])

    def test_script_provider_replays_then_ends(self):
        p = Probe(self, "script")
        script = os.path.join(p.dir, "demo.json")
        with open(script, "w") as f:
            json.dump({"turns": [
                {"text": "Looking.", "tool_calls": [{"name": "computer",
                                                     "arguments": {"action": "screenshot"}}]},
                {"text": "Done."}]}, f)
        rc, ev, err = p.run(None, "--user", "demo", "--script", script, key=False)
        self.assertEqual(rc, 0, (ev, err))
        self.assertEqual(calls_of(ev)[0]["id"], "script_1_1")
        rc, ev, err = p.run(None, "--result", "script_1_1", "ok", "--script", script, key=False)
        self.assertEqual(rc, 0, (ev, err))
        self.assertEqual(text_of(ev), "Done.")
        rc, ev, err = p.run(None, "--user", "more?", "--script", script, key=False)
        self.assertEqual(rc, 3)
        self.assertEqual(last(ev)["status"], "exhausted")


if __name__ == "__main__":
    h.main()
