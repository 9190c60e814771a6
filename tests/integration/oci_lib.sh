# Shared set-up for the tests under a real OCI runtime, crun (oci.sh,
# unshimmed_oci.sh, jobs_together.sh): sourced after lib.sh; skips where
# crun cannot run a container. Gives bundle, crun_run, crun_start, holding
# and in_cgroup2 (each says what it does), CG2 (the cgroup2 mount), HOOK
# (the OCI hook), C (the client run in containers), GPUFRAC_SOCKET (in a
# directory of its own), and removes every container made, with its
# cgroup, at exit.
[ "$(id -u)" = 0 ] || skip "not root: crun needs root to make namespaces, cgroups and mounts here"
command -v crun >/dev/null || skip "crun is not installed (apt-get install crun)"
command -v unshare >/dev/null || skip "unshare is not installed (util-linux)"
grep -qw cgroup2 /proc/filesystems || skip "the kernel has no cgroup2 file system"
CG2=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
[ -n "$CG2" ] || skip "no cgroup2 file system is mounted"
HOOK=$BUILD/oci/gpufrac-oci-hook
C=$CLIENTS/cuclient_linked

# The daemon's socket in a directory of its own: the CDI spec mounts that
# directory, read-only, into containers; $TMP itself is mounted writable
# for the containers' sanitizer reports.
mkdir "$TMP/run"
export GPUFRAC_SOCKET=$TMP/run/gpufrac.sock

# Every container made here: removed at exit with its cgroup, whatever
# state it was left in (extends lib.sh's cleanup).
RUNROOT=$TMP/crun
CONTAINERS=''
oci_cleanup() {
	local name
	# shellcheck disable=SC2046
	kill -9 $(jobs -p) 2>/dev/null
	for name in $CONTAINERS; do
		in_cgroup2 crun --root "$RUNROOT" delete -f "$name" >/dev/null 2>&1
		rmdir "$CG2/gpufrac-test-$$-$name" 2>/dev/null
	done
	cleanup
}
trap oci_cleanup EXIT

# in_cgroup2 CMD...: crun tells cgroup v2 from what is mounted at
# /sys/fs/cgroup; where that is the v1 layout (a hybrid host), CMD runs
# in a mount namespace of its own with the cgroup2 hierarchy mounted there.
# The hierarchy is the one the host has elsewhere: the same cgroups, the
# same paths in /proc/PID/cgroup.
# shellcheck disable=SC2016
in_cgroup2() {
	unshare -m sh -c 'mount --make-rprivate / &&
	    if [ "$(stat -f -c %T /sys/fs/cgroup)" != cgroup2fs ]; then
		umount -l /sys/fs/cgroup &&
		mount -t cgroup2 none /sys/fs/cgroup || {
		    echo "cannot mount cgroup2 at /sys/fs/cgroup" >&2
		    exit 125; }
	    fi && exec "$@"' sh "$@"
}

