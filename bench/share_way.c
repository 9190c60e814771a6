/*
 * One way of sharing: its gpufracd, one share_tenant process per trace,
 * all started together; while they run, the daemon's status is sampled
 * every SAMPLE_MS and its events polled every EVENTS_MS; then what the
 * tenants and the daemon say is added up into the way's result.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "log.h"
#include "share.h"

#define SAMPLE_MS	50
#define READY_MS	10000
#define GO_AHEAD_MS	100	/* between "go" and the start it names */
/* A way that takes this much longer than its traces has failed. */
#define OVERRUN_MS	25000

struct tenant {
	pid_t		 pid;
	int		 to, from;	/* its stdin and stdout */
	char		 buf[256];	/* a line being read */
	size_t		 len;
	int		 ready, done;
	uint64_t	 oom, driver_ns, end_ns;
	double		 work;
};

struct way {
	struct share_run *r;
	struct share_result *res;
	struct tenant	 t[SHARE_TENANTS_MAX];
	unsigned	 n;
	struct watch	 w;
};

static void __attribute__((format(printf, 2, 3)))
way_note(struct way *wy, const char *fmt, ...)
{
	va_list ap;

	if (wy->res->note[0] != '\0')
		return;		/* the first failure says why */
	va_start(ap, fmt);
	vsnprintf(wy->res->note, sizeof(wy->res->note), fmt, ap);
	va_end(ap);
}

static void
result_init(struct share_result *res)
{
	memset(res, 0, sizeof(*res));
	res->idle_pct = res->waited_s = res->makespan_s = NAN;
	res->done_pct = NAN;
	res->oom = res->swaps = res->swap_bytes = res->swap_ms = -1;
	res->preempts = res->kills = -1;
}

