# The Slurm SPANK plugin (slurm/gpufrac_spank.so) in a real single-node
# Slurm started here on private ports and paths (its own munged, slurmctld
# and slurmd): srun --gpu-mem holds a step's task to the step's quota
# whatever it asks for itself, shows it in the step's group and cgroup
# while it runs, removes both when the step ends (killing what the step
# left behind); --gpu-priority and --gpu-resolver reach the group; sbatch
# --gpu-mem holds the batch step and the steps it starts; without
# --gpu-mem nothing is registered or preloaded; bad values fail srun and
# sbatch with the plugin's line before a job is made. The node has a GPU
# cut in 8 shards (gres/shard, on a character device made here): a step
# given K of them gets K/8 of the 512 MiB device, or its --gpu-mem if
# smaller, in srun, sbatch and salloc; shards=off leaves such steps alone.
# The node's name is slurmd's, never the job's SLURMD_NODENAME; a step of
# user 65534 cannot ask more than that user's [group] gives (issue 39).
#
# Sanitizers: the Makefile builds the plugin without one. Instrumented, it
# could not be dlopened into srun and slurmstepd ("ASan runtime does not
# come first"; libtsan "cannot allocate memory in static TLS block"), and
# with the runtime preloaded into slurmd, slurmstepd's forked tasks
# deadlocked in libasan's allocator and srun drew ThreadSanitizer reports
# on Slurm's own locks. So no Slurm program runs a sanitizer here; only
# the tasks get its runtime first in LD_PRELOAD (srun --export), as lib.sh
# does for the shim in sh and python, without leak checks (sh's own).
# shellcheck disable=SC2016	# sh -c scripts are expanded by the task
# One simulated GPU of 512 MiB, in 8 shards of 64 MiB.
SIMCUDA_DEVICES=512Mi
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
PLUGIN=$BUILD/slurm/gpufrac_spank.so
MiB=$((1 << 20))

[ "$(id -u)" = 0 ] || skip "not root: slurmd and the plugin must run as root"
for prog in munged munge slurmctld slurmd srun sbatch salloc squeue sinfo scancel setpriv; do
	command -v "$prog" >/dev/null ||
	    skip "no $prog (make deps installs slurm-wlm and munge)"
done
id munge >/dev/null 2>&1 || skip "no user munge to run munged as"
[ -f "$PLUGIN" ] || skip "no $PLUGIN: it is built where <slurm/spank.h> is (libslurm-dev)"

SX=$TMP/slurm
HOST=$(hostname -s)
MUNGED_PID='' CTLD_PID='' SLURMD_PID='' CG='' CG_MOUNT=''

# stop_pid PID: SIGTERM, and SIGKILL if it is still there after 5 seconds.
stop_pid() {
	[ -n "$1" ] || return 0
	kill -TERM "$1" 2>/dev/null || return 0
	for _ in $(seq 250); do
		kill -0 "$1" 2>/dev/null || break
		sleep 0.02
	done
	kill -KILL "$1" 2>/dev/null
	wait "$1" 2>/dev/null
}

