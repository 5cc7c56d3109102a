#!/usr/bin/env python3
"""
Counts test cases from meson's testlog.json files and prints the closing
line "N passed, N failed" (", N skipped" when any were skipped).
Each failure is listed just above that line with the last lines of its
diagnostics, so that the tail of a CI log says why, not only what.

A test that prints TAP contributes one count per "ok"/"not ok" line; a test
that prints no TAP counts once, by its result. A TAP test that crashed
before its plan completed counts its missing cases as failed.
"""
import json
import re
import sys

OK = re.compile(r"^(not )?ok\b\s*(\d+)?(.*)$")
PLAN = re.compile(r"^1\.\.(\d+)")


DETAIL_LINES = 12


def _diagnostics(lines, start):
    """The last DETAIL_LINES "# " lines that follow a "not ok" line."""
    detail = []
    for l in lines[start:]:
        if not l.startswith("#"):
            break
        detail.append("    " + l)
    if len(detail) > DETAIL_LINES:
        detail = ["    # ..."] + detail[-DETAIL_LINES:]
    return "".join("\n" + d for d in detail)


def count(path, totals, failures):
    try:
        f = open(path)
    except OSError:
        print("count: no test log at %s" % path, file=sys.stderr)
        totals["failed"] += 1
        return
    with f:
        for line in f:
            if not line.strip():
                continue
            t = json.loads(line)
            out = t.get("stdout") or ""
            plan = None
            seen = 0
            lines = out.splitlines()
            for i, l in enumerate(lines):
                m = PLAN.match(l)
                if m:
                    plan = int(m.group(1))
                    continue
                m = OK.match(l)
                if not m:
                    continue
                seen += 1
                rest = m.group(3) or ""
                if "# SKIP" in rest.upper():
                    totals["skipped"] += 1
                elif m.group(1):
                    totals["failed"] += 1
                    failures.append("%s: %s" % (t["name"], l.strip()) +
                                    _diagnostics(lines, i + 1))
                else:
                    totals["passed"] += 1
            result = t.get("result", "")
            if seen == 0:
                if result in ("OK", "EXPECTEDFAIL"):
                    totals["passed"] += 1
                elif result == "SKIP":
                    totals["skipped"] += 1
                else:
                    totals["failed"] += 1
                    failures.append("%s: %s" % (t["name"], result))
            elif plan is not None and seen < plan:
                totals["failed"] += plan - seen
                failures.append("%s: %d of %d cases never reported (%s)" %
                                (t["name"], plan - seen, plan, result))
            elif result not in ("OK", "SKIP", "EXPECTEDFAIL") and not any(
                    f.startswith(t["name"] + ":") for f in failures):
                totals["failed"] += 1
                failures.append("%s: %s" % (t["name"], result))


def main():
    totals = {"passed": 0, "failed": 0, "skipped": 0}
    failures = []
    for path in sys.argv[1:]:
        count(path, totals, failures)
    for f in failures:
        print("FAILED " + f)
    line = "%d passed, %d failed" % (totals["passed"], totals["failed"])
    if totals["skipped"]:
        line += ", %d skipped" % totals["skipped"]
    print(line)
    return 1 if totals["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
