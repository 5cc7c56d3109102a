#!/usr/bin/env bash
# The offline demo: a recorded session (examples/demo.json, replayed by the
# script provider) drives a real xterm on a private Xvfb — with the real
# confirmations. On a terminal you answer them; otherwise each is answered
# "y" and the answers are shown.
#
#   examples/demo.sh            build if needed, run, leave deskhand-demo.png
set -eu
here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
build=${DESKHAND_BUILD:-$top/build}
if [ ! -x "$build/deskhand" ] || [ "${DESKHAND_DEMO_REBUILD:-1}" = 1 ]; then
	# The demo's install (.ci/install-deps --demo) has no test framework:
	# the tests are built only where cmocka is.
	tests=false
	pkg-config --exists cmocka 2>/dev/null && tests=true
	[ -f "$build/build.ninja" ] || meson setup "$build" "$top" -Dtests=$tests >/dev/null
	ninja -C "$build" >/dev/null
fi

work=$(mktemp -d /tmp/deskhand-demo.XXXXXX)
xvfb_pid=""
cleanup() {
	[ -n "$xvfb_pid" ] && kill "$xvfb_pid" 2>/dev/null && wait "$xvfb_pid" 2>/dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# A private X server on a display it picks itself.
exec 5>"$work/display"
Xvfb -displayfd 5 -screen 0 1920x1080x24 -nolisten tcp >/dev/null 2>&1 &
xvfb_pid=$!
exec 5>&-
for _ in $(seq 1 100); do
	[ -s "$work/display" ] && break
	sleep 0.1
done
[ -s "$work/display" ] || { echo "demo: Xvfb did not start" >&2; exit 1; }
export DISPLAY=":$(cat "$work/display")"
# The demo is the same everywhere: the user's dotfiles are not read. An
# interactive bash in the xterm would run ~/.bashrc, and one that waits on
# something (pyenv's rehash lock, read-only in the sandbox) leaves the
# terminal without a prompt; a user's config.json could change the run.
mkdir -p "$work/home"
export HOME="$work/home" XDG_CONFIG_HOME="$work/config" XDG_DATA_HOME="$work/data"
echo "demo: private X server on $DISPLAY"

args=(--provider script --script "$here/demo.json" --os --workspace "$work"
      --conversation "$work/demo-conversation.json" --audit "$work/audit.jsonl"
      -m "Open a terminal, greet the world in it, and show me.")
status=0
if [ -t 0 ]; then
	"$build/deskhand" "${args[@]}" || status=$?
else
	echo "demo: standard input is not a terminal: answering every question with y"
	yes y | "$build/deskhand" "${args[@]}" || status=$?
fi

last=$(ls "$work"/demo-conversation.images/*.png 2>/dev/null | tail -n 1 || true)
if [ -n "$last" ]; then
	cp "$last" ./deskhand-demo.png
	echo "demo: the model's last screenshot is in ./deskhand-demo.png"
fi
if [ -f "$work/demo-output.txt" ]; then
	echo "demo: the terminal wrote: $(cat "$work/demo-output.txt")"
fi
echo "demo: the audit log ($work/audit.jsonl is removed on exit):"
python3 - "$work/audit.jsonl" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    e = json.loads(line)
    what = e.get("action", {}).get("action") if isinstance(e.get("action"), dict) else e.get("language", "")
    print("  %s  %-9s %-12s %-13s %s" % (e["ts"][11:23], e["event"], e.get("id", ""),
                                        e.get("kind", ""), what or ""))
PY
exit $status
