# Honest programs whose connection is cut while they allocate and free
# in a loop (issue 40): the library does not take memory the daemon did
# not grant while its daemon is away; it waits for the reconnection and
# asks. So no re-registration goes past what was granted: none refused,
# none believed past a limit, none killed, nothing counted unshimmed, and
# at rest after each round the daemon charges each what it charged
# before. One program of each kind: plain allocations too big for a
# lease (on a device of their own), ones drawn from a lease, a pool's
# (cuMemAllocAsync, given back at each synchronisation), VMM, managed
# memory and arrays; two rounds, two cuts each.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=8Gi,8Gi SIMCUDA_CONTEXT_BYTES=8Mi
# The library says when it has re-registered (info).
export GPUFRAC_LOG=info
C=$CLIENTS/churn_linked
printf '[daemon]\nlease_idle = 1h\n[group all]\nmatch = uid:0\nlimit = 7Gi\nunshimmed = kill\n' \
	>"$TMP/gpufrac.conf"
daemon_start

rounds=2
names="plain leased pool vmm managed arrays"
client_start plain env CUDA_VISIBLE_DEVICES=1 "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" \
	"$C" mem 1100Mi $rounds
client_start leased preload "$C" mem 1Mi $rounds
client_start pool preload "$C" async 16Mi $rounds
client_start vmm preload "$C" vmm 16Mi $rounds
client_start managed preload "$C" managed 16Mi $rounds
client_start arrays preload "$C" array 4Mi $rounds

# charges PIDS...: what the daemon charges each, all devices, its
# lease's undrawn part aside (the lease grows as the program churns).
charges() {
	local list

	list=$(IFS=,; echo "$*")
	ctl ps --json | json "' '.join(str(sum(d['used_bytes'] - d['leased_bytes'] for c in j['clients'] if c['pid'] == p for d in c['devices'])) for p in [$list])"
}
connections() { grep -c "client pid $1 (uid" "$TMP/gpufracd.log"; }
connected() { [ "$(connections "$1")" -ge "$2" ]; }
reregistered() { [ "$(grep -c "reconnected to gpufracd" "$TMP/$1.err")" -ge "$2" ]; }
said() { [ "$(grep -c "^$2" "$TMP/$1.out")" -ge "$3" ]; }
pids=
for n in $names; do pid_var=PID_$n; pids="$pids ${!pid_var}"; done
pids=${pids# }
before=$(charges $pids)
charged_as_before() { [ "$(charges $pids)" = "$before" ]; }
# signal_all: SIGUSR1 to every program.
signal_all() {
	# shellcheck disable=SC2086
	kill -USR1 $pids
}

cuts=0
for round in $(seq $rounds); do
	signal_all
	for n in $names; do
		wait_for "$n churns ($round)" 10 said "$n" churning "$round"
	done
	for cut in 1 2; do
		cuts=$((cuts + 1))
		for n in $names; do
			pid_var=PID_$n
			check "the daemon cuts $n while it churns ($round.$cut)" \
			    ctl disconnect "${!pid_var}"
		done
		for n in $names; do
			pid_var=PID_$n
			wait_for "$n connects again and re-registers ($round.$cut)" \
			    20 eval "connected ${!pid_var} $((cuts + 1)) &&
			    reregistered $n $cuts"
		done
	done
	signal_all
	for n in $names; do
		pid_var=PID_$n
		wait_for "$n rests ($round)" 10 said "$n" holding $((round + 1))
		check "$n lives, refused nothing ($round)" eval "kill -0 ${!pid_var} &&
		    grep -Eq '^rested $round [1-9][0-9]*\$' '$TMP/$n.out'"
	done
	wait_for "each is charged at rest what it was before ($round)" 10 \
	    charged_as_before
	check_eq "none refused, believed past a limit, counted unshimmed or killed ($round)" \
	    "$(events_of refused; events_of past-limit; events_of unshimmed;
	    events_of unshimmed-kill)" ""
done
for n in $names; do
	check_eq "$n decided nothing locally" \
	    "$(grep -c 'locally' "$TMP/$n.err")" 0
	client_release "$n"
done
finish
