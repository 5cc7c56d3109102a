#!/usr/bin/env bash
# What a user writes without deskhand batch: the same tasks, one at a time,
# each on a fresh Xvfb and session bus, setup, apps, one deskhand process,
# the check (bench/batch.py times it against deskhand batch). No walls,
# no resume, no timeout: the baseline, not a recommendation.
#   bench/batch-loop.sh TASKS.jsonl OUT AGENT-OPTIONS...
set -u
tasks=$1 out=$2
shift 2
dir=$(cd "$(dirname "$tasks")" && pwd)
deskhand=${DESKHAND_BIN:-${DESKHAND_BUILD:-build}/deskhand}
mkdir -p "$out"
ok=0 n=0
while IFS= read -r line; do
	case "$line" in ''|'#'*) continue ;; esac
	id=$(jq -r .id <<<"$line")
	ws="$out/$id/workspace"
	mkdir -p "$ws" "$out/$id/home"
	export HOME="$out/$id/home"    # the user's dotfiles are not the task's
	screen=$(jq -r '.screen // "1280x800"' <<<"$line")
	exec 5>"$out/$id/display"
	Xvfb -displayfd 5 -screen 0 "${screen}x24" -nolisten tcp -noreset >/dev/null 2>&1 &
	xvfb=$!
	exec 5>&-
	until [ -s "$out/$id/display" ]; do sleep 0.05; done
	export DISPLAY=":$(cat "$out/$id/display")"
	{ read -r DBUS_SESSION_BUS_ADDRESS; read -r bus; } < <(dbus-daemon --session --fork \
		--print-address=1 --print-pid=1)
	export DBUS_SESSION_BUS_ADDRESS
	# {tasks}/{workspace}/{id} as deskhand batch replaces them; each
	# command is a JSON array, one argument per line.
	sub() { sed -e "s|{tasks}|$dir|g" -e "s|{workspace}|$ws|g" -e "s|{id}|$id|g"; }
	cmd() { mapfile -t argv < <(jq -r "$1 | .[]" <<<"$line" | sub); }
	wm=$(jq -r '.wm | if type == "string" then . elif type == "array" then .[0] else empty end' <<<"$line")
	pids=()
	[ -n "$wm" ] && { (cd "$ws" && exec $wm) >/dev/null 2>&1 & pids+=($!); }
	for i in $(seq 0 $(($(jq '.setup // [] | length' <<<"$line") - 1))); do
		cmd ".setup[$i]"
		(cd "$ws" && "${argv[@]}") >/dev/null 2>&1
	done
	for i in $(seq 0 $(($(jq '.apps // [] | length' <<<"$line") - 1))); do
		cmd ".apps[$i]"
		(cd "$ws" && exec "${argv[@]}") >/dev/null 2>&1 &
		pids+=($!)
	done
	sleep 1    # what a loop does instead of waiting for the windows
	args=()
	for a in "$@"; do args+=("$(sub <<<"$a")"); done
	(cd "$ws" && "$deskhand" "${args[@]}" --os --json --workspace "$ws" \
		--conversation "$out/$id/conversation.json" --audit "$out/$id/audit.jsonl" \
		-m "$(jq -r .instruction <<<"$line")") >"$out/$id/agent.jsonl" 2>&1
	cmd ".check"
	(cd "$ws" && "${argv[@]}") >"$out/$id/check.out" 2>&1 && ok=$((ok + 1))
	n=$((n + 1))
	kill "${pids[@]}" "$bus" "$xvfb" 2>/dev/null
	wait "$xvfb" 2>/dev/null
done <"$tasks"
echo "$n tasks, $ok succeeded"