# Jobs are cancelled while slurmctld and slurmd can still end them, then
# the daemons stop, then the cgroups go (extends lib.sh's cleanup).
slurm_stop() {
	local ids
	if [ -n "$CTLD_PID" ] && kill -0 "$CTLD_PID" 2>/dev/null; then
		ids=$(squeue -h -o %A 2>/dev/null)
		# shellcheck disable=SC2086
		[ -n "$ids" ] && scancel -q $ids
		for _ in $(seq 250); do
			[ -z "$(squeue -h -o %A 2>/dev/null)" ] &&
			    ! ls -d "$CG"/job_* >/dev/null 2>&1 && break
			sleep 0.02
		done
	fi
	stop_pid "$SLURMD_PID"; SLURMD_PID=
	stop_pid "$CTLD_PID"; CTLD_PID=
	stop_pid "$MUNGED_PID"; MUNGED_PID=
}
slurm_cleanup() {
	local d
	slurm_stop
	if [ -n "$CG" ]; then
		for d in "$CG"/*/ "$CG"; do
			[ -d "$d" ] || continue
			echo 1 >"$d/cgroup.kill" 2>/dev/null
			cgroup_remove "$d"
		done
	fi
	[ -n "$CG_MOUNT" ] && umount "$CG_MOUNT"
	cleanup
}
trap slurm_cleanup EXIT

# --- a cgroup2 directory of our own for the steps' cgroups --------------
cg_mount=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$cg_mount" ]; then
	mkdir "$TMP/cgroup2"
	mount -t cgroup2 cgroup2 "$TMP/cgroup2" 2>"$TMP/cg.err" ||
	    skip "no cgroup2 file system is mounted and mounting one failed: $(cat "$TMP/cg.err")"
	CG_MOUNT=$TMP/cgroup2 cg_mount=$CG_MOUNT
fi
mkdir "$cg_mount/gpufrac-test-$$" 2>"$TMP/cg.err" ||
    skip "cannot create a cgroup under '$cg_mount': $(cat "$TMP/cg.err")"
CG=$cg_mount/gpufrac-test-$$
# The name the kernel gives it in /proc/PID/cgroup.
mkdir "$CG/probe"
line=$(sh -c 'echo $$ >"$0/cgroup.procs" && grep "^0::" /proc/self/cgroup' \
	"$CG/probe" 2>"$TMP/cg.err")
rmdir "$CG/probe"
case $line in
0::/*/probe) CGNAME=${line#0::}; CGNAME=${CGNAME%/probe};;
*) skip "cannot move a process into a cgroup under '$CG': $(cat "$TMP/cg.err")";;
esac

# What a step may ask (issue 27): priority 7 and the wait resolver below.
# The metrics, on a free port: a step's shards are in its group's label.
MPORT=$("$PYTHON" "$TOP/tests/clients/metrics_probe.py" freeport 1)
printf '[daemon]\nmetrics_listen = 127.0.0.1:%s\n[jobs]\nmax_priority = 8\nresolvers = fail wait\n' \
	"$MPORT" >"$TMP/gpufrac.conf"
daemon_start

# --- munged, slurmctld and slurmd, private ------------------------------
# munged runs as munge: it must reach its directory under $TMP.
chmod 0755 "$TMP"
mkdir -p "$SX/state" "$SX/spool" "$SX/munge"
chown munge:munge "$SX/munge"
chmod 0711 "$SX/munge"
dd if=/dev/urandom of="$SX/munge/key" bs=128 count=1 2>/dev/null
chown munge:munge "$SX/munge/key"
chmod 0400 "$SX/munge/key"
MUNGE_SOCKET=$SX/munge/munge.socket
setpriv --reuid=munge --regid=munge --init-groups munged -F \
	--socket="$MUNGE_SOCKET" --key-file="$SX/munge/key" \
	--pid-file="$SX/munge/munged.pid" --log-file="$SX/munge/munged.log" \
	--seed-file="$SX/munge/munged.seed" 2>"$SX/munged.err" &
MUNGED_PID=$!
wait_for "munged starts on a private socket" 10 \
	sh -c 'munge -n -S "$0" | unmunge -S "$0"' "$MUNGE_SOCKET" ||
	{ cat "$SX/munged.err"; finish; }

