# deskhand's shell driver: runs blocks read from fd 3 in this one bash and
# reports "MARKER STATUS" on fd 4 after each. The block runs with fds 3 and
# 4 closed, so nothing it starts inherits them.
#
# A block runs inside a function so that an interrupt can end the block and
# nothing else: the INT trap returns from the function with 130, and the
# shell — its variables, functions, directory — lives on for the next block,
# as python's and node's sessions do. Without the trap, a non-interactive
# bash would die of the SIGINT.
shopt -s expand_aliases
# At a block's top level, declare and typeset must still make globals, as
# they would outside the function (declare -A is how bash code makes maps).
alias declare='declare -g' typeset='typeset -g'
__deskhand_block() {
	builtin eval "$__deskhand_code" 3<&- 4>&-
}
while IFS=' ' builtin read -r __deskhand_marker __deskhand_size <&3; do
	# An empty line is deskhand's token: it looks whether we wait here.
	[ -n "$__deskhand_marker" ] || continue
	__deskhand_code=
	if [ "$__deskhand_size" -gt 0 ]; then
		LC_ALL=C IFS= builtin read -r -N "$__deskhand_size" __deskhand_code <&3
	fi
	builtin trap 'builtin trap - INT; return 130 2>/dev/null' INT
	__deskhand_block
	__deskhand_status=$?
	builtin trap - INT
	builtin printf '%s %s\n' "$__deskhand_marker" "$__deskhand_status" >&4
done
