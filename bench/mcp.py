#!/usr/bin/env python3
"""
deskhand mcp as an agent host sees it: the round trip of a `screenshot`
call and of an auto-approved `click` through the official MCP TypeScript
SDK (tests/mcp/driver.mjs) over stdio, beside the agent's own OS step
(bench/agent_step.py: action, settle, screenshot, encode, next request)
on the same private 1920x1080 Xvfb with a busy desktop. A click answers
with a settled screenshot, as the agent's step does; each round trip is
timed in the driver's process, so the SDK's own work counts.

    bench/mcp.py [CALLS]          (default 30)
"""
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(TOP, "tests", "lib"))
sys.path.insert(0, HERE)
os.environ.setdefault("DESKHAND_BUILD", os.path.join(TOP, "build"))

import harness as h  # noqa: E402
import mcplib  # noqa: E402
from agent_step import busy_desktop, median_ms, run_agent  # noqa: E402


def timed_calls(client, name, args_of, n):
    """n calls of `name`, one after another; the sorted round trips in s."""
    gaps = []
    for i in range(n):
        t0 = time.monotonic()
        r = client.call(name, args_of(i), timeout=120)
        gaps.append(time.monotonic() - t0)
        if r.get("isError"):
            raise RuntimeError("%s failed: %s" % (name, json.dumps(r)[:300]))
    return sorted(gaps)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    missing = mcplib.node_ready()
    if missing:
        print("bench/mcp.py: %s" % missing)
        return 0
    X = h.Xvfb(1920, 1080)
    procs = busy_desktop(X)
    d = h.tmpdir()
    env = dict(X.env(), HOME=d, XDG_DATA_HOME=d, XDG_CONFIG_HOME=d)
    argv = [h.binary(), "mcp", "--os-auto-approve", "--audit", os.path.join(d, "a.jsonl")]
    try:
        with mcplib.McpClient(mcplib.stdio_config(argv, env=env,
                                                  stderr_file=os.path.join(d, "err"))) as c:
            c.list_tools()
            c.call("screenshot", {})  # the view and the first capture, once
            shots = timed_calls(c, "screenshot", lambda i: {}, n)
            clicks = timed_calls(c, "click", lambda i: {"x": 50 + 3 * i, "y": 40}, n)
        steps, _, _ = run_agent(X, h.binary(), n)
    finally:
        for p in procs:
            p.stop()
        X.stop()
    step = median_ms(steps)
    print("MCP screenshot round trip (SDK client, stdio), median of %d: %.1f ms" %
          (n, median_ms(shots)))
    print("MCP click round trip, auto-approved, with its settled screenshot, median of %d: "
          "%.1f ms" % (n, median_ms(clicks)))
    print("the agent's own OS step, median of %d: %.1f ms; MCP click / agent step: %.2f" %
          (len(steps), step, median_ms(clicks) / step if step else 0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
