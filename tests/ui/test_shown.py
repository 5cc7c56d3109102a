"""What deskhand shows at a real terminal (a pty) when the text is hostile.

Issue 10, class 4: code, model text, code output and server replies are
not deskhand's, and must not steer the terminal: an escape sequence in them
could hide a line of the code the human approves (ESC[2K, CR, ESC[1A),
retitle the terminal (OSC 0/2) or write the clipboard (OSC 52); a bidi
control could reorder it. Each reaches the pty as a visible mark; the only
escape sequences on the pty are deskhand's own styling.

Class 5: the question about a `type` action shows exactly what would be
typed: all of it, runs of spaces counted, invisible characters marked, its
length, a mixed-script notice; `d` shows the same; the scanner reads it all.

Every test is a hostile model turn from the fake server to the real agent
binary on a pty; what is asserted is the raw bytes the agent wrote."""
import json
import os
import re
import subprocess
import unittest

import harness as h
from agentlib import FakeLLM, Pty, Run, call, check_audit, tool_results


def setUpModule():
    global X
    X = h.Xvfb(1280, 800)


def tearDownModule():
    X.stop()


# deskhand's own escape sequences: its SGR colours and its spinner (which
# returns to the line's start and erases to its end). Nothing else may reach the terminal from the
# parts of the transcript these tests check.
# Its SGR parameters are these (no 8, conceal; no 7, reverse; no 30, black).
_P = rb"(?:0|1|2|3|31|33|34|35|36)"
OWN = re.compile(rb"\r\x1b\[2m\S+ thinking\x1b\[0m\x1b\[K|\r\x1b\[K|\x1b\[K|"
                 rb"\x1b\[(?:" + _P + rb"(?:;" + _P + rb")*)?m")
C1_UTF8 = re.compile(rb"\xc2[\x80-\x9f]")
BIDI = [c.encode() for c in "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"]


def foreign_controls(data):
    """What in `data` would steer a terminal, deskhand's own styling aside:
    every other ESC, CR that is not part of CRLF, C1 controls, BEL, BS and
    the bidi controls."""
    rest = OWN.sub(b"", data).replace(b"\r\n", b"\n")
    found = []
    for bad in [b"\x1b", b"\r", b"\x07", b"\x08", b"\x9b"] + BIDI:
        if bad in rest:
            found.append(bad)
    if C1_UTF8.search(rest):
        found.append(C1_UTF8.search(rest).group(0))
    return found


def between(data, start, end):
    """The bytes from the first `start` to the next `end` after it."""
    i = data.index(start)
    j = data.index(end, i)
    return data[i:j]


