# gpufracd's Prometheus metrics (metrics_listen): bad addresses refused
# with FILE:LINE, the scraped text accepted by promtool, its device and
# group figures the same as `gpufracctl status --json`, a real Prometheus
# server (Debian's) scraping a process's used bytes exactly, counters
# moving (a deny, a wait and its timeout in the histogram), idle
# half-open HTTP connections that stall nothing, and reloads that refuse
# a bad address, move the server and stop it.
# shellcheck disable=SC2154	# PID_* are client_start's
. "$(dirname "$0")/lib.sh"
C=$CLIENTS/cuclient_linked
MiB=$((1 << 20)) GiB=$((1 << 30))
conf=$TMP/gpufrac.conf

command -v promtool >/dev/null ||
	skip "no promtool (Debian package prometheus): cannot check the format"
command -v prometheus >/dev/null ||
	skip "no prometheus server (Debian package prometheus)"

probe() { "$PYTHON" "$TOP/tests/clients/metrics_probe.py" "$@"; }

# scrape_port PORT: the metrics into $TMP/m; fails unless answered 200.
scrape_port() { curl -sf -o "$TMP/m" "http://127.0.0.1:$1/metrics"; }
scrape() { scrape_port "$MPORT"; }
# metric SERIES: its value in the last scrape, or "absent". SERIES as the
# daemon writes it: name{label="value",...}, labels in its order.
metric() {
	awk -v s="$1 " 'index($0, s) == 1 { print substr($0, length(s) + 1); n++ }
	    END { if (!n) print "absent" }' "$TMP/m"
}
# scraped_is VALUE SERIES: a new scrape says so.
scraped_is() { scrape && [ "$(metric "$2")" = "$1" ]; }
# http_status URL [METHOD]
http_status() { curl -s -o /dev/null -w '%{http_code}' ${2:+-X "$2"} "$1"; }
# refused PORT: nothing listens there any more.
refused() { ! curl -s -o /dev/null "http://127.0.0.1:$1/metrics"; }
ctl_status() { timeout 5 "$GPUFRACCTL" -s "$GPUFRAC_SOCKET" status >/dev/null; }

# --- a Prometheus server of our own, first: it takes a few seconds to
# scrape a new target; if it cannot run here, skip ----------------------
read -r MPORT MPORT2 PPORT <<<"$(probe freeport 3)"
cat >"$TMP/prometheus.yml" <<EOF
global:
  scrape_interval: 200ms
  scrape_timeout: 150ms
scrape_configs:
  - job_name: gpufracd
    static_configs:
      - targets: ['127.0.0.1:$MPORT']
EOF
prometheus --config.file="$TMP/prometheus.yml" \
	--storage.tsdb.path="$TMP/prometheus" \
	--web.listen-address="127.0.0.1:$PPORT" --log.level=warn \
	</dev/null >"$TMP/prometheus.log" 2>&1 &
PROM_PID=$!
PROM=http://127.0.0.1:$PPORT
prom_ready() {
	kill -0 "$PROM_PID" 2>/dev/null || return 2
	curl -sf -o /dev/null "$PROM/-/ready"
}
deadline=$(($(date +%s) + 30))
until prom_ready; do
	[ $? = 2 ] && skip "prometheus cannot run here: $(tail -n 1 "$TMP/prometheus.log")"
	[ "$(date +%s)" -ge "$deadline" ] && skip "prometheus did not get ready within 30s: $(tail -n 1 "$TMP/prometheus.log")"
	sleep 0.05
done
pass "a prometheus server runs on 127.0.0.1:$PPORT"
# prom_is VALUE EXPR: the server's one result for EXPR has VALUE.
prom_is() {
	curl -sf --get --data-urlencode "query=$2" "$PROM/api/v1/query" \
	    >"$TMP/q" || return 1
	[ "$(grep -o '"value":' "$TMP/q" | wc -l)" = 1 ] &&
	    grep -q "\"value\":\[[0-9.]*,\"$1\"\]" "$TMP/q"
}

