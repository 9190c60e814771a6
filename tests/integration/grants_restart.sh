# A daemon killed leaves what it granted in the grants' file (state_dir),
# and the next one reads it before it accepts a connection (issue 40, B):
# every live client's record after the restart equals its record before
# the kill; a re-registration past what a process was granted is refused;
# a page that says, unasked, that the copy engine left its process out
# changes nothing: nor after a move out that failed, nor once the process
# came back in. A connection lost as its process re-registers keeps the
# process's record for the next daemon; one closed for a refused word
# leaves none, as the daemon before would keep none. A process whose shim
# had not registered yet when the daemon was killed, and which allocated
# while none ran, is believed (weighed by the old rules, said in an
# event): nobody had granted it anything to hold it to. A record changed
# between the kill and the restart, or a file of another layout, is said
# in an event for each process, whose word is weighed by the old rules,
# and the daemon starts all the same; a file others may read, or in a
# directory others may write in, is not believed either, said as the
# daemon starts.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
export SIMCUDA_DEVICES=512Mi
C=$CLIENTS/cuclient_linked
# A long move deadline: the sanitizers' copies are slow.
printf '[daemon]\nswap_engine = copy\nlease_idle = 1h\nswap_move_timeout = 60s\n' \
	>"$TMP/gpufrac.conf"
daemon_start
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')
daemon_kill() {
	kill -KILL "$DAEMON_PID"
	wait "$DAEMON_PID" 2>/dev/null
	DAEMON_PID=
}
# records: each client's pid, state, and per device its used, leased,
# host and limit bytes, one line each, by pid.
records() {
	ctl ps --json | json '"\n".join(" ".join([str(c["pid"]), c["state"]] +
	    ["%s:%d:%d:%d:%d" % (d["uuid"], d["used_bytes"], d["leased_bytes"],
	    d["host_bytes"], d["limit_bytes"]) for d in c["devices"]])
	    for c in sorted(j["clients"], key=lambda c: c["pid"]))'
}

. "$(dirname "$0")/mover_lib.sh"

client_start a preload "$C" alloc 256Mi fill hold check
client_start b preload "$C" alloc 128Mi alloc 1Mi hold
client_start c preload "$C" alloc 64Mi fill hold check
liar l $((32 << 20))
liar m $((16 << 20))
liar n $((4 << 20))
liar o $((4 << 20))
liar p $((2 << 20))
check "c is swapped out by copy" ctl swap out "$PID_c"
host_is() { [ "$(ps_json "[c for c in j['clients'] if c['pid'] == $1][0]['devices'][0]['host_bytes']")" = "$2" ]; }
wait_for "its 64 MiB are out" 10 host_is "$PID_c" $((64 << 20))
# f takes the room c left: c stays out across the restarts.
client_start f preload "$C" alloc 64Mi hold
# l, asked to move out by copy, fails its move: it never left, and its
# record says so again (a record left saying "out by copy" would have its
# page, marked below, believed after the restart).
bg swap_l "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "$PID_l"
wait_for "l is asked to move out" 10 grep -q '^move out' "$TMP/l.out"
say l failed
wait_for "its move out fails" 10 eval "! kill -0 $PID_swap_l 2>/dev/null"
# n and o are moved out by copy, as their MOVEDs say.
for p in n o; do
	pid=PID_$p
	bg "swap_$p" "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap out "${!pid}"
	wait_for "$p is asked to move out" 10 grep -q '^move out' "$TMP/$p.out"
	say $p moved
	wait_for "its 4 MiB are out" 10 host_is "${!pid}" $((4 << 20))
done
# p's connection is lost, and lost again as it registers, before it
# re-registers anything: what it was granted is kept, in the file too.
say p touch
wait_for "p connects again and leaves, having re-registered nothing" 10 \
	eval '[ "$(grep -c "client pid $PID_p left" "$TMP/gpufracd.log")" = 2 ]'
# m re-registers 32 MiB more than it was granted: refused, it keeps
# nothing, in the file neither (its charge stays until it exits).
say m "commit $((32 << 20))"
wait_for "m re-registers 32 MiB past what it was granted" 10 said m closed 1
check "and is refused, said in an event" eval 'events_of refused |
	grep -q "refused pid $PID_m (uid 0): COMMIT of 32.0MiB past what it was granted"'
