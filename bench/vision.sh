#!/usr/bin/env bash
# bench/vision.sh — the model's view of a busy 1920x1080 screen, deskhand
# against what the reference computer-use demo does (scrot, then ImageMagick
# resizing to the model size), on a private Xvfb filled with real clients:
# a wallpaper, terminals full of text, a clock and logos.
#
#   bench/vision.sh [RUNS]        (needs a build in ./build)
set -eu
cd "$(dirname "$0")/.."
runs=${1:-50}
bin=build/bench/bench-vision
[ -x "$bin" ] || { echo "build first: meson setup build && ninja -C build" >&2; exit 1; }

tmp=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT

exec 3>"$tmp/displayfd"
Xvfb -displayfd 3 -screen 0 1920x1080x24 -nolisten tcp -noreset >/dev/null 2>&1 &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/displayfd" ] && break; sleep 0.1; done
export DISPLAY=":$(head -n1 "$tmp/displayfd")"
exec 3>&-

# wallpaper: a photo-like plasma, set as the root window's background
convert -size 1920x1080 plasma:steelblue-tan -blur 0x2 "$tmp/wall.png"
display -window root "$tmp/wall.png" 2>/dev/null || true
# terminals full of text (source code, listings), a clock, logos
i=0
for f in /usr/include/stdio.h /usr/include/stdlib.h /usr/include/string.h /usr/include/unistd.h; do
	x=$(( (i % 2) * 960 + 10 )); y=$(( (i / 2) * 520 + 10 ))
	xterm -geometry 150x36+$x+$y -fa Monospace -fs 9 -bg '#1e1e1e' -fg '#d4d4d4' \
		-e sh -c "cat '$f'; sleep 3600" >/dev/null 2>&1 &
	pids+=($!)
	i=$((i + 1))
done
xclock -geometry 160x160+880+460 -update 3600 >/dev/null 2>&1 & pids+=($!)
xlogo -geometry 120x120+1780+940 >/dev/null 2>&1 & pids+=($!)
sleep 3

echo "== deskhand (in process, $runs runs)"
"$bin" "$runs"

echo "== reference: scrot + ImageMagick resize to 1280x720 (whole processes, 10 runs)"
start=$(date +%s.%N)
for _ in $(seq 10); do
	scrot -o "$tmp/s.png" && convert "$tmp/s.png" -resize 1280x720 "$tmp/r.png"
done
end=$(date +%s.%N)
ref=$(echo "($end - $start) * 100" | bc -l)
printf "scrot+convert mean %7.2f ms   (%s KB)\n" "$ref" "$(( $(stat -c %s "$tmp/r.png") / 1024 ))"
view=$("$bin" "$runs" | awk '$1 == "view" {print $3}')
printf "ratio: reference / deskhand view = %.1fx\n" "$(echo "$ref / $view" | bc -l)"