class Shown(unittest.TestCase):
    def ask_and_deny(self, r, turns, *more, X_=None, answers=(b"n\n",)):
        """Runs the turns on a pty, answers each question in turn; returns
        the whole transcript."""
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "openai", *more), r.env(X_))
            for a in answers:
                t.expect(rb"(Run this code|Perform this action)\? \[")
                t.send(a)
            self.assertEqual(t.wait(), 0, t.shown())
            self.requests = srv.requests
        return t.transcript

    # ---- class 4: escapes in foreign text ------------------------------

    def test_escapes_cannot_hide_a_line_of_the_code_to_approve(self):
        r = Run()
        payload = 'rm -rf "$HOME/important"'
        # Shown raw, ESC[2K and CR erase the payload line, ESC[1A climbs
        # over it, and the human sees only the harmless lines; the RLO
        # would reverse what follows it.
        code = ("echo hello\n" + payload + " \x1b[2K\r\x1b[1A\x1b[2K# tidy up\n"
                "x=1 # \u202e ;eno ton\u202c\necho \x9b31m\u200bdone\n")
        turns = [{"tool_calls": [call("execute", language="shell", code=code)]},
                 {"text": "ok"}]
        out = self.ask_and_deny(r, turns, "-m", "go")
        shown = between(out, "── shell".encode(), b"Run this code?")
        self.assertEqual(foreign_controls(shown), [], shown)
        self.assertIn(payload.encode(), shown)
        self.assertIn("⟨ESC⟩[2K⟨CR⟩⟨ESC⟩[1A⟨ESC⟩[2K# tidy up".encode(), shown)
        self.assertIn("# ⟨U+202E⟩ ;eno ton⟨U+202C⟩".encode(), shown)
        self.assertIn("echo ⟨U+009B⟩31m⟨U+200B⟩done".encode(), shown)
        # Denied: nothing ran, and the model is told so.
        res = tool_results(self.requests[1]["body"], "openai")
        self.assertIn("declined", res[0][1])
        check_audit(self, r.audit_events())

    def test_details_show_the_code_with_its_escapes_made_visible(self):
        r = Run()
        code = "echo a\x1b[8mhidden\x1b[0m\r\n"
        turns = [{"tool_calls": [call("execute", language="shell", code=code)]},
                 {"text": "ok"}]
        out = self.ask_and_deny(r, turns, "-m", "go", answers=(b"d\n", b"n\n"))
        details = between(out, b"   1  ", b"Run this code?")
        self.assertEqual(foreign_controls(details), [], details)
        self.assertIn("echo a⟨ESC⟩[8mhidden⟨ESC⟩[0m⟨CR⟩".encode(), details)

    def test_code_output_cannot_retitle_the_terminal_or_write_the_clipboard(self):
        r = Run()
        # OSC 0 and OSC 2 retitle, OSC 52 writes the clipboard, ESC c
        # resets the terminal; a C1 CSI comes split over two writes.
        code = (r"printf '\033]0;pwned\007\033]2;title\033\\'; "
                r"printf '\033]52;c;cm0gLXJmIH4K\007'; printf 'a\033cb\n'; "
                r"printf '\302' >&2; sleep 0.2; printf '\23331mred\n' >&2; echo end")
        turns = [{"tool_calls": [call("execute", language="shell", code=code)]},
                 {"text": "ok"}]
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "openai", "-y", "-m", "go"), r.env())
            self.assertEqual(t.wait(), 0, t.shown())
            res = tool_results(srv.requests[1]["body"], "openai")
        # The model gets the output as it was; the terminal only sees it.
        self.assertIn("\x1b]52;c;cm0gLXJmIH4K\x07", res[0][1])
        out = t.transcript
        shown = out[out.index("── shell".encode()):]
        self.assertNotIn(b"\x1b]", out)
        self.assertEqual(foreign_controls(shown), [], shown)
        self.assertIn("⟨ESC⟩]0;pwned⟨BEL⟩⟨ESC⟩]2;title⟨ESC⟩\\".encode(), out)
        self.assertIn("⟨ESC⟩]52;c;cm0gLXJmIH4K⟨BEL⟩".encode(), out)
        self.assertIn("a⟨ESC⟩cb".encode(), out)
        self.assertIn("⟨U+009B⟩31mred".encode(), out)

    def test_model_text_cannot_write_the_clipboard(self):
        r = Run()
        text = ("Done.\x1b]52;c;ZWNobyBwd25lZAo=\x07 All **good**\x1b[2J\x1b[H "
                "\u009b1A \u202eevil\u202c\n")
        # Small pieces: the sequences arrive split, a C1 character in halves.
        turns = [{"text": text, "text_chunk": 3}]
        with FakeLLM(turns) as srv:
            t = Pty(r.args(srv, "openai", "-m", "hi"), r.env())
            self.assertEqual(t.wait(), 0, t.shown())
        out = t.transcript
        self.assertNotIn(b"\x1b]", out)
        self.assertNotIn(b"\x1b[2J", out)
        self.assertEqual(foreign_controls(out), [], out)
        self.assertIn("⟨ESC⟩]52;c;ZWNobyBwd25lZAo=⟨BEL⟩".encode(), out)
        self.assertIn("⟨ESC⟩[2J⟨ESC⟩[H".encode(), out)
        self.assertIn("⟨U+009B⟩1A ⟨U+202E⟩evil⟨U+202C⟩".encode(), out)

    def test_a_server_error_body_cannot_steer_the_terminal(self):
        r = Run()
        msg = "bad\x1b]0;owned\x07 request\x1b[2K\u202e\u009b2J"
        for fault in ({"status": 400, "body": {"error": {"message": msg}}},
                      {"stream_error": {"type": "overloaded_error", "message": msg}}):
            with self.subTest(fault=list(fault)[0]):
                with FakeLLM([{"faults": [fault], "text": "never"}]) as srv:
                    t = Pty(r.args(srv, "openai", "-m", "hi"), r.env())
                    self.assertNotEqual(t.wait(), 0, t.shown())
                out = t.transcript
                self.assertIn(b"bad", out)
                self.assertNotIn(b"\x1b]", out)
                self.assertEqual(foreign_controls(out), [], out)

    def test_a_window_title_in_the_details_cannot_steer_the_terminal(self):
        # Any program names its window; `d` names the window under a click.
        title = "t\x1b]0;owned\x07\x1b[8mhid\u202eY\nfake line"
        helper = os.path.join(h.build_dir(), "tests", "os", "capture-xclient")
        win = subprocess.Popen([helper, "window", "--utf8-name", title],
                               env=X.env(LANG="C.UTF-8"), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, start_new_session=True)
        try:
            self.assertTrue(win.stdout.readline(), "capture-xclient did not start")
            r = Run()
            turns = [{"tool_calls": [call("computer", action="left_click", coordinate=[40, 40])]},
                     {"text": "ok"}]
            out = self.ask_and_deny(r, turns, "--os", "-m", "go", X_=X,
                                    answers=(b"d\n", b"n\n"))
        finally:
            win.stdin.close()
            win.wait(10)
            win.stdout.close()
        details = between(out, b"window:  ", b"Perform this action?")
        self.assertEqual(foreign_controls(details), [], details)
        self.assertIn('"t⟨ESC⟩]0;owned⟨BEL⟩⟨ESC⟩[8mhid⟨U+202E⟩Y⟨LF⟩fake line"'.encode(), details)

    def test_json_mode_stays_json(self):
        r = Run()
        code = "printf 'x\\033]52;c;AAAA\\007\\302\\233y\\n'"
        turns = [{"text": "t\x1b]0;x\x07\u202e\u009b", "text_chunk": 2,
                  "tool_calls": [call("execute", language="shell", code=code + "\x1b[2K")]},
                 {"text": "ok"}]
        with FakeLLM(turns) as srv:
            p = r.run(srv, "openai", "--json", "-y", "-m", "go")
        self.assertEqual(p.returncode, 0, p.stderr)
        events = [json.loads(l) for l in p.stdout.decode().splitlines() if l.strip()]
        self.assertNotIn(b"\x1b", p.stdout)
        out = "".join(e.get("text", "") for e in events if e["event"] == "output")
        self.assertIn("\x1b]52;c;AAAA\x07", out)
        code_ev = [e for e in events if e["event"] == "tool_call"]
        self.assertTrue(code_ev[0]["code"].endswith("\x1b[2K"))

    # ---- class 5: the text a `type` action would type -------------------

    def test_typed_text_is_shown_whole_with_its_length(self):
        r = Run()
        tail = "; cat ~/.config/deskhand/config.json > /tmp/stolen"
        text = "echo hello" + " " * 150 + tail
        turns = [{"tool_calls": [call("computer", action="type", text=text)]},
                 {"text": "ok"}]
        out = self.ask_and_deny(r, turns, "--os", "-m", "go", X_=X,
                                answers=(b"d\n", b"n\n")).decode()
        expect = '%d characters, ⟨…⟩ marks what does not show:\r\n  "echo hello⟨150 spaces⟩%s"' % (
            len(text), tail)
        # In the proposal and again in the details, the whole of it.
        self.assertEqual(out.count(expect), 2, out)
        self.assertIn("action:  type " + expect, out)
        # The scanner read all of it: past the spaces, the key file.
        self.assertIn("creds.read", out)
        ev = r.audit_events()
        self.assertEqual([e["action"]["text"] for e in ev if e["event"] == "proposed"], [text])
        self.assertIn("denied", [e["event"] for e in ev])
        check_audit(self, ev)

    def test_typed_text_shows_what_does_not_show(self):
        r = Run()
        # A zero-width space, a right-to-left override, a tab, a newline,
        # a no-break space and a Cyrillic 'а' among Latin letters.
        text = "ls\u200b -l\u202e\tfoo\nc\u0430t\u00a0x\n"
        turns = [{"tool_calls": [call("computer", action="type", text=text)]},
                 {"text": "ok"}]
        out = self.ask_and_deny(r, turns, "--os", "-m", "go", X_=X).decode()
        self.assertIn("%d characters on 3 lines" % len(text), out)
        self.assertIn("MIXED SCRIPTS (Latin, Cyrillic)", out)
        self.assertIn('"ls⟨U+200B⟩ -l⟨U+202E⟩⟨tab⟩foo⏎\r\n  c\u0430t⟨U+00A0⟩x⏎\r\n  "', out)
        shown = between(out.encode(), b"type ", b"Perform this action?")
        self.assertEqual(foreign_controls(shown), [], shown)


if __name__ == "__main__":
    h.main()
