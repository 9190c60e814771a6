# gpufracctl top as a person sees it, in a terminal of tmux's (a private
# server): the device, the processes by use with their used figures and
# releases, a decision; a resize; the daemon going away and coming back;
# q and Ctrl-C give the terminal back and exit 0. Without a terminal, -n 2
# prints two looks as plain tables.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
command -v tmux >/dev/null || skip "tmux is not installed (make deps)"
C=$CLIENTS/cuclient_linked
VERSION=$(sed -n 's/^VERSION *= *//p' "$TOP/Makefile")
unset TMUX			# a tmux of our own, even inside another
SERVER=gftop-$$-$RANDOM
tmx() { tmux -L "$SERVER" -f /dev/null "$@"; }
trap 'tmx kill-server 2>/dev/null; cleanup' EXIT

# screen: what the pane shows now. shows ERE: a line of it matches.
screen() { tmx capture-pane -p -t top; }
shows() { screen | grep -Eq -- "$1"; }
hides() { ! shows "$1"; }
# line_shows N ERE: the screen's line N matches.
line_shows() { screen | sed -n "${1}p" | grep -Eq -- "$2"; }
# top_run ARGS...: gpufracctl top in the pane, its exit status then in
# $TMP/top.status (tmux 3.3's #{pane_dead_status} is not always set). The
# shell's trap lets Ctrl-C reach top alone: top's handler is its own.
top_run() {
	rm -f "$TMP/top.status"
	tmx respawn-pane -k -t top "bash -c 'trap : INT; \"\$0\" -s \"\$1\" \
	    top $*; echo \$? >\"\$2\"' '$GPUFRACCTL' '$GPUFRAC_SOCKET' \
	    '$TMP/top.status'"
}
# exited STATUS: top has exited, with STATUS.
exited() { [ "$(cat "$TMP/top.status" 2>/dev/null)" = "$1" ]; }
# ps_used PID: the USED figure `gpufracctl ps` gives PID.
ps_used() { ctl ps | awk -v p="$1" '$1 == p { print $6 }'; }
# row_shows PID [ERE]: top's row of PID shows the figure ps gives (a lease
# returned between the two looks changes it: asked again until they agree),
# then ERE.
row_shows() {
	shows "^ *$1 +[0-9]+ +default +0 +\[[#.]+\] +[0-9]+% +$(ps_used "$1") ${2:-}"
}
# row_of PID: the number of the screen's line that shows PID's row.
row_of() { screen | grep -nE "^ *$1 +[0-9]+ +default " | cut -d: -f1; }
above() { [ "$(row_of "$1")" -lt "$(row_of "$2")" ]; }

daemon_start
client_start small preload "$C" alloc 256Mi hold
client_start big preload "$C" alloc 1Gi hold
# beyond its limit: a deny event (env, so that $! is the program's pid)
env "LD_PRELOAD=${SAN_RT:+$SAN_RT }$SHIM" "$C" alloc 5Gi >/dev/null &
pid_deny=$!
wait "$pid_deny"
uuid=$(ctl status --json | json 'j["devices"][0]["uuid"]')

tmx new-session -d -s top -x 160 -y 50 "exec sleep 600" \; \
	set-option -g remain-on-exit on
top_run -d 200ms
wait_for "top shows the device" 20 shows "^ +0 +simcuda device 0 .*$uuid\$"
wait_for "top shows each process with what it uses and its release" 20 \
	row_shows "$PID_big" ".* running +$VERSION\$"
wait_for "the small one too" 20 row_shows "$PID_small"
check "the one using the most comes first" above "$PID_big" "$PID_small"
check "a decision shows: the denial" shows " deny +$pid_deny +default "
check "the keys are on the last line" line_shows 50 "q quit"

tmx resize-window -t top -x 100 -y 30
wait_for "after a resize, the screen fits the new size" 10 \
	line_shows 30 "q quit"
check "and still shows the processes" row_shows "$PID_big"

daemon_stop
wait_for "top says the daemon went away" 10 shows "gpufracd is not reachable"
# The look under way when it went may say "closed" first: the next says why.
wait_for "and why" 10 shows "cannot connect to '$GPUFRAC_SOCKET'"
daemon_start
wait_for "top shows the daemon back, with the process that rejoined" 20 \
	row_shows "$PID_big"

tmx send-keys -t top q
wait_for "q quits top" 10 exited 0
check "the terminal is given back: top's screen is gone" hides "q quit"

top_run
wait_for "top runs again" 20 shows "q quit"
tmx send-keys -t top C-c
wait_for "Ctrl-C quits it, status 0" 10 exited 0
tmx kill-server

# Without a terminal: plain tables, one look per interval.
out=$(ctl top -n 2 -d 200ms)
check_eq "top -n 2 exits 0" $? 0
check_eq "it prints two looks" "$(echo "$out" | grep -c '^gpufracctl top: ')" 2
check_eq "each with its process table" \
	"$(echo "$out" | grep -cE "^ *$PID_big +[0-9]+ +default ")" 2
check_eq "and no screen codes" "$(echo "$out" | grep -c $'\033')" 0

client_release small
client_release big
finish