# Two free ports: the kernel's choice, let go just before slurm binds them.
read -r CTLD_PORT SLURMD_PORT <<EOF
$("$PYTHON" -c 'import socket
s = [socket.socket() for _ in range(2)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')
EOF

export SLURM_CONF=$SX/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=gftest
SlurmctldHost=$HOST(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
StateSaveLocation=$SX/state
SlurmdSpoolDir=$SX/spool
SlurmctldPidFile=$SX/slurmctld.pid
SlurmdPidFile=$SX/slurmd.pid
SlurmctldLogFile=$SX/slurmctld.log
SlurmdLogFile=$SX/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
PlugStackConfig=$SX/plugstack.conf
GresTypes=gpu,shard
SelectType=select/cons_tres
NodeName=$HOST NodeAddr=127.0.0.1 CPUs=1 Gres=gpu:1,shard:8 State=UNKNOWN
PartitionName=test Nodes=$HOST Default=YES MaxTime=INFINITE State=UP
EOF
# The GPU: a character device of NVIDIA's major number, no real one needed.
# gres.conf is beside slurm.conf, where slurmd and the plugin look for it.
mknod "$SX/nvidia0" c 195 0
# Node zz, which does not exist, has 1 shard a GPU: a job that names it
# must not get its shards' share (issue 39, point 8).
cat >"$SX/gres.conf" <<EOF
AutoDetect=off
NodeName=$HOST Name=gpu File=$SX/nvidia0
NodeName=$HOST Name=shard Count=8 File=$SX/nvidia0
NodeName=zz Name=shard Count=1 File=$SX/nvidia0
EOF
echo "required $PLUGIN socket=$GPUFRAC_SOCKET shim=$SHIM cgroup=$CG max_priority=10" \
	>"$SX/plugstack.conf"

slurmctld -D -c -f "$SLURM_CONF" >"$SX/slurmctld.out" 2>&1 &
CTLD_PID=$!
slurmd -D -c -f "$SLURM_CONF" >"$SX/slurmd.out" 2>&1 &
SLURMD_PID=$!
node_idle() { [ "$(sinfo -h -n "$HOST" -o %t)" = idle ]; }
wait_for "slurmctld and slurmd bring the node up" 30 node_idle ||
	{ tail -n 20 "$SX"/*.log "$SX"/*.out; finish; }

# Tasks of a sanitizer build get its runtime before the shim. srun says
# nothing but errors (--quiet): a loaded machine's "job queued and
# waiting for resources" is not the task's output.
TASK_ENV=() JOB_SRUN="srun --quiet"
if [ -n "$SAN_RT" ]; then
	TASK_ENV=("--export=ALL,LD_PRELOAD=$SAN_RT,ASAN_OPTIONS=$ASAN_OPTIONS:detect_leaks=0")
	# srun in a batch script: not with the runtime the script has
	JOB_SRUN="env -u LD_PRELOAD srun --quiet ${TASK_ENV[0]}"
fi
# A step that hangs fails the test instead of stopping it.
srun() { timeout 60 srun --quiet "${TASK_ENV[@]}" "$@"; }
sbatch() { timeout 60 sbatch "${TASK_ENV[@]}" "$@"; }
njobs() { squeue -h -t all -o %A | wc -l; }
# What a task sees of LD_PRELOAD: the shim after what srun passed on.
PRELOADED=${SAN_RT:+$SAN_RT }$SHIM

# Fields of the daemon's state.
gf_client() {	# PID EXPR (over the client c)
	ctl ps --json | json "[$2 for c in j['clients'] if c['pid'] == $1][0]"
}
gf_group() {	# NAME EXPR (over the group g)
	ctl status --json | json "[$2 for g in j['groups'] if g['name'] == '$1'][0]"
}
gf_groups() { ctl status --json | json 'sorted(set(g["name"] for g in j["groups"]))'; }
group_gone() { ! gf_groups | grep -q "'$1'"; }
ps_has() { ctl ps | grep -q " $1 "; }
metrics_has() {	# SERIES VALUE: the daemon's metrics hold the line
	curl -sf "http://127.0.0.1:$MPORT/metrics" | grep -qxF "$1 $2"
}
# A process that has ended: gone, or a zombie nobody reaped.
proc_gone() { [ ! -e "/proc/$1" ] || grep -q '^[0-9]* (.*) Z' "/proc/$1/stat"; }

# --- bad values fail srun and sbatch before a job is made ---------------
before=$(njobs)
out=$(srun --gpu-mem=12XB true 2>&1)
check_eq "a bad --gpu-mem fails srun" $? 255
check_eq "with the plugin's line" "$(echo "$out" | grep 'gpufrac: ')" \
	"srun: error: gpufrac: --gpu-mem: bad limit '12XB' (expected a size such as 8Gi or a share such as 50%)"
out=$(srun --gpu-mem=64Mi --gpu-resolver=sometimes true 2>&1)
check_eq "a bad --gpu-resolver fails srun" "$?:$(echo "$out" | grep 'gpufrac: ')" \
	"255:srun: error: gpufrac: --gpu-resolver: bad resolver 'sometimes' (expected fail, wait, preempt or swap)"
out=$(srun --gpu-mem=64Mi --gpu-priority=11 true 2>&1)
check_eq "a --gpu-priority above plugstack.conf's max_priority fails srun" \
	"$?:$(echo "$out" | grep 'gpufrac: ')" \
	"255:srun: error: gpufrac: --gpu-priority: 11 is above 10, the highest this cluster allows"
printf '#!/bin/sh\n#SBATCH --gpu-mem=1.5.5Gi\ntrue\n' >"$TMP/bad.sh"
out=$(sbatch "$TMP/bad.sh" 2>&1)
check_eq "#SBATCH --gpu-mem with a bad value fails sbatch" \
	"$?:$(echo "$out" | grep 'gpufrac: ')" \
	"255:sbatch: error: gpufrac: --gpu-mem: bad limit '1.5.5Gi' (expected a size such as 8Gi or a share such as 50%)"
check_eq "and none of them made a job" "$(njobs)" "$before"

# --- srun --gpu-mem: the step's quota, whatever the task asks -----------
# The task says who it is, then becomes the client (same pid).
GPUFRAC_MEMORY_LIMIT=1Gi srun --gpu-mem=64Mi --gpu-priority=7 \
	--gpu-resolver=wait sh -c \
	'echo "step $SLURM_JOB_ID $SLURM_STEP_ID $$"; echo "env $LD_PRELOAD|$GPUFRAC_SOCKET"; exec "$0" "$@"' \
	"$C" total alloc 48Mi alloc 32Mi hold >"$TMP/a.out" 2>"$TMP/a.err" &
SRUN_A=$!
if wait_for "srun --gpu-mem starts the task" 20 grep -q '^holding' "$TMP/a.out"; then
	read -r _ JOB STEPID PID <"$TMP/a.out"
	GROUP=slurm-$JOB.$STEPID
	STEPCG=$CG/job_${JOB}_step_$STEPID
	check_eq "the task gets the shim preloaded and the daemon's socket" \
		"$(grep '^env ' "$TMP/a.out")" "env $PRELOADED|$GPUFRAC_SOCKET"
	check_eq "a task asking 1Gi for itself is held to the step's 64Mi" \
		"$(sed -n '3,5p' "$TMP/a.out" | tr '\n' ' ')" \
		"total $((64 * MiB)) alloc ok alloc err=2 "
	check_eq "ps shows it in the step's group with its limit" \
		"$(gf_client "$PID" "(c['group'], c['devices'][0]['limit_bytes'], c['priority'])")" \
		"('$GROUP', $((64 * MiB)), 7)"
	check_eq "the group has the step's priority and resolver" \
		"$(gf_group "$GROUP" "(g['limit_bytes'], g['priority'], g['resolver'], g['clients'])")" \
		"($((64 * MiB)), 7, 'wait', 1)"
	check_eq "the task is in the step's own cgroup" \
		"$(grep '^0::' "/proc/$PID/cgroup")" \
		"0::$CGNAME/job_${JOB}_step_$STEPID"
	kill -USR1 "$PID"
	wait "$SRUN_A"
	check_eq "the step ends well" $? 0
	wait_for "after the step its group is gone" 10 group_gone "$GROUP"
	wait_for "and its cgroup is removed" 10 test ! -d "$STEPCG"
else
	cat "$TMP/a.out" "$TMP/a.err"
fi

check_eq "a task's own smaller limit holds" \
	"$(GPUFRAC_MEMORY_LIMIT=32Mi srun --gpu-mem=64Mi "$C" total)" \
	"total $((32 * MiB))"

# --- what a step leaves behind is killed when it ends -------------------
out=$(srun --gpu-mem=64Mi sh -c \
	'setsid sleep 300 </dev/null >/dev/null 2>&1 & echo "$SLURM_JOB_ID $!"')
read -r JOB ORPHAN <<EOF
$out
EOF
if [ -n "${ORPHAN:-}" ]; then
	wait_for "a process the step left running is killed when it ends" 10 \
		proc_gone "$ORPHAN"
	wait_for "and the step's cgroup removed" 10 test ! -d "$CG/job_${JOB}_step_0"
else
	fail "the step with a process left running did not start: '$out'"
fi

# --- no quota, no task: the daemon's [jobs] caps (issue 27) -------------
srun --gpu-mem=64Mi --gpu-priority=9 sh -c 'echo ran' >"$TMP/c.out" 2>"$TMP/c.err"
check_eq "a --gpu-priority within plugstack.conf's but above [jobs] max_priority: no task" \
	"$?:$(cat "$TMP/c.out")" 1:
check "the daemon's line names the cap" grep -Eq \
	"error: gpufrac: step [0-9]+\.0: cannot set group 'slurm-[0-9]+\.0': priority 9 is above \[jobs\] max_priority 8" \
	"$TMP/c.err"
check_eq "and leaves no cgroup" "$(find "$CG" -mindepth 1 -type d)" ""

# --gpu-priority with neither --gpu-mem nor shards: no memory to rank. It
# is told in the step, where shards are known (a shard-only step may ask).
srun --gpu-priority=3 sh -c 'echo ran' >"$TMP/p.out" 2>"$TMP/p.err"
check_eq "--gpu-priority without --gpu-mem or shards: no task" \
	"$?:$(cat "$TMP/p.out")" 1:
check "the plugin's line says what it needs" grep -Eq \
	"error: gpufrac: step [0-9]+\.0: --gpu-priority, --gpu-resolver and --gpu-unshimmed need --gpu-mem or shards \(--gres=shard:K\)" \
	"$TMP/p.err"
# --gpu-unshimmed alone, likewise: never dropped silently (issue 39, 11).
srun --gpu-unshimmed=kill sh -c 'echo ran' >"$TMP/u.out" 2>"$TMP/u.err"
check_eq "--gpu-unshimmed without --gpu-mem or shards: no task" \
	"$?:$(cat "$TMP/u.out")" 1:
check "with the same line" grep -Eq \
	"error: gpufrac: step [0-9]+\.0: --gpu-priority, --gpu-resolver and --gpu-unshimmed need --gpu-mem or shards" \
	"$TMP/u.err"

# --- no quota, no task: the daemon cannot be reached ---------------------
sed "s|socket=$GPUFRAC_SOCKET|socket=$TMP/none.sock|" "$SX/plugstack.conf" \
	>"$SX/plugstack.none"
cp "$SX/plugstack.conf" "$SX/plugstack.good"
mv "$SX/plugstack.none" "$SX/plugstack.conf"	# read again by each step
srun --gpu-mem=64Mi sh -c 'echo ran' >"$TMP/f.out" 2>"$TMP/f.err"
check_eq "the step's task does not run, and srun fails" "$?:$(cat "$TMP/f.out")" 1:
check "it says why on the task's standard error" grep -Eq \
	"error: gpufrac: step [0-9]+\.0: cannot set group 'slurm-[0-9]+\.0': cannot connect to '$TMP/none\.sock': No such file or directory \(is gpufracd running\?\)" \
	"$TMP/f.err"
check_eq "and leaves no cgroup" "$(find "$CG" -mindepth 1 -type d)" ""
mv "$SX/plugstack.good" "$SX/plugstack.conf"

# --- without --gpu-mem the plugin does nothing --------------------------
# (and a sanitizer's runtime is not needed: nothing instrumented is
# preloaded)
timeout 60 srun sh -c 'echo "$$ ${LD_PRELOAD-unset}"; grep "^0::" /proc/self/cgroup; exec "$0" hold' \
	"$C" >"$TMP/n.out" 2>"$TMP/n.err" &
SRUN_N=$!
if wait_for "srun without --gpu-mem starts the task" 20 grep -q '^holding' "$TMP/n.out"; then
	read -r PID preload <"$TMP/n.out"
	check_eq "nothing is preloaded" "$preload" unset
	check_eq "the task stays in its cgroup" "$(sed -n 2p "$TMP/n.out")" \
		"$(grep '^0::' /proc/self/cgroup)"
	check_eq "no group is registered" "$(gf_groups)" "['default']"
	check_eq "no cgroup is made" "$(find "$CG" -mindepth 1 -type d)" ""
	kill -USR1 "$PID"
	wait "$SRUN_N"
else
	cat "$TMP/n.out" "$TMP/n.err"
fi

# --- shards: K of the GPU's 8 shards are K/8 of its memory ---------------
# Each task allocates 1 MiB at a time until refused.
for k in 2 6; do
	out=$(srun --gres=shard:$k sh -c \
		'echo "$SLURM_SHARDS_ON_NODE $CUDA_VISIBLE_DEVICES"; exec "$0" "$@"' \
		"$C" total many 1000 1Mi 2>&1)
	check_eq "srun --gres=shard:$k: $k of 8 shards are $((k * 64)) MiB" \
		"$(echo "$out" | tr '\n' ' ')" \
		"$k 0 total $((k * 64 * MiB)) many $((k * 64)) err=2 "
done
# The node's name is slurmd's, not the job's (issue 39, point 8).
check_eq "SLURMD_NODENAME=zz in srun's environment: still 1 of 8 shards" \
	"$(SLURMD_NODENAME=zz srun --gres=shard:1 "$C" total)" "total $((64 * MiB))"
check_eq "nor in --export" "$(timeout 60 srun --quiet \
	"${TASK_ENV[0]:---export=ALL},SLURMD_NODENAME=zz" --gres=shard:1 "$C" total)" \
	"total $((64 * MiB))"
check_eq "--gres=shard:6 --gpu-mem=64Mi: the smaller wins" \
	"$(srun --gres=shard:6 --gpu-mem=64Mi "$C" total many 1000 1Mi | tr '\n' ' ')" \
	"total $((64 * MiB)) many 64 err=2 "
check_eq "--gres=shard:2 --gpu-mem=50%: the shards' 25% wins" \
	"$(srun --gres=shard:2 --gpu-mem=50% "$C" total)" "total $((128 * MiB))"
check_eq "a task's own GPUFRAC_MEMORY_LIMIT only lowers the shards' share" \
	"$(GPUFRAC_MEMORY_LIMIT=1Gi srun --gres=shard:2 "$C" total) $(GPUFRAC_MEMORY_LIMIT=32Mi srun --gres=shard:2 "$C" total)" \
	"total $((128 * MiB)) total $((32 * MiB))"

# While it runs: the group says its shards in ps, status and the metrics;
# --gpu-priority and --gpu-resolver need no --gpu-mem: shards are memory.
srun --gres=shard:2 --gpu-priority=3 --gpu-resolver=wait sh -c 'echo "step $SLURM_JOB_ID $SLURM_STEP_ID $$"; exec "$0" "$@"' \
	"$C" alloc 16Mi hold >"$TMP/s.out" 2>"$TMP/s.err" &
SRUN_S=$!
if wait_for "srun --gres=shard:2 starts the task" 20 grep -q '^holding' "$TMP/s.out"; then
	read -r _ JOB STEPID PID <"$TMP/s.out"
	GROUP=slurm-$JOB.$STEPID-shards2of8
	check_eq "ps shows the task in a group named with its shards" \
		"$(gf_client "$PID" "(c['group'], c['devices'][0]['limit_bytes'])")" \
		"('$GROUP', $((128 * MiB)))"
	check "and so does ps's table" ps_has "$GROUP"
	check_eq "status shows the group with its limit, its task, and the priority and resolver asked" \
		"$(gf_group "$GROUP" "(g['limit_bytes'], g['clients'], g['priority'], g['resolver'])")" \
		"($((128 * MiB)), 1, 3, 'wait')"
	UUID=$(ctl status --json | json "j['devices'][0]['uuid']")
	check "the metrics carry the shards in the group's label" metrics_has \
		"gpufrac_group_limit_bytes{group=\"$GROUP\",uuid=\"$UUID\"}" \
		$((128 * MiB))
	kill -USR1 "$PID"
	wait "$SRUN_S"
	wait_for "after the step its group is gone" 10 group_gone "$GROUP"
else
	cat "$TMP/s.out" "$TMP/s.err"
fi

# salloc: the steps of the allocation get the shards' share.
check_eq "salloc --gres=shard:2: its steps get 128 MiB" \
	"$(timeout 60 salloc --gres=shard:2 $JOB_SRUN "$C" total 2>"$TMP/salloc.err")" \
	"total $((128 * MiB))"

# shards=off in plugstack.conf: shards are not memory, the step is left alone.
cp "$SX/plugstack.conf" "$SX/plugstack.good"
sed -i 's|$| shards=off|' "$SX/plugstack.conf"
# (The client itself, not a shell: a sanitizer's runtime in the task's
# LD_PRELOAD crashes programs built without it.)
check_eq "with shards=off a step with shards is left alone: the whole device" \
	"$(srun --gres=shard:2 "$C" total)" "total $((512 * MiB))"
check_eq "and --gpu-mem alone holds" \
	"$(srun --gres=shard:2 --gpu-mem=64Mi "$C" total)" "total $((64 * MiB))"
mv "$SX/plugstack.good" "$SX/plugstack.conf"

# --- sbatch: the batch step, and the steps it starts --------------------
cat >"$TMP/job.sh" <<EOF
#!/bin/sh
#SBATCH --gpu-mem=32Mi
#SBATCH --output=$TMP/job.out
"$C" total
grep '^0::' /proc/self/cgroup
$JOB_SRUN "$C" total
$JOB_SRUN --gpu-mem=16Mi "$C" total
EOF
JOB=$(sbatch --parsable "$TMP/job.sh")
job_state() { [ "$(squeue -h -t all -j "$JOB" -o %T)" = "$1" ]; }
wait_for "sbatch: the job ends well" 30 job_state COMPLETED
check_eq "#SBATCH --gpu-mem holds the batch step, in its own cgroup" \
	"$(head -n 2 "$TMP/job.out" | tr '\n' ' ')" \
	"total $((32 * MiB)) 0::$CGNAME/job_${JOB}_step_batch "
check_eq "and the steps it starts, unless they say otherwise" \
	"$(tail -n 2 "$TMP/job.out" | tr '\n' ' ')" \
	"total $((32 * MiB)) total $((16 * MiB)) "
wait_for "after the job no group is left" 10 \
	test "$(gf_groups)" = "['default']"
wait_for "nor a cgroup" 10 test -z "$(find "$CG" -mindepth 1 -type d)"

# sbatch --gres=shard:6: the batch step and its steps get 384 MiB.
cat >"$TMP/shards.sh" <<EOF
#!/bin/sh
#SBATCH --gres=shard:6
#SBATCH --output=$TMP/shards.out
"$C" total
$JOB_SRUN "$C" total
$JOB_SRUN --gpu-mem=16Mi "$C" total
EOF
JOB=$(sbatch --parsable "$TMP/shards.sh")
wait_for "sbatch --gres=shard:6: the job ends well" 30 job_state COMPLETED
check_eq "the batch step and its steps get their 6 of 8 shards" \
	"$(tr '\n' ' ' <"$TMP/shards.out")" \
	"total $((384 * MiB)) total $((384 * MiB)) total $((16 * MiB)) "

# --- a step's door never widens its user's [group] (issue 39, point 10) --
printf '[daemon]\nmetrics_listen = 127.0.0.1:%s\n[jobs]\nmax_priority = 8\nresolvers = fail wait\n[group users]\nmatch = uid:65534\nlimit = 128Mi\n' \
	"$MPORT" >"$TMP/gpufrac.conf"
check "the daemon takes a [group] of user 65534" ctl reload
nobody_setup
nobody_srun() {
	timeout 60 "${NOBODY_ENV[@]}" "${AS_NOBODY[@]}" srun --quiet \
	    --chdir=/tmp "${TASK_ENV[@]}" "$@"
}
nobody_srun --gpu-mem=100% "$C" total >"$TMP/w.out" 2>"$TMP/w.err"
check_eq "user 65534's srun --gpu-mem=100%: no task" "$?:$(cat "$TMP/w.out")" 1:
check "the daemon's line names the [group]'s limit" grep -Eq \
	"error: gpufrac: step [0-9]+\.0: cannot set group 'slurm-[0-9]+\.0': limit 100% is above \[group users\] limit 128\.0MiB" \
	"$TMP/w.err"
check_eq "within it, the step gets what it asks" \
	"$(nobody_srun --gpu-mem=64Mi "$C" total)" "total $((64 * MiB))"

slurm_stop
finish
