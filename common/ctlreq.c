/*
 * Administrative requests: a group's settings from text, and one request
 * on its own connection answered by OK or ERROR within CTLREQ_TIMEOUT_MS.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ctlreq.h"
#include "names.h"
#include "proto.h"
#include "sock.h"
#include "units.h"

int
ctlreq_group_init(struct ctlreq_group *g, const char *name, char *err,
    size_t errlen)
{
	memset(g, 0, sizeof(*g));
	g->set.resolver = GF_UNSET;
	g->set.on_preempt = GF_UNSET;
	g->set.wait_timeout_ms = GF_UNSET;
	if (*name == '\0' || strlen(name) >= sizeof(g->set.name)) {
		snprintf(err, errlen, "bad group name '%s' (1 to %zu "
		    "characters)", name, sizeof(g->set.name) - 1);
		return -1;
	}
	proto_strlcpy(g->set.name, name, sizeof(g->set.name));
	return 0;
}

static int
rule_add(struct ctlreq_group *g, const char *rule, char *err, size_t errlen)
{
	if (g->nrules == GF_GROUP_RULES_MAX) {
		snprintf(err, errlen, "too many match rules for group '%s' "
		    "(at most %d)", g->set.name, GF_GROUP_RULES_MAX);
		return -1;
	}
	if (*rule == '\0' || strlen(rule) >= GF_RULE_LEN) {
		snprintf(err, errlen, "bad match rule '%.64s%s' (1 to %d "
		    "characters)", rule, strlen(rule) > 64 ? "..." : "",
		    GF_RULE_LEN - 1);
		return -1;
	}
	proto_strlcpy(g->rules[g->nrules++].rule, rule, GF_RULE_LEN);
	g->set.nrules = (uint32_t)g->nrules;
	return 0;
}

static int
timeout_parse(const char *v, uint32_t *out)
{
	uint64_t ms;

	if (duration_parse(v, &ms) < 0 || ms >= GF_WAIT_FOREVER)
		return -1;
	*out = (uint32_t)ms;
	return 0;
}

static int
value_bad(const char *key, const char *v, const char *expected, char *err,
    size_t errlen)
{
	snprintf(err, errlen, "bad %s '%s' (expected %s)", key, v, expected);
	return -1;
}

int
ctlreq_group_option(struct ctlreq_group *g, const char *key,
    const char *v, char *err, size_t errlen)
{
	struct gf_group_set *s = &g->set;
	int r;

	if (strcmp(key, "match") == 0)
		return rule_add(g, v, err, errlen);
	if (strcmp(key, "cgroup") == 0)
		return ctlreq_group_cgroup(g, v, err, errlen);
	if (strcmp(key, "limit") == 0) {
		if ((r = limit_parse(v, &s->limit_kind, &s->limit_value)) ==
		    LIMIT_ZERO) {
			snprintf(err, errlen, "bad limit '%s' (a limit must be "
			    "positive)", v);
			return -1;
		}
		if (r < 0)
			return value_bad(key, v, "a size such as 8Gi or a "
			    "share such as 50%", err, errlen);
	} else if (strcmp(key, "guarantee") == 0) {
		if (guarantee_parse(v, &s->guarantee_kind,
		    &s->guarantee_value) < 0)
			return value_bad(key, v, "a size such as 8Gi or a "
			    "share such as 50%", err, errlen);
	} else if (strcmp(key, "priority") == 0) {
		if (int32_parse(v, &s->priority) < 0)
			return value_bad(key, v, "an integer", err, errlen);
		s->priority_set = 1;
	} else if (strcmp(key, "resolver") == 0) {
		if ((r = name_resolver_parse(v)) < 0)
			return value_bad(key, v, "fail, wait, preempt or swap",
			    err, errlen);
		s->resolver = (uint32_t)r;
	} else if (strcmp(key, "on_preempt") == 0) {
		if ((r = name_on_preempt_parse(v)) < 0)
			return value_bad(key, v, "swap, kill or none", err,
			    errlen);
		s->on_preempt = (uint32_t)r;
	} else if (strcmp(key, "unshimmed") == 0) {
		if (strcmp(v, "kill") == 0)
			s->flags |= GF_GROUP_UNSHIMMED_KILL;
		else if (strcmp(v, "count") == 0)
			s->flags &= ~GF_GROUP_UNSHIMMED_KILL;
		else
			return value_bad(key, v, "count or kill", err, errlen);
	} else if (strcmp(key, "wait_timeout") == 0) {
		if (timeout_parse(v, &s->wait_timeout_ms) < 0)
			return value_bad(key, v, "a duration such as 30s",
			    err, errlen);
	} else {
		snprintf(err, errlen, "unknown group setting '%s'", key);
		return -1;
	}
	return 0;
}

/* path with fnmatch(3)'s special characters escaped, into buf. */
static int
glob_escape(const char *path, char *buf, size_t size)
{
	size_t n = 0;

	for (; *path != '\0'; path++) {
		if (strchr("*?[]\\", *path) != NULL) {
			if (n + 1 >= size)
				return -1;
			buf[n++] = '\\';
		}
		if (n + 1 >= size)
			return -1;
		buf[n++] = *path;
	}
	buf[n] = '\0';
	return 0;
}