# --- bad addresses: one line naming file, line and value ----------------
bad_address() {	# value why
	printf '[daemon]\nlog_level = info\nmetrics_listen = %s\n' "$1" \
	    >"$TMP/bad.conf"
	out=$("$GPUFRACD" -n -c "$TMP/bad.conf" 2>&1)
	check_eq "-n refuses metrics_listen = $1" "$?:$out" \
	    "1:$TMP/bad.conf:3: bad address for 'metrics_listen': '$1' ($2)"
}
bad_address localhost:9477 "'localhost' is not a numeric IPv4 address"
bad_address 127.0.0.1:0 "the port must be 1 to 65535"
bad_address 127.0.0.1:65536 "the port must be 1 to 65535"
bad_address 127.0.0.1 "expected address:port, e.g. 127.0.0.1:9477"
bad_address ::1:9477 "an IPv6 address goes in brackets, e.g. [::1]:9477"
bad_address '[::1]9477' "expected [IPv6 address]:port"
printf '[daemon]\nmetrics_listen = [::1]:9477\n' >"$TMP/v6.conf"
check_eq "-n accepts an IPv6 address in brackets" \
	"$("$GPUFRACD" -n -c "$TMP/v6.conf" 2>&1)" "configuration OK"

# --- the daemon, one group, one process --------------------------------
write_conf() {	# metrics_listen line
	{
		printf '[daemon]\n%s\n' "$1"
		printf '[group trainer]\nmatch = uid:%s\nlimit = 1Gi\n' "$(id -u)"
		printf 'guarantee = 256Mi\nresolver = wait\nwait_timeout = 300ms\n'
	} >"$conf"
}
write_conf "metrics_listen = 127.0.0.1:$MPORT"
daemon_start
check "the daemon says where it serves" \
	grep -q "serving metrics on http://127.0.0.1:$MPORT/metrics" "$TMP/gpufracd.log"
client_start a preload "$C" alloc 768Mi hold
check_eq "the client holds 768Mi" "$(head -n 1 "$TMP/a.out")" "alloc ok"
A="pid=\"$PID_a\",group=\"trainer\""
DEV=$(ctl status --json | json "j['devices'][0]['uuid']")

check "GET /metrics answers 200" scrape
"$GPUFRACD" -f -s "$TMP/second.sock" -c "$conf" 2>"$TMP/second.err"
check_eq "a second daemon cannot have the address: it does not start" $? 1
check "and says why in one line" grep -qx \
	"gpufracd: cannot listen on '127.0.0.1:$MPORT' for metrics: Address already in use" \
	"$TMP/second.err"
check "and leaves no socket behind" test ! -e "$TMP/second.sock"
out=$(promtool check metrics <"$TMP/m" 2>&1)
check_eq "promtool check metrics accepts it, lint included" "$?:$out" "0:"
check "HEAD /metrics names the exposition format" sh -c \
	"curl -sfI http://127.0.0.1:$MPORT/metrics | tr -d '\r' | grep -qix 'content-type: text/plain; version=0.0.4; charset=utf-8'"
check_eq "the process's limit is its group's" \
	"$(metric "gpufrac_process_limit_bytes{$A,uuid=\"$DEV\"}")" $GiB
check_eq "its state is running" \
	"$(metric "gpufrac_process_state{$A,state=\"running\"}") $(metric "gpufrac_process_state{$A,state=\"waiting\"}")" "1 0"
wait_for "its used bytes are what it holds (once its lease is back)" 10 \
	scraped_is $((768 * MiB)) "gpufrac_process_used_bytes{$A,uuid=\"$DEV\"}"

agree() {
	ctl status --json >"$TMP/status.json" && scrape &&
	    probe agree "$TMP/m" "$TMP/status.json" >"$TMP/agree.out"
}
wait_for "device and group figures agree with gpufracctl status --json" 10 agree
check_eq "all of them: 9 per device, 5 per group and device" \
	"$(cat "$TMP/agree.out")" "19 figures agree"
check_eq "the device's guaranteed bytes are the group's guarantee" \
	"$(metric "gpufrac_device_guaranteed_bytes{uuid=\"$DEV\",index=\"0\"}")" \
	$((256 * MiB))

# --- Prometheus scrapes the daemon ---------------------------------------
wait_for "prometheus has the process's used bytes, exactly" 20 \
	prom_is $((768 * MiB)) "gpufrac_process_used_bytes{pid=\"$PID_a\"}"
check "and the group's" \
	prom_is $((768 * MiB)) 'gpufrac_group_used_bytes{group="trainer"}'
