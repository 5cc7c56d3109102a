"""Anthropic's 2026 computer-use API through the real provider code over
loopback HTTP, against the strict fake (tests/fake_llm/anthropic_strict.py):
the tool version per model and --computer-tool, the step down after a 400
that refuses the tool type, toolset calls and their results, thinking
blocks kept byte for byte (streamed and whole) and sent back in place, the
binding remedy after screenshots were pruned, and the fake's own refusals
(so a passing test means the rule was kept, not that nobody checked).

argv[1] is the provider_probe binary (see tests/llm/meson.build)."""
import json
import os
import sys
import unittest

import harness as h

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_provider_http import KEY, FakeLLM, Probe, calls_of  # noqa: F401

THINK = 'Plan: click "OK" \u00e9\u2713\U0001F600, then type.\n'


def toolset_turn(**extra):
    t = {"blocks": [{"thinking": THINK}, {"text": "Clicking."},
                    {"redacted": "EmwKAhgBEgy3va=="},
                    {"tool": "left_click", "input": {"coordinate": [10, 20], "text": "shift"}},
                    {"tool": "key", "input": {"text": "Down", "repeat": 3}}]}
    t.update(extra)
    return t


def vendor_blocks(conv):
    return [b for m in conv["messages"] for b in m["content"] if b["type"] == "vendor"]


class Versions(unittest.TestCase):
    def request_for(self, model, *extra):
        p = Probe(self, "anthropic")
        with FakeLLM([{"text": "ok"}]) as srv:
            rc, ev, err = p.run(srv, "--user", "look", "--os", "1280x800", "--model", model,
                                *extra)
            self.assertEqual(rc, 0, (ev, err))
            req = srv.requests[0]
        tools = [t for t in req["body"]["tools"] if t.get("type", "").startswith("computer")]
        return req, tools[0]

    def test_each_family_gets_its_tool(self):
        for model, ty, beta in [
                ("claude-sonnet-5-5", "computer_toolset_20260801", None),
                ("claude-opus-5-5", "computer_toolset_20260801", None),
                ("claude-opus-4-8", "computer_toolset_20260801", None),
                ("claude-opus-4-6", "computer_20251124", "computer-use-2025-11-24"),
                ("claude-sonnet-4-6", "computer_20251124", "computer-use-2025-11-24"),
                ("claude-haiku-4-5-20251001", "computer_20250124", "computer-use-2025-01-24"),
                ("claude-what-is-next", "computer_toolset_20260801", None)]:
            req, tool = self.request_for(model)
            self.assertEqual(tool["type"], ty, model)
            self.assertEqual(req["headers"].get("anthropic-beta"), beta, model)
            if ty == "computer_toolset_20260801":
                self.assertEqual(tool, {"type": ty})
                names = [t.get("name") for t in req["body"]["tools"]]
                self.assertEqual(names, ["execute", None, "find_text", "elements",
                                         "click_element"])
            else:
                self.assertEqual(tool["display_width_px"], 1280)
                self.assertEqual(tool.get("enable_zoom"), True if ty.endswith("1124") else None)

    def test_computer_tool_flag_overrides(self):
        req, tool = self.request_for("claude-opus-4-8", "--computer-tool", "20251124")
        self.assertEqual(tool["type"], "computer_20251124")
        req, tool = self.request_for("claude-private-test", "--computer-tool", "20250124")
        self.assertEqual(tool["type"], "computer_20250124")
        self.assertEqual(req["headers"]["anthropic-beta"], "computer-use-2025-01-24")

    def test_default_model_is_a_current_sonnet(self):
        p = Probe(self, "anthropic")
        with FakeLLM([{"text": "ok"}]) as srv:
            rc, ev, err = p.run(srv, "--user", "hi")
            self.assertEqual(rc, 0, (ev, err))
            self.assertEqual(srv.requests[0]["body"]["model"], "claude-sonnet-5-5")


