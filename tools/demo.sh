#!/usr/bin/env bash
# make demo: the whole story on one simulated GPU, each resolver in turn
# with the daemon's own account of it (gpufracctl events): a request
# waiting for a free and woken by it, an idle tenant swapped out to host
# memory and back with its data intact, a high-priority job preempting a
# low-priority one, and a guarantee lent while unused and taken back.
# Needs no GPU. The simulated driver moves memory at the rates an H200
# showed (issue 21: checkpoint 2 GB/s out and 5.5 GB/s in, pinned copies
# 55 GB/s), so that the swaps' figures are a real GPU's, not an unlimited
# simulator's; its GPU (2 GiB) and the tenants' sizes are an H200's
# scaled down so that the demo takes a few seconds. Tenants are told apart by their gid, which only root can
# give a process: as another user the demo shows what needs no groups.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
# What make built (make demo passes BUILD; default build/).
build=${BUILD:-$top/build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-demo.XXXXXX")
export LD_LIBRARY_PATH=$build/tests/simcuda SIMCUDA_DEVICES=2Gi
# In the daemon (the checkpoint API's caller) and the tenants (copies).
export SIMCUDA_CKPT_GBPS=2 SIMCUDA_CKPT_IN_GBPS=5.5 SIMCUDA_COPY_GBPS=55
export SIMCUDA_STATE=gpufrac-demo-$$ GPUFRAC_SOCKET=$tmp/gpufrac.sock
client=$build/tests/clients/cuclient_linked
pids=()

cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp" "/dev/shm/simcuda-$SIMCUDA_STATE"
}
trap cleanup EXIT

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
ctl() { echo "\$ gpufracctl $*"; "$build/tools/gpufracctl" "$@"; }
quiet() { "$build/tools/gpufracctl" "$@"; }

# until_true SECS CMD...: poll CMD (a state the daemon reports) until it
# holds; the demo stops with a message if it never does.
until_true() {
	local deadline=$(($(date +%s) + $1)); shift
	until "$@" >/dev/null 2>&1; do
		if [ "$(date +%s)" -ge "$deadline" ]; then
			echo "demo: gave up waiting for: $*" >&2
			exit 1
		fi
		sleep 0.05
	done
}

# job NAME GID COMMANDS...: a preloaded program in the background, as gid
# GID (root only; "-" for our own), output in $tmp/NAME.out; its pid in
# the variable NAME.
job() {
	local name=$1 gid=$2; shift 2
	local as=()
	[ "$gid" != - ] && as=(setpriv --regid="$gid" --clear-groups)
	# SAN_RT: the test suite's sanitizer runtime, which must come first.
	"${as[@]}" env LD_PRELOAD="${SAN_RT:+$SAN_RT }$build/shim/libgpufrac.so" \
	    "$client" "$@" >"$tmp/$name.out" 2>&1 &
	pids+=($!)
	printf -v "$name" %s $!
}
said() { grep -q "^$2" "$tmp/$1.out"; }		# NAME LINE-START
state() { quiet ps --json | grep -q "\"pid\":$1,[^}]*\"state\":\"$2\""; }
release() { kill -USR1 "$1"; wait "$1" 2>/dev/null || true; }
events_of() {	# PID...: the daemon's account of these processes
	local re
	re=$(IFS='|'; echo "$*")
	echo "\$ gpufracctl events | grep -E ' ($re) '"
	quiet events | grep -E "^TIME| ($re) "
}

if [ "$(id -u)" = 0 ]; then root=1; else root=; fi
cat >"$tmp/gpufrac.conf" <<CONF
[daemon]
log_level = info
default_limit = 100%
default_resolver = wait
wait_timeout = 30s
admin_group = $(id -g)
CONF
say "gpufracd shares one GPU among the tenants below. The GPU and its driver are simulated (no GPU is used):"
echo "memory moves at the rates an H200 showed, checkpoint 2 GB/s out and 5.5 GB/s in,"
echo "pinned copies 55 GB/s; the GPU has 2 GiB and the tenants 1-1.5 GiB each, an H200's"
echo "sizes scaled down so that the demo takes seconds."
"$build/daemon/gpufracd" -f -c "$tmp/gpufrac.conf" -s "$GPUFRAC_SOCKET" \
    2>"$tmp/gpufracd.log" &
pids+=($!)
until_true 10 quiet status

say "1. wait: a request that does not fit waits for a free, not polling."
job holder - alloc 1280Mi hold
until_true 10 said holder holding
job waiter - alloc 1Gi hold
until_true 10 state "$waiter" waiting
ctl ps
echo "(the holder exits)"
release "$holder"
until_true 10 said waiter holding
events_of "$holder" "$waiter"
release "$waiter"

if [ -z "$root" ]; then
	say "The other acts (swap, preemption, lent guarantees) tell tenants apart by gid: run 'sudo make demo' to see them."
	exit 0
fi

say "2. swap: an idle tenant goes to host memory and comes back intact."
ctl group set batch --match gid:2002 --resolver swap --on-preempt swap
job idle - alloc 1280Mi fill hold check
until_true 10 said idle holding
job burst 2002 alloc 1536Mi hold
until_true 20 said burst holding
ctl ps
echo "(the burst ends; the idle tenant fits again and is brought back)"
release "$burst"
until_true 20 state "$idle" running
release "$idle"
echo "idle tenant's data after the round trip: $(tail -n 1 "$tmp/idle.out")"
events_of "$idle" "$burst"

say "3. preempt: a high-priority job takes memory from a low-priority one."
ctl group set notebooks --match gid:2003 --priority 0 --on-preempt kill \
    --resolver wait
ctl group set train --match gid:2001 --priority 10 --resolver preempt
job notebook 2003 alloc 1536Mi hold
until_true 10 said notebook holding
job trainer 2001 alloc 1Gi hold
until_true 20 said trainer holding
wait "$notebook" 2>/dev/null || true
echo "(the notebook was stopped by SIGTERM; the trainer got its 1 GiB)"
events_of "$notebook" "$trainer"
release "$trainer"

say "4. guarantees are lent, not idle: unused, they serve others; asked for, they come back."
ctl group set serve --match gid:2004 --guarantee 1Gi --priority -5 \
    --resolver fail
job borrower 2002 alloc 1536Mi fill hold check
until_true 10 said borrower holding
echo "(serve uses none of its 1 GiB: batch borrows 512 MiB of it)"
ctl status
job server 2004 alloc 768Mi hold
until_true 20 said server holding
echo "(serve, of lower priority, asks within its guarantee: batch is swapped out)"
ctl ps
release "$server"
until_true 20 state "$borrower" running
release "$borrower"
echo "batch's data after giving the guarantee back: $(tail -n 1 "$tmp/borrower.out")"
events_of "$borrower" "$server"

say "Every group above was made at run time (gpufracctl group set); gpufracctl group rm removes one."
