/*
 * The metrics' life cycle: following the decision log, and starting,
 * moving and stopping the HTTP server as metrics_listen says.
 */
#include <string.h>

#include "arbiter.h"
#include "event.h"
#include "events.h"
#include "log.h"
#include "metrics.h"
#include "metrics_addr.h"
#include "metrics_http.h"
#include "metrics_render.h"
#include "proto.h"

#define METRICS_ERR_LEN	(METRICS_ADDR_ERR_LEN + 64)

/* A decision: counted at once, timed on the monotonic clock. */
static void
metrics_follow(void *arg, const struct gf_event *e)
{
	metrics_counts_event(arg, e, event_now_ms());
}

/* The counters' question when their table is full. */
static int
group_alive(const char *name, void *arg)
{
	const struct arbiter *a = arg;
	size_t i;

	for (i = 0; i < a->ledger.ngroups; i++)
		if (strcmp(a->ledger.groups[i].pol.name, name) == 0)
			return 1;
	return 0;
}

static char *
metrics_scrape(void *arg, size_t *len)
{
	return metrics_render(arg, len);
}

/* Serve on listen: 0, or -1 with the reason in err. */
static int
metrics_serve(struct arbiter *a, const char *listen, char *err,
    size_t errlen)
{
	a->metrics.http = metrics_http_start(a->loop, listen, metrics_scrape,
	    a, err, errlen);
	if (a->metrics.http == NULL)
		return -1;
	log_info("serving metrics on http://%s/metrics", listen);
	return 0;
}

int
metrics_start(struct arbiter *a)
{
	struct metrics *m = &a->metrics;
	char err[METRICS_ERR_LEN];

	metrics_counts_init(&m->counts, group_alive, a);
	m->start_wall_ms = events_wall_ms() - (event_now_ms() - a->start_ms);
	if (events_follow(&a->events, metrics_follow, &m->counts) < 0) {
		log_errx("no memory to follow the decision log for metrics");
		return -1;
	}
	m->following = 1;
	if (a->conf.metrics_listen[0] == '\0')
		return 0;
	if (metrics_serve(a, a->conf.metrics_listen, err, sizeof(err)) < 0) {
		log_errx("%s", err);
		return -1;
	}
	return 0;
}

void
metrics_reload(struct arbiter *a)
{
	struct metrics *m = &a->metrics;
	char *want = a->conf.metrics_listen, old[METRICS_LISTEN_LEN] = "";
	char err[METRICS_ERR_LEN];

	m->counts.reloads++;
	m->counts.reload_failed = 0;
	if (m->http != NULL) {
		if (strcmp(metrics_http_listen(m->http), want) == 0)
			return;
		/* Stopped first: the new address may share the old port. */
		proto_strlcpy(old, metrics_http_listen(m->http), sizeof(old));
		metrics_http_stop(m->http);
		m->http = NULL;
		log_info("no longer serving metrics on '%s'", old);
	}
	if (want[0] == '\0' || metrics_serve(a, want, err, sizeof(err)) == 0)
		return;
	log_warnx("%s", err);
	if (old[0] != '\0' && metrics_serve(a, old, err, sizeof(err)) == 0) {
		log_warnx("'metrics_listen' stays '%s'", old);
		proto_strlcpy(want, old, METRICS_LISTEN_LEN);
		return;
	}
	if (old[0] != '\0')
		log_warnx("%s", err);
	log_warnx("not serving metrics until a reload can listen");
	want[0] = '\0';
}

void
metrics_stop(struct arbiter *a)
{
	struct metrics *m = &a->metrics;

	metrics_http_stop(m->http);
	m->http = NULL;
	if (m->following)
		(void)events_unfollow(&a->events, metrics_follow, &m->counts);
	m->following = 0;
	metrics_counts_free(&m->counts);
}
