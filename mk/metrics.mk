# Prometheus metrics from gpufracd (daemon/metrics*.c): the HTTP server is
# libmicrohttpd; tests/integration/metrics.sh checks the output with
# promtool and scrapes it with a Prometheus server of its own (Debian's
# prometheus package has both).
DAEMON_LIBS += -lmicrohttpd
BUILD_DEPS  += libmicrohttpd-dev
DEPS        += prometheus curl
