# deskhand's shell driver: runs blocks read from fd 3 in this one bash and
# reports "MARKER STATUS" on fd 4 after each. The block runs with fds 3 and
# 4 closed, so nothing it starts inherits them.
shopt -s expand_aliases
while IFS=' ' builtin read -r __deskhand_marker __deskhand_size <&3; do
	__deskhand_code=
	if [ "$__deskhand_size" -gt 0 ]; then
		LC_ALL=C IFS= builtin read -r -N "$__deskhand_size" __deskhand_code <&3
	fi
	builtin eval "$__deskhand_code" 3<&- 4>&-
	__deskhand_status=$?
	builtin printf '%s %s\n' "$__deskhand_marker" "$__deskhand_status" >&4
done