# bundle NAME SPEC ANNOTATIONS CMD...: the bundle $TMP/NAME of container
# NAME running CMD, in cgroup /gpufrac-test-$$-NAME, with the JSON object
# ANNOTATIONS and the container edits of the CDI spec file SPEC ('' for
# none). Its root is read-only: the host's /usr and /etc, the checkout, the
# build tree and $TMP at their own paths, the host's /dev/shm (the simulated GPU's shared
# state). Hook messages go to $TMP/NAME.hook (crun's run.oci.hooks.stderr).
# HOOK_ARGS=none: the hooks are given no arguments, only their path, as
# hand-written hook configurations often are. OCI_USER=UID:GID: the
# container's process user (default 0:0).
bundle() {
	CONTAINERS="$CONTAINERS $1"
	"$PYTHON" - "$TMP" "$TOP" "$BUILD" "$1" "/gpufrac-test-$$-$1" "$2" "$3" \
	    "${SAN_RT:+$SAN_RT $SHIM}" "${@:4}" <<'EOF'
import json, os, sys

tmp, top, build, name, cgpath, spec, annots, san_preload = sys.argv[1:9]
args = sys.argv[9:]
bundle = os.path.join(tmp, name)
rootfs = os.path.join(bundle, "rootfs")
os.makedirs(rootfs)
ro = ["rbind", "ro", "nosuid", "nodev"]
mounts = [
    {"destination": "/proc", "type": "proc", "source": "proc"},
    {"destination": "/dev", "type": "tmpfs", "source": "tmpfs",
     "options": ["nosuid", "strictatime", "mode=755", "size=65536k"]},
    {"destination": "/usr", "type": "bind", "source": "/usr", "options": ro},
    {"destination": "/etc", "type": "bind", "source": "/etc", "options": ro},
    {"destination": "/dev/shm", "type": "bind", "source": "/dev/shm",
     "options": ["rbind", "rw", "nosuid", "nodev"]},
    # the container's own cgroup, as runtimes mount it (the simulated
    # driver's memory limits find it there)
    {"destination": "/sys/fs/cgroup", "type": "cgroup", "source": "cgroup",
     "options": ["nosuid", "noexec", "nodev", "relatime", "ro"]},
    {"destination": top, "type": "bind", "source": top, "options": ro},
    {"destination": build, "type": "bind", "source": build, "options": ro},
    {"destination": tmp, "type": "bind", "source": tmp,
     "options": ["rbind", "rw", "nosuid", "nodev"]},
]
# /bin, /lib...: the host's links into /usr (merged /usr), or its own
for d in ("bin", "sbin", "lib", "lib32", "lib64", "libx32"):
    host = "/" + d
    if os.path.islink(host):
        os.symlink(os.readlink(host), os.path.join(rootfs, d))
    elif os.path.isdir(host):
        mounts.append({"destination": host, "type": "bind", "source": host,
                       "options": ro})
keep = ("SIMCUDA_STATE", "SIMCUDA_DEVICES", "LD_LIBRARY_PATH",
        "ASAN_OPTIONS", "UBSAN_OPTIONS", "TSAN_OPTIONS")
env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
env.update((k, os.environ[k]) for k in keep if k in os.environ)
hooks = {}
if spec:
    # what a CDI-aware engine does with the device's container edits
    with open(spec) as f:
        dev = [d for d in json.load(f)["devices"] if d["name"] == "all"][0]
    edits = dev["containerEdits"]
    env.update(e.split("=", 1) for e in edits.get("env", []))
    for m in edits.get("mounts", []):
        mounts.append({"destination": m["containerPath"], "type": "bind",
                       "source": m["hostPath"],
                       "options": m.get("options", [])})
    for h in edits.get("hooks", []):
        # the sanitizers' reports where lib.sh's finish looks
        henv = h.get("env", []) + ["%s=%s" % (k, os.environ[k])
                                   for k in keep[3:] if k in os.environ]
        hook = {"path": h["path"], "args": h.get("args", []), "env": henv}
        if os.environ.get("HOOK_ARGS") == "none":
            del hook["args"]
        hooks.setdefault(h["hookName"], []).append(hook)
    if san_preload:
        env["LD_PRELOAD"] = san_preload
annotations = json.loads(annots)
annotations["run.oci.hooks.stderr"] = os.path.join(tmp, name + ".hook")
config = {
    "ociVersion": "1.0.2",
    "process": {"terminal": False, "user": dict(zip(("uid", "gid"),
                map(int, os.environ.get("OCI_USER", "0:0").split(":")))),
                "args": args, "cwd": "/", "noNewPrivileges": True,
                "env": ["%s=%s" % kv for kv in sorted(env.items())]},
    "root": {"path": "rootfs", "readonly": True},
    "hostname": name,
    "mounts": mounts,
    "annotations": annotations,
    "hooks": hooks,
    "linux": {"cgroupsPath": cgpath,
              "namespaces": [{"type": t} for t in
                             ("pid", "mount", "ipc", "uts", "network",
                              "cgroup")]},
}
with open(os.path.join(bundle, "config.json"), "w") as f:
    json.dump(config, f, indent=1)
EOF
}

# crun_run NAME: run container NAME in the foreground; output in
# $TMP/NAME.out and .err, and its exit status.
crun_run() {
	in_cgroup2 crun --root "$RUNROOT" run -b "$TMP/$1" "$1" \
	    </dev/null >"$TMP/$1.out" 2>"$TMP/$1.err"
}

# crun_start NAME: the same in the background, its pid in CRUN_PID.
crun_start() {
	in_cgroup2 crun --root "$RUNROOT" run -b "$TMP/$1" "$1" \
	    </dev/null >"$TMP/$1.out" 2>"$TMP/$1.err" &
	CRUN_PID=$!
}

# holding NAME DESC: wait until the client of container NAME holds; if it
# does not, kill the container so that crun_start's crun returns.
holding() {
	wait_for "$2" 15 grep -q '^holding' "$TMP/$1.out" && return 0
	in_cgroup2 crun --root "$RUNROOT" kill "$1" KILL >/dev/null 2>&1
	return 1
}

# --- can crun run a container here at all? -------------------------------
bundle probe '' '{}' true
crun_run probe
rc=$?
[ "$rc" -eq 0 ] ||
	skip "crun cannot run a container here (exit $rc): $(tail -n 1 "$TMP/probe.err")"
