# Sourced first, before lib.sh, by the tests that give a pid to a process
# of their choosing (pidreuse.sh, unshimmed_pidreuse.sh): runs the test
# again in a pid namespace of its own, where root may choose the next pid
# (/proc/sys/kernel/ns_last_pid), or skips it where none can be made.
if [ -z "${GF_PIDNS:-}" ]; then
	[ "$(id -u)" = 0 ] || { echo "needs root for a pid namespace"; exit 77; }
	unshare --pid --fork --mount-proc true 2>/dev/null ||
	    { echo "cannot make a pid namespace (unshare --pid)"; exit 77; }
	GF_PIDNS=1 exec unshare --pid --fork --mount-proc bash "$0" "$@"
fi
