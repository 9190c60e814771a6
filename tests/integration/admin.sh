# RELOAD_REQ, the first admin command: root may; members of admin_group
# may, by primary or supplementary group; anyone else gets GF_ERR_PERMISSION.
# A bad configuration gets GF_ERR_CONFIG with its first "FILE:LINE:
# message", and the old configuration stays.
. "$(dirname "$0")/lib.sh"
conf=$TMP/gpufrac.conf
AS_NOBODY=(setpriv --reuid=65534 --regid=65534)

[ "$(id -u)" = 0 ] || skip "needs root: the test runs requests as other users"
command -v setpriv >/dev/null || skip "needs setpriv(1)"
chmod 0755 "$TMP"		# other users must reach the socket

# reload [CMD...]: send RELOAD_REQ as CMD (e.g. setpriv ...) would, and
# print "OK" or "ERROR CODE MESSAGE".
cat >"$TMP/reload.py" <<'EOF'
import socket, struct, sys
RELOAD_REQ, ERROR, OK = 36, 68, 81
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
s.settimeout(10)
s.send(struct.pack("<HHIII", 1, RELOAD_REQ, 16, 9, 0))
r = s.recv(256)
version, type_, length, seq, zero = struct.unpack("<HHIII", r[:16])
assert seq == 9 and length == len(r), (seq, length, len(r))
if type_ == OK:
    print("OK")
elif type_ == ERROR:
    code = struct.unpack("<I", r[16:20])[0]
    print("ERROR %d %s" % (code, r[20:140].split(b"\0")[0].decode()))
else:
    print("unexpected type %d" % type_)
EOF
chmod 0644 "$TMP/reload.py"
reload() { "$@" "$PYTHON" "$TMP/reload.py" "$GPUFRAC_SOCKET"; }
group_names() { ctl status --json | json 'sorted(set(g["name"] for g in j["groups"]))'; }

printf '[daemon]\ndefault_limit = 50%%\n' >"$conf"
daemon_start

printf '[daemon]\ndefault_limit = 50%%\n[group team]\nmatch = uid:4242\nlimit = 1Gi\n' >"$conf"
check_eq "root may reload" "$(reload)" OK
check_eq "the new configuration is in force" "$(group_names)" \
	"['default', 'team']"
check "the daemon logs who asked" \
	grep -q "pid [0-9]* (uid 0) asked for a reload" "$TMP/gpufracd.log"

printf '[daemon]\ndefault_limit = 50%%\n' >"$conf"
check_eq "nobody may not, without an admin_group" "$(reload "${AS_NOBODY[@]}" --clear-groups)" \
	"ERROR 3 reload: permission denied (root only)"
check_eq "and nothing changed" "$(group_names)" "['default', 'team']"
check "a refusal is logged" grep -q "(uid 65534) asked for a reload: refused" \
	"$TMP/gpufracd.log"

# admin_group: by primary group, or by a supplementary one.
if getent group users >/dev/null; then
	users=$(getent group users | cut -d: -f3)
	printf '[daemon]\nadmin_group = users\n[group team]\nmatch = uid:4242\n' >"$conf"
	check_eq "root applies admin_group = users" "$(reload)" OK
	check_eq "a user in neither group is refused, with the rule" \
		"$(reload "${AS_NOBODY[@]}" --clear-groups)" \
		"ERROR 3 reload: permission denied (root or members of group 'users' only)"
	check_eq "a member by a supplementary group may" \
		"$(reload "${AS_NOBODY[@]}" --groups="$users")" OK
	check_eq "a member by its primary group may" \
		"$(reload setpriv --reuid=65534 --regid="$users" --clear-groups)" OK
else
	echo "skipping the admin_group cases: no group 'users'"
fi

# A bad configuration: the first error, and the old one stays.
printf '[daemon]\nadmin_group = users\n[group team]\nmatch = uid:4242\nlimit = 1Gi\n[group other]\nmatch = pod:1234\npriority = high\n' >"$conf"
# (ERROR carries at most 119 bytes of it; the log has all.)
out=$(reload)
check_eq "a bad configuration is refused with its first FILE:LINE" \
	"${out%%: a pod UID*}" "ERROR 5 $conf:7: bad rule 'pod:1234' for 'match'"
check_eq "and the old configuration stays" "$(group_names)" \
	"['default', 'team']"
check "the daemon logged every error" grep -q "$conf:8: bad priority" \
	"$TMP/gpufracd.log"
printf '[group a]\nmatch = uid:1\nguarantee = 3Gi\n[group b]\nmatch = uid:2\nguarantee = 2Gi\n' >"$conf"
check "guarantees beyond the device: GF_ERR_CONFIG naming the device" \
	sh -c "'$PYTHON' '$TMP/reload.py' '$GPUFRAC_SOCKET' | grep -q '^ERROR 5 guarantees on GPU-.* (device 0) add up to 5.0GiB, more than its 4.0GiB'"
check_eq "the old configuration still stays" "$(group_names)" \
	"['default', 'team']"

# gpufracctl reload says the same.
printf '[daemon]\n' >"$conf"
check_eq "gpufracctl reload as root" "$(ctl reload --json)" '{"reloaded":true}'
check_eq "it applied" "$(group_names)" "['default']"
"${AS_NOBODY[@]}" --clear-groups "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" reload \
	>/dev/null 2>"$TMP/ctl.err"
check_eq "gpufracctl reload as nobody exits 1" $? 1
check "with the daemon's reason" grep -q "permission denied" "$TMP/ctl.err"
finish