class Fallback(unittest.TestCase):
    def test_a_refused_tool_type_steps_down_once_and_says_so(self):
        p = Probe(self, "anthropic")
        with FakeLLM([{"text": "ok"}]) as srv:
            srv.anthropic.models["claude-labs-x"] = {"computer_20250124"}
            rc, ev, err = p.run(srv, "--user", "look", "--os", "1280x800",
                                "--model", "claude-labs-x")
            self.assertEqual(rc, 0, (ev, err))
            types = [[t.get("type") for t in r["body"]["tools"] if "type" in t][0]
                     for r in srv.requests]
            self.assertEqual(types, ["computer_toolset_20260801", "computer_20251124",
                                     "computer_20250124"])
            notice = [e["text"] for e in ev if e["event"] == "notice"]
            self.assertEqual(len(notice), 1)
            self.assertIn("computer_20250124 worked", notice[0])

    def test_a_forced_version_is_never_stepped_down(self):
        p = Probe(self, "anthropic")
        with FakeLLM([{"text": "ok"}]) as srv:
            rc, ev, err = p.run(srv, "--user", "look", "--os", "1280x800",
                                "--model", "claude-sonnet-5-5", "--computer-tool", "20251124")
            self.assertEqual(rc, 1)
            self.assertEqual(len(srv.requests), 1)
            msg = ev[-1]["message"]
            self.assertIn("HTTP 400", msg)
            self.assertIn("'claude-sonnet-5-5' does not support tool types: computer_20251124",
                          msg)

    def test_another_400_is_not_a_reason_to_step_down(self):
        p = Probe(self, "anthropic")
        turn = {"text": "x", "faults": [{"status": 400, "body": {"type": "error", "error": {
            "type": "invalid_request_error", "message": "messages: something else"}}}]}
        with FakeLLM([turn]) as srv:
            rc, ev, err = p.run(srv, "--user", "look", "--os", "1280x800",
                                "--model", "claude-labs-y")
            self.assertEqual(rc, 1)
            self.assertEqual(len(srv.requests), 1)


class Thinking(unittest.TestCase):
    def exchange(self, stream):
        p = Probe(self, "anthropic")
        more = [] if stream else ["--no-stream"]
        with FakeLLM([toolset_turn(), {"blocks": [{"thinking": "Done."}, {"text": "ok"}]}]) \
                as srv:
            rc, ev, err = p.run(srv, "--user", "go", "--os", "1280x800",
                                "--model", "claude-sonnet-5-5", *more)
            self.assertEqual(rc, 0, (ev, err))
            sent = srv.anthropic.responses
            conv = p.saved()
            # The batch answered: each member with its toolset_name (the fake refuses otherwise).
            calls = [b for b in conv["messages"][-1]["content"] if b["type"] == "tool_call"]
            rc, ev2, err = p.run(srv, *sum((["--result", c["id"], "done"] for c in calls), []),
                                 "--os", "1280x800", "--model", "claude-sonnet-5-5", *more)
            self.assertEqual(rc, 0, (ev2, err))
            second = srv.requests[1]["body"]
        return ev, conv, second, sent

    def check(self, stream):
        ev, conv, second, sent = self.exchange(stream)
        shown = "".join(e["text"] for e in ev if e["event"] == "thinking")
        self.assertEqual(shown, THINK)
        calls = calls_of(ev)
        self.assertEqual([(c["name"], c.get("toolset")) for c in calls],
                         [("left_click", "computer"), ("key", "computer")])
        vend = vendor_blocks(conv)
        self.assertEqual([json.loads(v["raw"])["type"] for v in vend],
                         ["thinking", "redacted_thinking"])
        self.assertEqual(json.loads(vend[0]["raw"])["thinking"], THINK)
        # The assistant message went back exactly as it was sent, in order.
        assistant = second["messages"][1]["content"]
        first_sent = next(iter(sent.values()))
        self.assertEqual([{k: v for k, v in b.items() if k != "cache_control"}
                          for b in assistant], first_sent)
        for r in second["messages"][2]["content"]:
            self.assertEqual(r["toolset_name"], "computer")
        self.assertEqual(second["thinking"], {"type": "adaptive", "display": "summarized"})
        self.assertNotIn("tool_choice", second)
        return vend

    def test_streamed_thinking_is_kept_byte_exact(self):
        self.check(True)

    def test_whole_thinking_is_kept_byte_exact(self):
        self.check(False)

    def test_streamed_and_whole_store_the_same_bytes(self):
        a = [v["raw"] for v in self.check(True)]
        b = [v["raw"] for v in self.check(False)]
        # Signatures differ per answer; the shape and the text do not.
        strip = [json.dumps({k: v for k, v in json.loads(r).items() if k != "signature"})
                 for r in a]
        self.assertEqual(strip, [json.dumps({k: v for k, v in json.loads(r).items()
                                             if k != "signature"}) for r in b])
        self.assertEqual(a[0].split('"signature"')[0], b[0].split('"signature"')[0])


