#!/usr/bin/env python3
"""Helpers for tests/integration/metrics.sh.

  freeport N                print N distinct TCP ports free on 127.0.0.1 now
  agree FILE STATUS_JSON    exit 0 if every device and group figure of
                            `gpufracctl status --json` (STATUS_JSON) is the
                            metric's in FILE, else print the first
                            difference and exit 1
  dashboard JSON FILE URL   exit 0 if every query of the Grafana dashboard
                            JSON names only metrics FILE has and parses in
                            the Prometheus server at URL, else say which
  hold HOST PORT N SOURCE   open N connections to HOST:PORT from address
                            SOURCE, each sending half a request; print
                            "holding" and keep them until killed
"""
import json
import re
import socket
import sys
import time
import urllib.error
import urllib.parse
import urllib.request

SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def samples(path):
    """(name, labels, value) of every sample line of an exposition text."""
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            m = SAMPLE.match(line.rstrip("\n"))
            if m is None:
                raise SystemExit("not a sample line: %r" % line)
            labels = dict(LABEL.findall(m.group(2) or ""))
            yield m.group(1), labels, m.group(3)


def find(path, name, want):
    found = [v for n, labels, v in samples(path)
             if n == name and all(labels.get(k) == v2
                                  for k, v2 in want.items())]
    if len(found) > 1:
        raise SystemExit("%d samples of %s %s" % (len(found), name, want))
    return found[0] if found else "absent"


def cmd_freeport(n):
    socks = [socket.socket() for _ in range(int(n))]
    for s in socks:
        s.bind(("127.0.0.1", 0))
    print(" ".join(str(s.getsockname()[1]) for s in socks))
    for s in socks:
        s.close()


DEVICE = {"capacity_bytes": "gpufrac_device_capacity_bytes",
          "total_bytes": "gpufrac_device_total_bytes",
          "reserve_bytes": "gpufrac_device_reserve_bytes",
          "used_bytes": "gpufrac_device_used_bytes",
          "leased_bytes": "gpufrac_device_leased_bytes",
          "host_bytes": "gpufrac_device_host_bytes",
          "guaranteed_bytes": "gpufrac_device_guaranteed_bytes",
          "lent_bytes": "gpufrac_device_lent_bytes",
          "clients": "gpufrac_device_clients"}
GROUP = {"limit_bytes": "gpufrac_group_limit_bytes",
         "guarantee_bytes": "gpufrac_group_guarantee_bytes",
         "used_bytes": "gpufrac_group_used_bytes",
         "clients": "gpufrac_group_clients",
         "borrowed_bytes": "gpufrac_group_borrowed_bytes"}


def cmd_agree(path, status_path):
    with open(status_path, encoding="utf-8") as f:
        st = json.load(f)
    checked = 0
    for d in st["devices"]:
        want = {"uuid": d["uuid"], "index": str(d["index"])}
        for key, name in DEVICE.items():
            got = find(path, name, want)
            if got != str(d[key]):
                print("%s%s is %s, status says %s" % (name, want, got,
                                                      d[key]))
                sys.exit(1)
            checked += 1
    for g in st["groups"]:
        want = {"group": g["name"], "uuid": g["device"]}
        for key, name in GROUP.items():
            got = find(path, name, want)
            if got != str(g[key]):
                print("%s%s is %s, status says %s" % (name, want, got,
                                                      g[key]))
                sys.exit(1)
            checked += 1
    print("%d figures agree" % checked)


def cmd_hold(host, port, n, source):
    conns = []
    for _ in range(int(n)):
        s = socket.socket()
        s.settimeout(5)
        s.bind((source, 0))
        s.connect((host, int(port)))
        try:
            s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            pass    # refused past the server's limits: still a try
        conns.append(s)
    print("holding", flush=True)
    time.sleep(3600)


def dashboard_queries(dash):
    """Every PromQL expression of a dashboard's panels, and its variables'
    queries (Grafana's label_values(), not PromQL)."""
    exprs, variables = [], []
    panels = list(dash.get("panels", []))
    while panels:
        p = panels.pop()
        panels.extend(p.get("panels", []))
        exprs.extend(t["expr"] for t in p.get("targets", []) if "expr" in t)
    for v in dash.get("templating", {}).get("list", []):
        if v.get("type") == "query":
            q = v["query"]
            variables.append(q["query"] if isinstance(q, dict) else q)
    return exprs, variables


def families(path):
    """The metric names an exposition text serves, histogram series too."""
    names = set()
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"# TYPE (\S+) (\S+)", line)
            if m is None:
                continue
            names.add(m.group(1))
            if m.group(2) == "histogram":
                names.update(m.group(1) + s for s in
                              ("_bucket", "_sum", "_count"))
    return names


def promql_parses(url, expr):
    q = urllib.parse.urlencode({"query": expr})
    try:
        with urllib.request.urlopen("%s/api/v1/query?%s" % (url, q),
                                    timeout=10) as r:
            return json.load(r)["status"] == "success"
    except urllib.error.HTTPError as e:
        print("%s: %s" % (expr, e.read().decode("utf-8", "replace")))
        return False


def cmd_dashboard(dash_path, metrics_path, url):
    with open(dash_path, encoding="utf-8") as f:
        exprs, variables = dashboard_queries(json.load(f))
    known = families(metrics_path)
    for q in exprs + variables:
        for name in re.findall(r"\bgpufrac_[a-z_]+", q):
            if name not in known:
                print("%s: no metric %s" % (q, name))
                sys.exit(1)
    for e in exprs:
        e = re.sub(r"\$__rate_interval", "1m", e)
        if not promql_parses(url, re.sub(r"\$[a-z_]+", ".*", e)):
            sys.exit(1)
    if not exprs:
        sys.exit("no queries in %s" % dash_path)
    print("ok: %d queries, %d variables" % (len(exprs), len(variables)))


COMMANDS = {"freeport": cmd_freeport, "agree": cmd_agree,
            "dashboard": cmd_dashboard, "hold": cmd_hold}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]](*sys.argv[2:])
