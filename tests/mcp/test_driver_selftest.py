"""The test host itself (tests/mcp/driver.mjs through tests/lib/mcplib.py)
against a server written with the SDK's own McpServer (fake_server.mjs),
before it judges deskhand's: it lists every page and compiles every
schema, calls, reports progress, aborts (the server sees the
cancellation), answers elicitations, hands a stdio server its terminal,
and does all of it over stdio and Streamable HTTP."""
import json
import os
import shutil
import subprocess
import unittest

import harness as h
import mcplib

MISSING = mcplib.require_node()
HERE = os.path.dirname(os.path.abspath(__file__))
FAKE = os.path.join(HERE, "fake_server.mjs")
NODE = shutil.which("node") or "node"
TOKEN = "0123456789abcdef0123456789abcdef"


def read_log(path):
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(l) for l in f if l.strip()]


class Cases:
    """What holds on either transport; start() is the transport's."""

    def setUp(self):
        self.dir = h.tmpdir()
        self.log = os.path.join(self.dir, "server.jsonl")
        self.clients = []

    def tearDown(self):
        for c in self.clients:
            c.close()
        # Nothing the SDK found odd (its onerror), unless the case meant it.
        errors = [e for c in self.clients for e in c.events(lambda e: e["event"] == "error")]
        if not getattr(self, "errors_expected", False):
            self.assertEqual(errors, [])

    def server_log(self, event=None):
        return [e for e in read_log(self.log) if event is None or e["event"] == event]

    def wait_log(self, event, timeout=30):
        found = h.wait_for(lambda: self.server_log(event), timeout)
        self.assertTrue(found, "the server never logged %s: %r" % (event, self.server_log()))
        return found

    def test_connects_and_says_who_the_server_is(self):
        c = self.start(client_name="selftest-host", client_version="9.8.7")
        self.assertEqual(c.connected["serverVersion"], {"name": "fake-mcp", "version": "1.2.3"})
        self.assertEqual(c.connected["protocolVersion"], "2025-11-25")
        self.assertIn("tools", c.connected["serverCapabilities"])
        info = c.server_info()
        self.assertTrue(info["ok"])
        self.assertEqual(info["instructions"], "a fake for the driver")
        init = self.wait_log("initialized")[0]
        self.assertEqual(init["clientInfo"], {"name": "selftest-host", "version": "9.8.7"})
        self.assertNotIn("elicitation", init["capabilities"])
        c.ping()

    def test_lists_the_tools_with_valid_schemas(self):
        c = self.start()
        tools = {t["name"]: t for t in c.list_tools()}
        self.assertEqual(set(tools), {"echo", "ask", "tty"})
        self.assertEqual(c.last_list["schema_errors"], [])
        self.assertEqual(c.last_list["pages"], 1)
        self.assertEqual(tools["echo"]["inputSchema"]["type"], "object")
        self.assertEqual(tools["echo"]["annotations"], {"readOnlyHint": True})
        self.assertEqual([t["name"] for t in c.list_tools()], list(tools))
        self.assertEqual(c.last_list["schema_errors"], [])

    def test_a_call_without_progress_asks_for_none(self):
        c = self.start()
        c.list_tools()
        tag = c.call_async("echo", {"text": "hi", "steps": 2})
        r = c.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["result"]["structuredContent"], {"text": "hi", "steps": 2})
        self.assertEqual(r["result"]["content"], [{"type": "text", "text": "hi"}])
        self.assertEqual(c.progress(tag), [])
        self.assertIsNone(self.wait_log("call")[0]["progressToken"])

    def test_progress_arrives_before_the_result(self):
        c = self.start()
        c.list_tools()
        tag = c.call_async("echo", {"text": "p", "steps": 3}, progress=True)
        r = c.wait_result(tag)
        self.assertTrue(r["ok"], r)
        prog = c.progress(tag)
        self.assertEqual([(p["progress"], p["total"], p["message"]) for p in prog],
                         [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")])
        order = [l for l in c.lines if l.get("tag") == tag]
        self.assertEqual(order[-1], r)
        call = self.wait_log("call")[0]
        # The SDK's progress token is the request's id.
        self.assertEqual(call["progressToken"], call["requestId"])

    def test_an_abort_is_a_cancellation_the_server_sees(self):
        trace = os.path.join(self.dir, "trace.jsonl")
        c = self.start(trace_file=trace)
        c.list_tools()
        tag = c.call_async("echo", {"text": "held", "until_cancelled": True}, progress=True)
        c.wait_event(lambda e: e.get("tag") == tag and e.get("event") == "progress")
        # Another call runs beside the held one.
        self.assertEqual(c.call("echo", {"text": "beside", "steps": 1})["structuredContent"]["text"],
                         "beside")
        c.abort(tag, reason="the test changed its mind")
        r = c.wait_result(tag)
        self.assertFalse(r["ok"])
        self.assertTrue(r["error"]["aborted"])
        # The SDK reports an abort with the timeout's code, -32001.
        self.assertEqual(r["error"]["code"], -32001)
        self.assertIn("the test changed its mind", r["error"]["message"])
        cancelled = self.wait_log("cancelled")
        held = [e for e in self.server_log("call")][0]
        self.assertEqual([e["requestId"] for e in cancelled], [held["requestId"]])
        self.assertEqual(cancelled[0]["reason"], "the test changed its mind")
        # What went out: the call, then notifications/cancelled naming it.
        sent = [l["msg"] for l in read_log(trace) if l["dir"] == "out"]
        call_id = [m["id"] for m in sent if m.get("method") == "tools/call"
                   and m["params"]["arguments"].get("text") == "held"][0]
        self.assertEqual([m["params"]["requestId"] for m in sent
                          if m.get("method") == "notifications/cancelled"], [call_id])
        # The connection goes on.
        self.assertEqual(c.call("echo", {"text": "after", "steps": 1})["structuredContent"]["text"],
                         "after")

    def test_the_sdks_timeout_cancels_too(self):
        c = self.start()
        tag = c.call_async("echo", {"text": "held", "until_cancelled": True}, timeout=0.2)
        r = c.wait_result(tag)
        self.assertFalse(r["ok"])
        self.assertEqual(r["error"]["code"], -32001)
        self.assertNotIn("aborted", r["error"])
        self.assertEqual(r["error"]["data"], {"timeout": 200})
        self.assertIn("timed out", self.wait_log("cancelled")[0]["reason"])

    def test_an_accepted_elicitation(self):
        c = self.start(elicitation="accept")
        self.assertIn("elicitation", self.wait_log("initialized")[0]["capabilities"])
        r = c.call("ask", {"question": "May I?"})
        self.assertEqual(r["structuredContent"], {"action": "accept", "content": {"approve": True}})
        ev = c.wait_event(lambda e: e.get("event") == "elicitation")
        self.assertEqual(ev["params"]["message"], "May I?")
        self.assertEqual(ev["answer"]["action"], "accept")
        self.assertEqual(self.wait_log("elicitation_result")[0]["result"]["action"], "accept")

    def test_a_declined_and_a_recorded_elicitation(self):
        c = self.start(elicitation="decline")
        self.assertEqual(c.call("ask", {"question": "No?"})["structuredContent"], {"action": "decline"})
        c.set_elicitation("record")
        self.assertEqual(c.call("ask", {"question": "Seen?"})["structuredContent"], {"action": "cancel"})
        c.set_elicitation("accept", {"approve": False})
        self.assertEqual(c.call("ask", {"question": "Given?"})["structuredContent"],
                         {"action": "accept", "content": {"approve": False}})
        self.assertEqual([e["params"]["message"] for e in c.events(lambda e: e["event"] == "elicitation")],
                         ["No?", "Seen?", "Given?"])

    def test_no_elicitation_capability_no_elicitation(self):
        c = self.start()
        r = c.call("ask", {"question": "Anyone?"})
        self.assertTrue(r["isError"])
        self.assertEqual(c.events(lambda e: e["event"] == "elicitation"), [])
        self.wait_log("elicitation_failed")

    def test_an_unknown_tool_is_an_error_result(self):
        c = self.start()
        r = c.call("no_such_tool", {})
        self.assertTrue(r["isError"])


@unittest.skipIf(MISSING, MISSING)
class Stdio(Cases, unittest.TestCase):
    def start(self, tty=False, quirks=False, broken_input=False, noise=False, **kw):
        args = [FAKE, "--log", self.log] + (["--quirks"] if quirks else []) + \
            (["--broken-input"] if broken_input else []) + (["--noise"] if noise else [])
        c = mcplib.McpClient(mcplib.stdio_config([NODE] + args, **kw), tty=tty)
        self.clients.append(c)
        return c

    def test_close_ends_the_server(self):
        c = self.start()
        self.assertIsInstance(c.connected["server_pid"], int)
        r = c.close()
        # The SDK ended its standard input, and it exited by itself.
        self.assertEqual(r["server_exit"], {"code": 0, "signal": None})

    def test_the_servers_stderr_goes_to_its_file(self):
        c = self.start()
        c.close()
        with open(c.config["stderr_file"]) as f:
            self.assertIn("fake-mcp: ready", f.read())

    def test_a_line_on_stdout_that_is_no_message_is_reported(self):
        self.errors_expected = True
        c = self.start(noise=True)
        e = c.wait_event(lambda e: e.get("event") == "error")
        self.assertIn("JSON", e["message"])
        self.assertEqual(c.call("echo", {"text": "still", "steps": 1})["structuredContent"]["text"],
                         "still")

    def test_a_server_that_cannot_start(self):
        with self.assertRaises(mcplib.ConnectFailed) as cm:
            mcplib.McpClient(mcplib.stdio_config([os.path.join(self.dir, "nothing-here")]))
        self.assertEqual(cm.exception.error["code"], "ENOENT")

    def test_without_a_terminal_there_is_no_tty(self):
        r = self.start().call("tty", {"prompt": "?"})
        self.assertTrue(r["isError"])
        self.assertIn("no controlling terminal", r["content"][0]["text"])

    def test_the_terminal_reaches_the_server(self):
        c = self.start(tty=True)
        tag = c.call_async("tty", {"prompt": "Allow? "})
        c.tty_expect(rb"Allow\? ")
        c.tty_send("yes\n")
        r = c.wait_result(tag)
        self.assertTrue(r["ok"], r)
        self.assertEqual(r["result"]["content"][0]["text"], "yes")

    def test_pages_strict_schemas_and_the_sdks_output_check(self):
        c = self.start(quirks=True)
        tools = c.list_tools()
        self.assertEqual(c.last_list["pages"], 2)
        self.assertEqual([t["name"] for t in tools],
                         ["plain", "typo_output", "uncompilable", "mismatch"])
        errs = c.last_list["schema_errors"]
        bad = sorted({(e["tool"], e["which"]) for e in errs})
        self.assertEqual(bad, [("typo_output", "outputSchema"), ("uncompilable", "outputSchema")])
        # Strict compiling finds the typo the SDK's own (lax) compiler lets by.
        self.assertTrue(any("requird" in e["error"] for e in errs), errs)
        self.assertTrue(any(e["tool"] == "uncompilable" and "SDK" in e["error"] for e in errs), errs)
        # The SDK checks structuredContent against the output schema of a
        # tool from the second page too.
        with self.assertRaises(mcplib.McpCallError) as cm:
            c.call("mismatch", {})
        self.assertEqual(cm.exception.code, -32602)
        self.assertIn("output schema", cm.exception.error["message"])
        self.assertEqual(c.call("plain", {})["content"][0]["text"], "plain")

    def test_an_input_schema_that_is_no_object_fails_the_list(self):
        # The SDK's own result schema refuses it: a host would see no tools.
        c = self.start(quirks=True, broken_input=True)
        with self.assertRaises(mcplib.McpCallError) as cm:
            c.list_tools()
        self.assertIn('"inputSchema"', cm.exception.error["message"])
        self.assertEqual(cm.exception.error["name"], "$ZodError")


@unittest.skipIf(MISSING, MISSING)
class Http(Cases, unittest.TestCase):
    def setUp(self):
        super().setUp()
        self.srv = h.Proc([NODE, FAKE, "--http", "--token", TOKEN, "--log", self.log],
                          stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                          stderr=open(os.path.join(self.dir, "server.stderr"), "wb"), cwd=HERE)
        line = self.srv.p.stdout.readline()
        self.assertTrue(line, "the HTTP fake did not start")
        self.url = json.loads(line)["url"]

    def tearDown(self):
        super().tearDown()
        self.srv.p.stdin.close()
        self.srv.stop()

    def start(self, token=TOKEN, headers=None, **kw):
        c = mcplib.McpClient(mcplib.http_config(self.url, token=token, headers=headers, **kw))
        self.clients.append(c)
        return c

    def test_a_wrong_token_fails_the_connection(self):
        with self.assertRaises(mcplib.ConnectFailed) as cm:
            self.start(token="wrong")
        self.assertEqual(cm.exception.error["code"], 401)

    def test_the_headers_it_sends(self):
        c = self.start(headers={"Origin": "http://elsewhere.example"})
        self.assertTrue(c.connected["sessionId"])
        c.list_tools()
        posts = [e["headers"] for e in self.server_log("http") if e["method"] == "POST"]
        self.assertTrue(all(p["origin"] == "http://elsewhere.example" for p in posts), posts)
        self.assertTrue(all(p["authorization"] == "Bearer " + TOKEN for p in posts), posts)
        # initialize goes without a version header; what follows carries it.
        self.assertIsNone(posts[0]["mcp-protocol-version"])
        self.assertEqual({p["mcp-protocol-version"] for p in posts[1:]}, {"2025-11-25"})
        self.assertEqual({p["mcp-session-id"] for p in posts[1:]}, {c.connected["sessionId"]})
        c.close()
        self.assertIn("DELETE", [e["method"] for e in self.server_log("http")])


if __name__ == "__main__":
    h.main()