field() { ps_json "[c for c in j['clients'] if c['pid'] == $1][0]$2"; }
# z, begun now, uses CUDA only once the daemon is gone: its shell execs
# the client at a line on its stdin (the same process, begun now).
mkfifo "$TMP/z.in"
sh -c 'read -r go; exec "$@"' sh env "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" \
	"$C" alloc 4Mi hold <"$TMP/z.in" >"$TMP/z.out" 2>"$TMP/z.err" &
PID_z=$!
exec {FD_z}>"$TMP/z.in"
# alive_since_z: the daemon's last sign of life in the grants' file
# (header: ms since boot at byte 32) is surely after z began: the daemon
# lived, and could have known z, when z began.
alive_since_z() {
	"$PYTHON" - "$TMP/grants" "$PID_z" <<-'EOF'
	import os, struct, sys
	alive = struct.unpack_from("<Q", open(sys.argv[1], "rb").read(40), 32)[0]
	stat = open("/proc/%s/stat" % sys.argv[2]).read()
	hz = os.sysconf("SC_CLK_TCK")
	began = int(stat.rsplit(")", 1)[1].split()[19]) * 1000 // hz
	sys.exit(0 if alive > began + 1000 // hz else 1)
	EOF
}
wait_for "gpufracd has said it lives since z began" 10 alive_since_z
before=$(records)
liars="^\($PID_l\|$PID_m\|$PID_n\|$PID_o\|$PID_p\|$PID_z\) "
same() { [ "$(records | grep -v "$liars")" = "$(echo "$before" |
    grep -v "$liars")" ]; }

# --- restarted: the records, the liars ------------------------------------
daemon_kill
check "the grants' file is the daemon's own, mode 0600" \
	eval '[ "$(stat -c %a "$TMP/grants")" = 600 ]'
echo go >&"$FD_z"
wait_for "z allocates with no daemon to ask" 10 grep -q '^holding' "$TMP/z.out"
check_eq "and is let" "$(head -n 1 "$TMP/z.out")" "alloc ok"
say l mark
wait_for "l's page now says it is out by copy, unasked" 10 said l marked 1
say n mark
wait_for "n's page says it is out by copy, as it is" 10 said n marked 1
daemon_start
# Out by copy as their records say, n's page says so (believed), o's
# says it is in (its move never committed): n is then brought back in.
# Neither record says "out by copy" any longer: their pages, marked out
# unasked before the next restart, change nothing then.
say n "rejoin $((4 << 20))"
say o "rejoin $((4 << 20))"
wait_for "n and o re-register what they were granted" 10 eval \
	'said n rejoined 1 && said o rejoined 1'
out_by_copy() { grep -c "pid $1 was left swapped out by copy" "$TMP/gpufracd.log"; }
check_eq "n's page is believed where its record says it is out by copy" \
	"$(out_by_copy "$PID_n")" 1
check_eq "o's page, which says it is in, is believed too" \
	"$(out_by_copy "$PID_o")" 0
# (It comes back of its own accord where it fits; else this brings it.)
bg swap_n "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" swap in "$PID_n"
wait_for "n is brought back in" 10 has_event swap-in "$PID_n"
say l "rejoin $((32 << 20))"
wait_for "l re-registers what it was granted" 10 said l rejoined 1
check_eq "l's page changed nothing: running, its 32 MiB on the device" \
	"$(field "$PID_l" "['state']") $(field "$PID_l" "['devices'][0]['used_bytes']") $(field "$PID_l" "['devices'][0]['host_bytes']")" \
	"running $((32 << 20)) 0"
say p "rejoin $((2 << 20))"
wait_for "p re-registers what it was granted" 10 said p rejoined 1
say m "rejoin $((16 << 20))"
wait_for "m, refused before the restart, re-registers what it had" 10 \
	said m closed 2
check "and is refused, as the daemon before would have" eval 'events_of refused |
	grep -q "refused pid $PID_m (uid 0): COMMIT of 16.0MiB past what it was granted"'
kill "$PID_m"
say l exit
say p exit
wait "$PID_l" "$PID_m" "$PID_p" 2>/dev/null
wait_for "every shim's record after the restart equals its record before" \
	10 same
z_holds() { [ "$(field "$PID_z" "['state']") $(field "$PID_z" "['devices'][0]['used_bytes']")" = "running $((4 << 20))" ]; }
wait_for "z registers with the new daemon, its 4 MiB believed" 10 z_holds
check_eq "z was not refused" "$(events_of refused | grep -c "pid $PID_z ")" 0
check "an event says it never registered with the earlier daemon" eval \
	'events_of unrecorded | grep -q "no record of what pid $PID_z was granted (it never registered with the earlier daemon)"'
check_eq "nothing else said unrecorded" \
	"$(events_of unrecorded | grep -vc "pid $PID_z ")" 0

# --- a record changed between the kill and the restart -------------------
daemon_kill
# The slot of b (layout 3, one device: slots from byte 128, 56 bytes each,
# the pid at 4, the granted bytes at 24): its granted bytes changed.
flip() {
	"$PYTHON" - "$TMP/grants" "$1" <<-'EOF'
	import struct, sys
	path, pid = sys.argv[1], int(sys.argv[2])
	b = bytearray(open(path, "rb").read())
	for off in range(128, len(b), 56):
	    if struct.unpack_from("<I", b, off + 4)[0] == pid:
	        b[off + 27] ^= 0xff
	open(path, "wb").write(bytes(b))
	EOF
}
flip "$PID_b"
say n mark
say o mark
wait_for "n's and o's pages say they are out, unasked" 10 eval \
	'said n marked 2 && said o marked 1'
daemon_start
say n "rejoin $((4 << 20))"
say o "rejoin $((4 << 20))"
wait_for "n and o re-register" 10 eval 'said n rejoined 2 && said o rejoined 2'
check_eq "n, back in before the restart: its page is taken as out no more" \
	"$(out_by_copy "$PID_n")" 1
check_eq "nor is o's, in since the restart before" "$(out_by_copy "$PID_o")" 0
say n exit
say o exit
wait "$PID_n" "$PID_o" 2>/dev/null
check "the daemon starts, and an event names b's record as not believed" \
	eval 'events_of unrecorded | grep -q "pid $PID_b was granted is not believed: its record does not match its checksum"'
wait_for "b rejoins, its word weighed by the old rules" 10 same
check "an event says so as it connects" eval 'events_of unrecorded |
	grep -q "no record of what pid $PID_b was granted (1 record of the grants. file not believed)"'
check_eq "a's and c's records were believed: no event of theirs" \
	"$(events_of unrecorded | grep -c "pid \($PID_a\|$PID_c\) ")" 0

# --- a file of another layout ---------------------------------------------
daemon_kill
printf '\143' | dd of="$TMP/grants" bs=1 seek=8 conv=notrunc 2>/dev/null
daemon_start
wait_for "every shim rejoins, weighed by the old rules" 10 same
for p in a b c f; do
	pid=PID_$p
	check "an event says so for $p" eval 'events_of unrecorded | grep -q \
	    "no record of what pid ${!pid} was granted (the grants. file is of layout version 99, not 3)"'
done

# --- a file others may read -----------------------------------------------
daemon_kill
chmod 0640 "$TMP/grants"
daemon_start
check "the daemon says it is not believed as it starts" grep -q \
	"'$TMP/grants' is not gpufracd's own (owner [0-9]*, mode 0640): what the earlier daemon granted is not believed" \
	"$TMP/gpufracd.log"
check "and made a new one, its own" \
	eval '[ "$(stat -c %a "$TMP/grants")" = 600 ]'

# --- a directory others may write in --------------------------------------
daemon_kill
chmod o+w "$TMP"
daemon_start
chmod o-w "$TMP"
check "the daemon says the file in it is not believed" grep -q \
	"the directory of '$TMP/grants' is not gpufracd's own (owner 0, mode 0702): others may replace the file" \
	"$TMP/gpufracd.log"
client_release z
client_release f
client_release b
client_release a
check_eq "a's data intact" "$(tail -n 1 "$TMP/a.out")" "check ok"
client_release c
check_eq "c's data intact" "$(tail -n 1 "$TMP/c.out")" "check ok"
finish
