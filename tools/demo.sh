#!/usr/bin/env bash
# make demo: a daemon and several preloaded programs contending for one
# simulated 16 GiB GPU, with gpufracctl showing them. Needs no GPU.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-demo.XXXXXX")
export LD_LIBRARY_PATH=$top/tests/simcuda SIMCUDA_DEVICES=16Gi
export SIMCUDA_STATE=gpufrac-demo-$$ GPUFRAC_SOCKET=$tmp/gpufrac.sock
client=$top/tests/clients/cuclient_linked
pids=()

cleanup() {
	kill "${pids[@]}" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$tmp" "/dev/shm/simcuda-$SIMCUDA_STATE"
}
trap cleanup EXIT

say() { printf '\n\033[1m%s\033[0m\n' "$*"; }
ctl() { echo "\$ gpufracctl $*"; "$top/tools/gpufracctl" "$@"; }

# job NAME LIMIT COMMANDS...: a program holding its memory until SIGUSR1.
job() {
	local name=$1 limit=$2; shift 2
	GPUFRAC_MEMORY_LIMIT=$limit LD_PRELOAD=$top/shim/libgpufrac.so \
	    "$client" "$@" hold >"$tmp/$name.out" 2>&1 &
	pids+=($!)
	until grep -q '^holding' "$tmp/$name.out"; do sleep 0.05; done
	printf '%-8s limit %-5s %s\n' "$name" "$limit" \
	    "$(grep -v holding "$tmp/$name.out" | tr '\n' ' ')"
}

cat >"$tmp/gpufrac.conf" <<CONF
[daemon]
log_level = info
default_limit = 100%
[device 0]
reserve = 1Gi
CONF
say "A simulated 16 GiB GPU; gpufracd keeps 1 GiB back and shares 15 GiB."
"$top/daemon/gpufracd" -f -c "$tmp/gpufrac.conf" -s "$GPUFRAC_SOCKET" \
    2>"$tmp/gpufracd.log" &
pids+=($!)
until "$top/tools/gpufracctl" status >/dev/null 2>&1; do sleep 0.05; done
ctl status

say "Three unmodified CUDA programs, each preloaded with libgpufrac.so:"
job trainer 8Gi alloc 6Gi alloc 2Gi
job notebook 4Gi alloc 3Gi alloc 2Gi
job batch 6Gi alloc 4Gi alloc 1Gi
echo "(err=2 is CUDA_ERROR_OUT_OF_MEMORY: notebook went past its own limit,"
echo " batch's second request found the device full)"

say "What the daemon sees:"
ctl ps
ctl allocs "${pids[1]}"

say "trainer exits; its 8 GiB return to the pool at once:"
kill -USR1 "${pids[1]}"
wait "${pids[1]}" || true
ctl ps
echo "\$ a new job (limit 6Gi) asks for 4 GiB"
GPUFRAC_MEMORY_LIMIT=6Gi LD_PRELOAD=$top/shim/libgpufrac.so "$client" alloc 4Gi