int
ctlreq_group_cgroup(struct ctlreq_group *g, const char *path, char *err,
    size_t errlen)
{
	char esc[GF_RULE_LEN], rule[GF_RULE_LEN + 16];

	if (path[0] != '/' || path[strspn(path, "/")] == '\0') {
		snprintf(err, errlen, "refusing cgroup '%s': a group matches "
		    "one cgroup below the root, not every process", path);
		return -1;
	}
	if (glob_escape(path, esc, sizeof(esc)) < 0) {
		snprintf(err, errlen, "cgroup path too long for a match rule: "
		    "'%s'", path);
		return -1;
	}
	snprintf(rule, sizeof(rule), "cgroup:%s", esc);
	if (rule_add(g, rule, err, errlen) < 0)
		return -1;
	snprintf(rule, sizeof(rule), "cgroup:%s/*", esc);
	if (rule_add(g, rule, err, errlen) < 0)
		return -1;
	g->set.flags |= GF_GROUP_TRANSIENT;
	return 0;
}

static int timeout_ms = CTLREQ_TIMEOUT_MS;

void
ctlreq_timeout_set(int ms)
{
	timeout_ms = ms > 0 ? ms : CTLREQ_TIMEOUT_MS;
}

/*
 * The next message of the reply to seq, by deadline (sock_now_ms): 0, or
 * -1 with err set.
 */
static int
reply_next(int fd, const char *path, uint32_t seq, long long deadline,
    struct gf_msg *mp, char *err, size_t errlen)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	const char *why = "";
	long long left;
	int r;

	do {
		left = deadline - sock_now_ms();
		r = left > 0 ? poll(&pfd, 1, (int)left) : 0;
	} while (r < 0 && errno == EINTR);
	if (r <= 0) {
		snprintf(err, errlen, "no reply from '%s' within %d ms%s%s",
		    path, timeout_ms, r < 0 ? ": " : " (is gpufracd stuck?)",
		    r < 0 ? strerror(errno) : "");
		return -1;
	}
	r = proto_recv(fd, mp, MSG_DONTWAIT, &why);
	if (r == 0 || r == -1) {
		snprintf(err, errlen, "gpufracd on '%s' hung up: %s", path,
		    r == 0 ? "connection closed" : strerror(errno));
		return -1;
	}
	if (r == -2 || mp->hdr.seq != seq) {
		snprintf(err, errlen, "bad reply from '%s': %s", path,
		    r == -2 ? why : "not for this request");
		return -1;
	}
	return 0;
}

/* Wait until deadline for the reply to seq: 0 on OK, CTLREQ_* with err. */
static int
reply_wait(int fd, const char *path, uint32_t seq, long long deadline,
    char *err, size_t errlen)
{
	struct gf_msg m;

	if (reply_next(fd, path, seq, deadline, &m, err, errlen) < 0)
		return -1;
	if (m.hdr.type == GF_MSG_OK)
		return 0;
	if (m.hdr.type == GF_MSG_ERROR) {
		snprintf(err, errlen, "%s", m.u.error.msg);
		return m.u.error.code == GF_ERR_NO_SUCH_GROUP ? CTLREQ_NO_GROUP :
		    CTLREQ_REFUSED;
	}
	snprintf(err, errlen, "unexpected %s in the reply from '%s'",
	    proto_type_name(m.hdr.type), path);
	return -1;
}

/* One request: the messages msgs[0..n), then the reply to the last. */
struct ctlreq_msg {
	uint16_t	 type;
	const void	*payload;
};

/*
 * A connection to the daemon for one request, within timeout_ms: its fd,
 * or -1 with err set.
 */
static int
request_open(const char *path, char *err, size_t errlen)
{
	int fd;

	if ((fd = sock_connect_within(path, timeout_ms, err, errlen)) < 0) {
		if (errno == ENOENT || errno == ECONNREFUSED)
			snprintf(err + strlen(err), errlen - strlen(err),
			    " (is gpufracd running?)");
		return -1;
	}
	return fd;
}