out=$(probe dashboard "$TOP/etc/grafana/gpufrac.json" "$TMP/m" "$PROM" 2>&1)
check_eq "the Grafana dashboard's queries parse and name served metrics" \
	"$?:${out%%:*}" "0:ok"

# --- counters move -------------------------------------------------------
T='group="trainer"'
check_eq "no deny yet" "$(metric "gpufrac_denies_total{$T}")" 0
preload "$C" alloc 2Gi >"$TMP/d.out" 2>&1
check_eq "an allocation over the group's limit is refused" \
	"$(head -n 1 "$TMP/d.out")" "alloc err=2"
scrape
check_eq "gpufrac_denies_total counts it, and _denied_bytes_total its size" \
	"$(metric "gpufrac_denies_total{$T}") $(metric "gpufrac_denied_bytes_total{$T}")" \
	"1 $((2 * GiB))"
wait_for "prometheus sees the counter move" 20 \
	prom_is 1 'gpufrac_denies_total{group="trainer"}'

preload "$C" alloc 512Mi >"$TMP/w.out" 2>&1
check_eq "a request the group's limit cannot hold yet waits, then times out" \
	"$(head -n 1 "$TMP/w.out")" "alloc err=2"
scrape
check_eq "gpufrac_waits_total and gpufrac_wait_timeouts_total count it" \
	"$(metric "gpufrac_waits_total{$T}") $(metric "gpufrac_wait_timeouts_total{$T}")" "1 1"
check_eq "the wait histogram has it, past 0.1s (wait_timeout is 300ms)" \
	"$(metric "gpufrac_wait_seconds_count{$T}") $(metric "gpufrac_wait_seconds_bucket{$T,le=\"0.1\"}") $(metric "gpufrac_wait_seconds_bucket{$T,le=\"+Inf\"}")" \
	"1 0 1"
check "its sum is at least the timeout" awk -v s="$(metric "gpufrac_wait_seconds_sum{$T}")" \
	'BEGIN { exit !(s >= 0.29) }'
check_eq "every decision is counted" "$(metric gpufrac_events_total)" \
	"$(ctl events --json | wc -l)"

# --- a slow or hostile HTTP client stalls nothing ------------------------
# From another loopback address: the per-address limit is not ours.
bg hold "$PYTHON" "$TOP/tests/clients/metrics_probe.py" hold 127.0.0.1 \
	"$MPORT" 12 127.0.0.2
wait_for "12 half-sent requests are held open" 10 grep -q holding "$TMP/hold.out"
check "gpufracctl status still answers" ctl_status
check "a scrape still answers 200" scrape
check_eq "/ points to /metrics" "$(http_status "http://127.0.0.1:$MPORT/")" 200
check_eq "another path is 404" "$(http_status "http://127.0.0.1:$MPORT/x")" 404
check_eq "a POST is 405" "$(http_status "http://127.0.0.1:$MPORT/metrics" POST)" 405
kill "$PID_hold"
wait "$PID_hold" 2>/dev/null

# --- reloads -------------------------------------------------------------
write_conf "metrics_listen = 127.0.0.1:99999"
out=$(ctl reload 2>&1)
check_eq "a reload with a bad address is refused, naming file and line" \
	"$?:$out" "1:gpufracctl: $conf:2: bad address for 'metrics_listen': '127.0.0.1:99999' (the port must be 1 to 65535)"
check "the old server still serves" scrape
check_eq "the refusal is counted" \
	"$(metric 'gpufrac_reloads_total{result="refused"}') $(metric gpufrac_config_last_reload_successful)" "1 0"

write_conf "metrics_listen = 127.0.0.1:$MPORT2"
check "a reload moves the server" ctl reload
check "to the new address" scrape_port "$MPORT2"
check_eq "counted applied" \
	"$(metric 'gpufrac_reloads_total{result="applied"}') $(metric gpufrac_config_last_reload_successful)" "1 1"
check "and the old one is closed" refused "$MPORT"

write_conf ""
check "a reload without metrics_listen" ctl reload
check "stops the server" refused "$MPORT2"
check "and says so" grep -q "no longer serving metrics on '127.0.0.1:$MPORT2'" "$TMP/gpufracd.log"

client_release a
kill -TERM "$PROM_PID"
wait "$PROM_PID"
check_eq "prometheus stops on SIGTERM" $? 0
finish
