# shellcheck shell=bash
# Shared set-up of the real-GPU scripts (run.sh, swap.sh): sourced, never run.
#
# Gives each script a private temporary directory $tmp (removed at exit), a
# private daemon socket $GPUFRAC_SOCKET, $GPUFRACCTL, $python, and:
#   daemon_start [CONF]   start gpufracd -f on $GPUFRAC_SOCKET (with config
#                         CONF if given), logging to $tmp/gpufracd.log; wait
#                         until it serves and print its status; 1 if it
#                         did not start (its log printed)
#   daemon_stop           SIGTERM it and wait for it to exit
# GPU_LIBDIR may name a folder with shared libraries the binaries need
# (libinih.so.1) when they were built on another machine.
set -u
top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
# What make built (default build/; BUILD=DIR for another).
build=${BUILD:-$top/build}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpufrac-gpu.XXXXXX")
# shellcheck disable=SC2034	# the includers' python
python=${PYTHON:-python3}
export GPUFRAC_SOCKET=$tmp/gpufrac.sock GPUFRACCTL=$build/tools/gpufracctl
[ -n "${GPU_LIBDIR:-}" ] && export LD_LIBRARY_PATH=$GPU_LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
daemon=
sim_state=		# set by sim_use: the simulated GPU to remove

# gpu_here NAME: skip (77) where no NVIDIA GPU is. sim_use NAME SIZE: run
# on the simulated driver instead, one device of SIZE (SIMCUDA_DEVICES
# overrides), its state removed at exit.
gpu_here() {
	nvidia-smi -L >/dev/null 2>&1 ||
	    { echo "SKIP  $1: no NVIDIA GPU here"; exit 77; }
}
sim_use() {
	sim_state=gpufrac-gpu-$1-$$
	export LD_LIBRARY_PATH=$build/tests/simcuda${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
	export SIMCUDA_STATE=$sim_state SIMCUDA_DEVICES=${SIMCUDA_DEVICES:-$2}
	unset CUDA_VISIBLE_DEVICES
}
# gpu_or_sim NAME SIZE [--sim]: NAME.sh's arguments: the real GPU
# (gpu_here) or, with --sim, the simulated one (sim_use); else usage.
gpu_or_sim() {
	local name=$1 size=$2
	shift 2
	case $#:${1:-} in
	0:)	gpu_here "$name";;
	1:--sim) sim_use "$name" "$size";;
	*)	echo "usage: $name.sh [--sim]" >&2; exit 2;;
	esac
}

cleanup() {
	[ -n "$daemon" ] && kill "$daemon" 2>/dev/null
	rm -rf "$tmp"
	[ -n "$sim_state" ] && rm -f "/dev/shm/simcuda-$sim_state"
}
trap cleanup EXIT

daemon_start() {
	local opts=()

	[ $# -gt 0 ] && opts=(-c "$1")
	"$build/daemon/gpufracd" -f -s "$GPUFRAC_SOCKET" ${opts[@]+"${opts[@]}"} \
	    2>>"$tmp/gpufracd.log" &
	daemon=$!
	for _ in $(seq 100); do
		"$GPUFRACCTL" status >/dev/null 2>&1 && break
		kill -0 "$daemon" 2>/dev/null || break
		sleep 0.1
	done
	"$GPUFRACCTL" status && return 0
	echo "gpufracd did not start:"
	cat "$tmp/gpufracd.log"
	daemon=
	return 1
}

daemon_stop() {
	[ -n "$daemon" ] || return 0
	kill -TERM "$daemon" 2>/dev/null
	wait "$daemon" 2>/dev/null
	daemon=
}