static int
request(const char *path, const struct ctlreq_msg *msgs, size_t n,
    char *err, size_t errlen)
{
	long long deadline = sock_now_ms() + timeout_ms;
	uint32_t seq = (uint32_t)getpid();
	size_t i;
	int fd, r;

	/* One deadline for all of it: connect, sends, the reply. */
	if ((fd = request_open(path, err, errlen)) < 0)
		return -1;
	for (i = 0; i < n; i++)
		if (proto_send(fd, msgs[i].type, seq, msgs[i].payload) < 0) {
			snprintf(err, errlen, "cannot send %s to '%s': %s",
			    proto_type_name(msgs[i].type), path,
			    strerror(errno));
			close(fd);
			return -1;
		}
	r = reply_wait(fd, path, seq, deadline, err, errlen);
	close(fd);
	return r;
}

int
ctlreq_group_set(const char *path, const struct ctlreq_group *g, char *err,
    size_t errlen)
{
	struct ctlreq_msg msgs[GF_GROUP_RULES_MAX + 1];
	size_t i;

	for (i = 0; i < g->nrules; i++) {
		msgs[i].type = GF_MSG_GROUP_RULE;
		msgs[i].payload = &g->rules[i];
	}
	msgs[i].type = GF_MSG_GROUP_SET;
	msgs[i].payload = &g->set;
	return request(path, msgs, i + 1, err, errlen);
}

int
ctlreq_group_rm(const char *path, const char *name, char *err,
    size_t errlen)
{
	struct gf_group_rm rm;
	struct ctlreq_msg msg = { GF_MSG_GROUP_RM, &rm };

	memset(&rm, 0, sizeof(rm));
	if (*name == '\0' || strlen(name) >= sizeof(rm.name)) {
		snprintf(err, errlen, "bad group name '%s'", name);
		return -1;
	}
	proto_strlcpy(rm.name, name, sizeof(rm.name));
	return request(path, &msg, 1, err, errlen);
}

int
ctlreq_limit(const char *path, const struct gf_limit_req *r, char *err,
    size_t errlen)
{
	struct ctlreq_msg msg = { GF_MSG_LIMIT_REQ, r };

	return request(path, &msg, 1, err, errlen);
}

int
ctlreq_disconnect(const char *path, uint32_t pid, char *err, size_t errlen)
{
	struct gf_disconnect_req r = { pid, 0 };
	struct ctlreq_msg msg = { GF_MSG_DISCONNECT_REQ, &r };

	return request(path, &msg, 1, err, errlen);
}

/*
 * STATUS_REQ's reply: STATUS, then the devices up to DEVICE_END (the
 * groups after it are not read).
 */
int
ctlreq_devices(const char *path, struct ctlreq_devices *d, char *err,
    size_t errlen)
{
	long long deadline = sock_now_ms() + timeout_ms;
	uint32_t seq = (uint32_t)getpid();
	struct gf_msg m;
	int fd, rc = -1;

	memset(d, 0, sizeof(*d));
	if ((fd = request_open(path, err, errlen)) < 0)
		return -1;
	if (proto_send(fd, GF_MSG_STATUS_REQ, seq, NULL) < 0) {
		snprintf(err, errlen, "cannot send STATUS_REQ to '%s': %s",
		    path, strerror(errno));
		goto out_close;
	}
	if (reply_next(fd, path, seq, deadline, &m, err, errlen) < 0)
		goto out_close;
	if (m.hdr.type != GF_MSG_STATUS)
		goto out_unexpected;
	for (;;) {
		if (reply_next(fd, path, seq, deadline, &m, err, errlen) < 0)
			goto out_close;
		if (m.hdr.type == GF_MSG_DEVICE_END)
			break;
		if (m.hdr.type != GF_MSG_DEVICE_STATUS)
			goto out_unexpected;
		if (d->n == 0 || m.u.device_status.capacity < d->capacity_min)
			d->capacity_min = m.u.device_status.capacity;
		if (m.u.device_status.capacity > d->capacity_max)
			d->capacity_max = m.u.device_status.capacity;
		d->n++;
	}
	rc = 0;
	goto out_close;
out_unexpected:
	if (m.hdr.type == GF_MSG_ERROR)
		snprintf(err, errlen, "%s", m.u.error.msg);
	else
		snprintf(err, errlen, "unexpected %s in the reply from '%s'",
		    proto_type_name(m.hdr.type), path);
out_close:
	close(fd);
	return rc;
}