class Strictness(unittest.TestCase):
    """The fake refuses what the real API refuses: the tests above would fail otherwise."""

    def post(self, srv, body, beta=None):
        import urllib.request
        req = urllib.request.Request(srv.base_url("root") + "/v1/messages",
                                     data=json.dumps(body).encode(), method="POST")
        req.add_header("Content-Type", "application/json")
        if beta:
            req.add_header("anthropic-beta", beta)
        try:
            with urllib.request.urlopen(req, timeout=10) as r:
                return r.status, json.loads(r.read())
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read())

    def base(self, model="claude-sonnet-5-5", **kw):
        b = {"model": model, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}],
             "tools": [{"type": "computer_toolset_20260801"}]}
        b.update(kw)
        return b

    def refused(self, srv, body, text, beta=None):
        st, out = self.post(srv, body, beta)
        self.assertEqual(st, 400, out)
        self.assertEqual(out["error"]["type"], "invalid_request_error")
        self.assertIn(text, out["error"]["message"])

    def test_refusals(self):
        with FakeLLM([{"text": "ok"}]) as srv:
            self.refused(srv, self.base(tools=[{"type": "computer_toolset_20260801",
                                                "display_width_px": 1}]),
                         "Extra inputs are not permitted")
            self.refused(srv, self.base(), "remove the anthropic-beta",
                         beta="computer-use-2025-11-24")
            self.refused(srv, self.base(tools=[{"type": "computer_20251124", "name": "computer",
                                                "display_width_px": 1, "display_height_px": 1}]),
                         "'claude-sonnet-5-5' does not support tool types: computer_20251124",
                         beta="computer-use-2025-11-24")
            self.refused(srv, self.base(tool_choice={"type": "any"}),
                         'tool_choice: type "tool" and "any" are not supported')
            self.refused(srv, self.base(thinking={"type": "enabled", "budget_tokens": 2000}),
                         '"thinking.type.enabled" is not supported for this model')
            self.refused(srv, self.base(thinking={"type": "disabled"}),
                         '"thinking.type.disabled" is not supported for this model')
            cc = {"type": "ephemeral"}
            self.refused(srv, self.base(system=[{"type": "text", "text": "s", "cache_control": cc}
                                                for _ in range(5)]),
                         "A maximum of 4 blocks with cache_control")
            use = {"type": "tool_use", "id": "toolu_9", "name": "left_click", "input": {},
                   "toolset_name": "computer"}
            msgs = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": [use]},
                    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9",
                                                  "content": "ok"}]}]
            self.refused(srv, self.base(messages=msgs), "must carry toolset_name 'computer'")
            self.refused(srv, self.base(messages=msgs[:2] + [{"role": "user", "content": "x"}]),
                         "tool_use ids were found without tool_result blocks")
            forged = {"type": "thinking", "thinking": "I did", "signature": "bm90IGlzc3VlZA=="}
            self.refused(srv, self.base(messages=[msgs[0], {"role": "assistant", "content": [
                forged, {"type": "text", "text": "x"}]}, {"role": "user", "content": "y"}]),
                "Invalid `signature` in `thinking` block")
            self.assertEqual(len(srv.requests), 10)
            self.assertEqual(srv.turns_left(), 1)

    def test_changed_order_and_changed_history_are_refused(self):
        p = Probe(self, "anthropic")
        with FakeLLM([toolset_turn()]) as srv:
            rc, ev, err = p.run(srv, "--user", "go", "--os", "1280x800",
                                "--model", "claude-sonnet-5-5")
            self.assertEqual(rc, 0, (ev, err))
            sent = next(iter(srv.anthropic.responses.values()))
            req = srv.requests[0]["body"]
            results = [{"type": "tool_result", "tool_use_id": b["id"], "toolset_name": "computer",
                        "content": "ok"} for b in sent if b["type"] == "tool_use"]
            msgs = req["messages"] + [{"role": "assistant", "content": sent},
                                      {"role": "user", "content": results}]
            body = dict(req, messages=msgs, stream=False)
            moved = dict(body, messages=msgs[:-2] + [
                {"role": "assistant", "content": [sent[1], sent[0]] + sent[2:]}, msgs[-1]])
            self.refused(srv, moved, "cannot be modified")
            edited = json.loads(json.dumps(body))
            edited["messages"][0]["content"][0]["text"] = "go somewhere else"
            self.refused(srv, edited, "prefix binding does not match")
            edited["thinking"] = {"type": "adaptive", "display": "summarized",
                                  "block_binding": {"prefix_mismatch_behavior": "drop_block"}}
            self.refused(srv, edited, "requires the beta header")


if __name__ == "__main__":
    h.main()
