"""deskhand mcp with a controlling terminal: its standard input and output
stay the protocol's pipes while a pseudo-terminal the test holds is its
/dev/tty (tests/lib/mcpraw.py's launcher: a new session, the terminal
opened as its controlling one, then exec). The terminal is a human's
channel: a "y" there approves. The protocol stream is not: "y" lines sent
on standard input are JSON parse errors, never an answer, and an
elicitation answered by the host (without --trust-host-approvals) does
not count either; the question stays open until the terminal answers."""

import harness as h
from test_mcp_raw import CLICK, Desk, errors_between, screen

QUESTION = rb"Perform this action\? \[y=run n=deny"


class Terminal(Desk):
    def test_the_terminal_approves(self):
        s = self.server(tty=True)
        self.shot(s)
        self.assertIn("this terminal", s.stderr())
        rid = s.tool("click", CLICK)
        s.tty_expect(rb"left_click at 100,200 \(screen 150,300\)")
        s.tty_expect(QUESTION)
        s.tty_send("y\n")
        r = s.response(rid)["result"]
        self.assertFalse(r["isError"], r)
        self.wait_click(screen(CLICK["x"]), screen(CLICK["y"]))
        evs = self.events_of(s, self.input_ids(s)[0])
        self.assertEqual([e["event"] for e in evs], ["proposed", "asked", "approved", "executed"])
        self.assertEqual((evs[2]["by"], evs[2]["from"]), ("user", "terminal"))

    def test_the_protocol_stream_cannot_answer(self):
        s = self.server(tty=True, capabilities={"elicitation": {}})
        self.shot(s)
        rid = s.tool("click", CLICK)
        s.tty_expect(QUESTION)
        el = s.wait(lambda m: m.get("method") == "elicitation/create", what="elicitation")
        # The attacker's yeses, on the protocol's stream, between messages.
        for i, line in enumerate((b"y\n", b"yes\n", b"Y\n", b"y\r\n", b"\n\n\ny\n",
                                  b"y\x04\n", b"e\n", b"a\n")):
            with self.subTest(line=line):
                mark = s.mark()
                s.send(line)
                got = errors_between(s, mark, s.request("ping", id="p%d" % i))
                # One parse error per line with text (blank lines are nothing).
                self.assertEqual([m["error"]["code"] for m in got], [-32700], got)
        # A yes that is JSON, but no message; and the host's own yes.
        mark = s.mark()
        s.send('"y"')
        got = errors_between(s, mark, s.request("ping", id="p-json"))
        self.assertEqual([m["error"]["code"] for m in got], [-32600], got)
        s.respond(el["id"], {"action": "accept", "content": {"approve": True}})
        s.wait_stderr("does not count")
        s.ping()
        # Still open: the call unanswered, the log at its question.
        self.assertEqual(s.responses(rid), [])
        aid = self.input_ids(s)[0]
        self.assertEqual([e["event"] for e in self.events_of(s, aid)], ["proposed", "asked"])
        # The human says no on the terminal.
        s.tty_send("n\n")
        r = s.response(rid)["result"]
        self.assertTrue(r["isError"], r)
        last = self.events_of(s, aid)[-1]
        self.assertEqual((last["event"], last["by"], last["from"]), ("denied", "user", "terminal"))
        self.assert_not_run(s)
        # Nothing the stream sent meanwhile was taken for a later question's answer.
        rid2 = s.tool("click", CLICK)
        s.tty_expect(QUESTION)
        s.ping()
        self.assertEqual(s.responses(rid2), [])
        s.tty_send("n\n")
        self.assertTrue(s.response(rid2)["result"]["isError"])
        self.assert_not_run(s)
        self.nothing_reached()


if __name__ == "__main__":
    h.main()