/* A tenant's stderr, on ours: why it failed. */
static void
tenant_err_show(const struct way *wy, unsigned i)
{
	char path[PATH_MAX], name[32], line[256];
	int n = 0;
	FILE *f;

	snprintf(name, sizeof(name), "tenant-%u.err", i);
	if (harness_path(path, sizeof(path), wy->r->dir, name) < 0 ||
	    (f = fopen(path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL && n++ < 10)
		fprintf(stderr, "  tenant %u: %s", i, line);
	fclose(f);
}

static int
tenants_start(struct way *wy, int way)
{
	char limit[32];
	struct tenant *t;
	unsigned i;

	/* A static partition: an equal share each, by its own limit. */
	snprintf(limit, sizeof(limit), "%" PRIu64,
	    wy->r->p.capacity / wy->n);
	for (i = 0; i < wy->n; i++) {
		t = &wy->t[i];
		t->pid = share_tenant_start(wy->r, i,
		    way == WAY_PREEMPT ? (gid_t)(SHARE_GID + i) : (gid_t)-1,
		    way == WAY_STATIC ? limit : NULL, &t->to, &t->from);
		if (t->pid < 0)
			return -1;
		if (trace_send(t->to, &wy->r->traces[i]) < 0) {
			way_note(wy, "cannot send tenant %u its trace", i);
			return -1;
		}
	}
	return 0;
}

/* key=NUMBER in a result line; 0 or -1. */
static int
field_u64(const char *line, const char *key, uint64_t *v)
{
	const char *p = strstr(line, key);
	unsigned long long n;
	char *end;

	if (p == NULL || p[strlen(key)] != '=')
		return -1;
	p += strlen(key) + 1;
	errno = 0;
	n = strtoull(p, &end, 10);
	if (end == p || *p == '-' || errno == ERANGE ||
	    (*end != ' ' && *end != '\0'))
		return -1;
	*v = n;
	return 0;
}

static int
field_double(const char *line, const char *key, double *v)
{
	const char *p = strstr(line, key);
	char *end;

	if (p == NULL || p[strlen(key)] != '=')
		return -1;
	p += strlen(key) + 1;
	errno = 0;
	*v = strtod(p, &end);
	if (end == p || errno == ERANGE || (*end != ' ' && *end != '\0'))
		return -1;
	return 0;
}

/* One line from tenant i: "ready" or its result. 0 or -1. */
static int
tenant_line(struct way *wy, unsigned i, const char *line)
{
	struct tenant *t = &wy->t[i];
	uint64_t done;

	if (strcmp(line, "ready") == 0 && !t->ready) {
		t->ready = 1;
		return 0;
	}
	if (strncmp(line, "result ok ", 10) == 0 && t->ready && !t->done &&
	    field_u64(line, "oom", &t->oom) == 0 &&
	    field_u64(line, "done", &done) == 0 &&
	    field_u64(line, "driver_ns", &t->driver_ns) == 0 &&
	    field_u64(line, "end_ns", &t->end_ns) == 0 &&
	    field_double(line, "work", &t->work) == 0) {
		t->done = 1;
		return 0;
	}
	way_note(wy, "tenant %u failed: '%.60s'", i, line);
	tenant_err_show(wy, i);
	return -1;
}

/* Read what tenant i wrote, line by line; 0, or -1 (it failed or left). */
static int
tenant_read(struct way *wy, unsigned i)
{
	struct tenant *t = &wy->t[i];
	char *nl;
	ssize_t n;

	n = read(t->from, t->buf + t->len, sizeof(t->buf) - 1 - t->len);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0) {
		way_note(wy, "tenant %u exited before its result", i);
		tenant_err_show(wy, i);
		return -1;
	}
	t->len += (size_t)n;
	t->buf[t->len] = '\0';
	while ((nl = strchr(t->buf, '\n')) != NULL) {
		*nl = '\0';
		if (tenant_line(wy, i, t->buf) < 0)
			return -1;
		t->len -= (size_t)(nl + 1 - t->buf);
		memmove(t->buf, nl + 1, t->len + 1);
	}
	if (t->len == sizeof(t->buf) - 1) {
		way_note(wy, "tenant %u wrote a line too long", i);
		return -1;
	}
	return 0;
}

/* The status sample due at *next, if now is past it; 0 or -1. */
static int
watch_due(struct way *wy, uint64_t *next, uint64_t now)
{
	if (now < *next)
		return 0;
	if (watch_sample(&wy->w) < 0) {
		way_note(wy, "status query failed");
		return -1;
	}
	while (*next <= now)
		*next += SAMPLE_MS * 1000000ull;
	return 0;
}

/* The pipes of the tenants not yet ready (want_done 0) or done (1). */
static nfds_t
tenants_pending(const struct way *wy, int want_done, struct pollfd *pfd,
    unsigned *idx)
{
	nfds_t k = 0;
	unsigned i;

	for (i = 0; i < wy->n; i++)
		if (!(want_done ? wy->t[i].done : wy->t[i].ready)) {
			pfd[k].fd = wy->t[i].from;
			pfd[k].events = POLLIN;
			idx[k++] = i;
		}
	return k;
}

/*
 * Until every tenant is ready (want_done 0) or done (1): 0; or -1 when
 * one fails or deadline passes. While they run (from t0), the daemon's
 * status is sampled and its events are counted as they come.
 */
static int
tenants_poll(struct way *wy, int want_done, uint64_t t0, uint64_t deadline)
{
	struct pollfd pfd[SHARE_TENANTS_MAX + 1];
	unsigned idx[SHARE_TENANTS_MAX];
	uint64_t now, wake, sample = t0;
	nfds_t i, k;
	int ms;

	while ((k = tenants_pending(wy, want_done, pfd, idx)) > 0) {
		if ((now = harness_now_ns()) >= deadline) {
			way_note(wy, "tenants not %s within %.0f s",
			    want_done ? "done" : "ready",
			    (double)(deadline - t0) / 1e9);
			return -1;
		}
		wake = deadline;
		if (want_done) {
			if (watch_due(wy, &sample, now) < 0)
				return -1;
			wake = sample;
			pfd[k].fd = wy->w.fd;
			pfd[k].events = POLLIN;
		}
		ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
		if (poll(pfd, k + (want_done != 0), ms) < 0 && errno != EINTR) {
			log_warn("poll");
			return -1;
		}
		if (want_done && pfd[k].revents != 0 &&
		    watch_read(&wy->w) < 0) {
			way_note(wy, "the daemon's events were cut off");
			return -1;
		}
		for (i = 0; i < k; i++)
			if (pfd[i].revents != 0 && tenant_read(wy, idx[i]) < 0)
				return -1;
	}
	return 0;
}

/* Start all the tenants at t0; 0 or -1. */
static int
tenants_go(struct way *wy, uint64_t t0)
{
	char line[48];
	unsigned i;
	int n;

	n = snprintf(line, sizeof(line), "go %" PRIu64 "\n", t0);
	for (i = 0; i < wy->n; i++)
		if (write(wy->t[i].to, line, (size_t)n) != n) {
			way_note(wy, "cannot start tenant %u", i);
			return -1;
		}
	return 0;
}

/* What the tenants and the daemon said, added up. */
static void
way_sum(struct way *wy, uint64_t t0)
{
	struct share_result *res = wy->res;
	double work = 0, asked = 0, waited = 0;
	uint64_t end = t0;
	unsigned i;

	res->oom = 0;
	for (i = 0; i < wy->n; i++) {
		res->oom += (int64_t)wy->t[i].oom;
		waited += (double)wy->t[i].driver_ns / 1e9;
		work += wy->t[i].work;
		asked += trace_work(&wy->r->traces[i]);
		if (wy->t[i].end_ns > end)
			end = wy->t[i].end_ns;
	}
	res->ran = 1;
	res->waited_s = waited;
	res->makespan_s = (double)(end - t0) / 1e9;
	res->done_pct = asked > 0 ? 100.0 * work / asked : 100.0;
	res->idle_pct = wy->w.samples ? wy->w.idle_sum /
	    (double)wy->w.samples : NAN;
	res->swaps = wy->w.swaps;
	res->swap_bytes = wy->w.swap_bytes;
	res->swap_ms = wy->w.swap_ms;
	res->preempts = wy->w.preempts;
	res->kills = wy->w.kills;
	/* The device as the first way's daemon saw it, for the report. */
	if (wy->r->dev.capacity == 0 && wy->w.capacity > wy->w.kept) {
		wy->r->dev.capacity = wy->w.capacity - wy->w.kept;
		if (wy->r->dev.name[0] == '\0')
			snprintf(wy->r->dev.name, sizeof(wy->r->dev.name),
			    "%s", wy->w.name);
	}
}

static void
tenants_end(struct way *wy)
{
	unsigned i;

	for (i = 0; i < wy->n; i++) {
		if (wy->t[i].to >= 0)
			close(wy->t[i].to);
		if (wy->t[i].from >= 0)
			close(wy->t[i].from);
		if (wy->t[i].pid > 0) {
			if (!wy->t[i].done)
				kill(wy->t[i].pid, SIGKILL);
			harness_reap(wy->t[i].pid, 5000);
		}
	}
}

/* wy made ready for a run of way: the time its traces end, in ms. */
static uint64_t
way_begin(struct way *wy, struct share_run *r, int way)
{
	uint64_t end_ms = 0;
	unsigned i;

	memset(wy, 0, sizeof(*wy));
	wy->r = r;
	wy->res = &r->results[way];
	wy->n = r->p.tenants;
	result_init(wy->res);
	for (i = 0; i < wy->n; i++) {
		wy->t[i].to = wy->t[i].from = -1;
		if (r->traces[i].end_ms > end_ms)
			end_ms = r->traces[i].end_ms;
	}
	return end_ms;
}

void
way_run(struct share_run *r, int way)
{
	static struct way wy;
	uint64_t t0, end_ms = way_begin(&wy, r, way);

	if (way == WAY_PREEMPT && geteuid() != 0) {
		way_note(&wy, "not run: priorities come from groups, told "
		    "apart by gid, which only root can give its tenants");
		return;
	}
	daemon_state_remove(r);
	if (daemon_start(r, way) < 0) {
		way_note(&wy, "gpufracd did not start");
		daemon_stop(r);
		daemon_log_tail(r);
		daemon_state_remove(r);
		return;
	}
	watch_init(&wy.w, r->sock);
	wy.w.kept = r->dev.kept;
	wy.w.kept_used = r->dev.kept_used;
	if (watch_follow(&wy.w) < 0) {
		way_note(&wy, "cannot follow the daemon's events");
		goto out_end;
	}
	t0 = harness_now_ns();
	if (tenants_start(&wy, way) < 0 ||
	    tenants_poll(&wy, 0, t0, t0 + READY_MS * 1000000ull) < 0)
		goto out_end;
	t0 = harness_now_ns() + GO_AHEAD_MS * 1000000ull;
	if (tenants_go(&wy, t0) < 0 ||
	    tenants_poll(&wy, 1, t0, t0 + (end_ms + OVERRUN_MS) * 1000000ull) <
	    0)
		goto out_end;
	if (watch_finish(&wy.w) < 0) {
		way_note(&wy, "events query failed");
		goto out_end;
	}
	way_sum(&wy, t0);
	if ((way == WAY_SWAP || way == WAY_PREEMPT) && !wy.w.swap_available)
		way_note(&wy, "host swap unavailable: %s instead",
		    way == WAY_SWAP ? "waited" : "killed");
	if (wy.w.lost)
		way_note(&wy, "some events were missed: swaps undercounted");
out_end:
	tenants_end(&wy);
	if (daemon_stop(r) != 0) {
		log_warnx("gpufracd did not exit cleanly");
		daemon_log_tail(r);
	}
	watch_free(&wy.w);
	daemon_state_remove(r);
	if (!wy.res->ran)
		daemon_log_tail(r);
}
