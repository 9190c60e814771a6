# Shared set-up for the tests that make cgroups of their own
# (identity_cgroup.sh, memlimits.sh, simcuda_memlimits.sh, walls_groups.sh,
# walls_journal.sh): sourced after lib.sh; skips unless root, with a
# cgroup2 file system mounted. Gives CG2 (its mount) and cgroups_make.
[ "$(id -u)" = 0 ] || skip "not root: the test makes cgroups"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip "no cgroup2 file system is mounted"

# cgroups_make DIR...: make each cgroup, a parent before its children, or
# skip the test. At exit the test's background jobs are killed, and the
# cgroups removed, children first (extends lib.sh's cleanup).
CGROUPS=''
cgroups_make() {
	local d
	mkdir "$@" || skip "cannot make a cgroup under '$CG2'"
	for d; do CGROUPS="$d $CGROUPS"; done
}
cgroups_cleanup() {
	local d
	# shellcheck disable=SC2046
	kill -9 $(jobs -p) 2>/dev/null
	for d in $CGROUPS; do cgroup_remove "$d"; done
	cleanup
}
trap cgroups_cleanup EXIT
