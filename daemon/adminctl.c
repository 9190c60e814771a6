/*
 * Administrators' commands: each asks admin_allowed first, logs who asked
 * for what, and answers OK or ERROR with one line for gpufracctl to show.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "admin.h"
#include "adminctl.h"
#include "arbiter.h"
#include "control.h"
#include "dispatch.h"
#include "lease.h"
#include "ledger.h"
#include "log.h"
#include "resolve.h"
#include "rtgroups.h"
#include "swap.h"
#include "units.h"
#include "uuid.h"
#include "view.h"

/*
 * 1 if c may run cmd (logged as asking for `what`); else it has been
 * answered (*rc: 0, or -1 to close).
 */
static int
allowed(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    const char *cmd, const char *what, int *rc, char *why, size_t whylen)
{
	char msg[GF_ERRMSG_LEN];
	int verdict = admin_allowed(&a->conf, c->fd, c->pid, c->uid, c->gid);

	if (verdict == ADMIN_ALLOWED)
		return 1;
	admin_denied_msg(&a->conf, cmd, verdict, msg, sizeof(msg));
	log_warnx("pid %u (uid %u) asked for %s: refused", c->pid, c->uid,
	    what);
	*rc = conn_reply_error(c, m->hdr.seq, GF_ERR_PERMISSION, msg, why,
	    whylen);
	return 0;
}

/* OK, or ERROR code with msg, for the outcome rc of a command. */
static int
answer(struct conn *c, const struct gf_msg *m, int rc, uint32_t code,
    const char *msg, char *why, size_t whylen)
{
	if (rc < 0)
		return conn_reply_error(c, m->hdr.seq, code, msg, why, whylen);
	return conn_reply(c, GF_MSG_OK, m->hdr.seq, NULL, why, whylen);
}

static int
adminctl_reload(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	char msg[GF_ERRMSG_LEN] = "";
	int rc = 0;

	if (!allowed(a, c, m, "reload", "a reload", &rc, why, whylen))
		return rc;
	log_info("pid %u (uid %u) asked for a reload", c->pid, c->uid);
	rc = arbiter_reload(a, c, msg, sizeof(msg));
	return answer(c, m, rc, GF_ERR_CONFIG, msg, why, whylen);
}

static int
adminctl_swap(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	int rc = 0;

	if (!allowed(a, c, m, "swap", "a swap", &rc, why, whylen))
		return rc;
	return swap_on_request(a, c, m->hdr.seq, &m->u.swap_req, why,
	    whylen);
}

static int
adminctl_group_rule(struct arbiter *a, struct conn *c,
    const struct gf_msg *m, char *why, size_t whylen)
{
	(void)a;
	if (c->nrules == GF_GROUP_RULES_MAX) {
		snprintf(why, whylen, "more than %d GROUP_RULEs before a "
		    "GROUP_SET", GF_GROUP_RULES_MAX);
		return -1;
	}
	if (c->rules == NULL &&
	    (c->rules = calloc(GF_GROUP_RULES_MAX, sizeof(*c->rules))) == NULL) {
		snprintf(why, whylen, "out of memory for a GROUP_RULE");
		return -1;
	}
	c->rules[c->nrules++] = m->u.group_rule;
	return 0;
}

/* GROUP_SET with the rules before it: -1 when c must go. */
static int
group_set(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    size_t n, char *why, size_t whylen)
{
	const struct gf_group_set *s = &m->u.group_set;
	char msg[GF_ERRMSG_LEN] = "";
	int rc = 0;

	if (s->nrules != n) {
		snprintf(why, whylen, "GROUP_SET counts %u rules, %zu came "
		    "before it", s->nrules, n);
		return -1;
	}
	if (!allowed(a, c, m, "group set", "a group change", &rc, why, whylen))
		return rc;
	rc = arbiter_group_set(a, c, s, c->rules, n, msg, sizeof(msg));
	if (rc == 0)
		log_info("pid %u (uid %u) set run-time group '%s'", c->pid,
		    c->uid, s->name);
	else
		log_warnx("pid %u (uid %u) could not set group '%s': %s",
		    c->pid, c->uid, s->name, msg);
	return answer(c, m, rc, GF_ERR_GROUP, msg, why, whylen);
}

static int
adminctl_group_set(struct arbiter *a, struct conn *c,
    const struct gf_msg *m, char *why, size_t whylen)
{
	int rc = group_set(a, c, m, c->nrules, why, whylen);

	free(c->rules);
	c->rules = NULL;
	c->nrules = 0;
	return rc;
}

static int
adminctl_group_rm(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const char *name = m->u.group_rm.name;
	char msg[GF_ERRMSG_LEN] = "";
	int rc = 0;

	if (!allowed(a, c, m, "group rm", "a group change", &rc, why, whylen))
		return rc;
	rc = arbiter_group_rm(a, c, name, msg, sizeof(msg));
	if (rc == 0)
		log_info("pid %u (uid %u) removed run-time group '%s'", c->pid,
		    c->uid, name);
	return answer(c, m, rc, rc == RTGROUPS_NONE ? GF_ERR_NO_SUCH_GROUP :
	    GF_ERR_GROUP, msg, why, whylen);
}

/* The ledger devices LIMIT_REQ names: [*first, *end), or -1 (msg set). */
static int
limit_devices(const struct ledger *l, const struct gf_limit_req *r,
    size_t *first, size_t *end, char *msg, size_t msglen)
{
	static const uint8_t none[GF_UUID_LEN];
	char ubuf[UUID_STR_LEN];
	size_t i;
	int dev;

	*first = 0;
	*end = l->ndevices;
	if (memcmp(r->uuid, none, sizeof(none)) != 0) {
		if ((dev = ledger_device_find(l, r->uuid)) >= 0)
			goto found;
		snprintf(msg, msglen, "no device %s", uuid_format(r->uuid,
		    ubuf, sizeof(ubuf)));
		return -1;
	}
	if (r->index == GF_UNSET)
		return 0;
	for (i = 0; i < l->ndevices; i++)
		if (l->devices[i].index == r->index) {
			dev = (int)i;
			goto found;
		}
	snprintf(msg, msglen, "no device %u", r->index);
	return -1;
found:
	*first = (size_t)dev;
	*end = *first + 1;
	return 0;
}

/* The limit on each named device c has opened; -1 with msg if none. */
static int
limit_client(struct arbiter *a, struct ledger_client *lc,
    const struct gf_limit_req *r, size_t first, size_t end, char *msg,
    size_t msglen)
{
	struct ledger *l = &a->ledger;
	char abuf[32], wbuf[32];
	uint64_t allowed_bytes;
	size_t dev, set = 0;

	for (dev = first; dev < end; dev++) {
		if (!lc->usage[dev].opened)
			continue;
		if (ledger_client_limit(l, lc, dev, r->limit_kind,
		    r->limit_value, &allowed_bytes) < 0) {
			snprintf(msg, msglen, "limit %s for pid %u on device "
			    "%u is more than its group '%s' allows (%s)",
			    size_format(limit_resolve(r->limit_kind,
			    r->limit_value, l->devices[dev].capacity), wbuf,
			    sizeof(wbuf)), lc->pid, l->devices[dev].index,
			    l->groups[lc->group].pol.name,
			    size_format(allowed_bytes, abuf, sizeof(abuf)));
			return -1;
		}
		/* Its lease was sized for the old limit. */
		(void)lease_take(a, lc, dev);
		set++;
	}
	if (set > 0)
		return 0;
	snprintf(msg, msglen, "pid %u has not opened %s", lc->pid,
	    end - first == 1 ? "that device" : "any device");
	return -1;
}

static int
adminctl_limit(struct arbiter *a, struct conn *c, const struct gf_msg *m,
    char *why, size_t whylen)
{
	const struct gf_limit_req *r = &m->u.limit_req;
	char msg[GF_ERRMSG_LEN] = "";
	struct ledger_client *lc = NULL;
	size_t first, end, found = 0;
	int rc = 0;

	if (!allowed(a, c, m, "limit", "a limit change", &rc, why, whylen))
		return rc;
	if (!limit_valid(r->limit_kind, r->limit_value)) {
		snprintf(why, whylen, "bad limit in LIMIT_REQ");
		return -1;
	}
	rc = limit_devices(&a->ledger, r, &first, &end, msg, sizeof(msg));
	while (rc == 0 && (lc = ledger_client_find(&a->ledger, r->pid,
	    lc)) != NULL) {
		if (lc->departing)
			continue;
		found++;
		rc = limit_client(a, lc, r, first, end, msg, sizeof(msg));
	}
	if (rc == 0 && found == 0) {
		snprintf(msg, sizeof(msg), "no client with pid %u", r->pid);
		return answer(c, m, -1, GF_ERR_NO_SUCH_PID, msg, why, whylen);
	}
	if (rc == 0) {
		log_info("pid %u (uid %u) set the limit of pid %u", c->pid,
		    c->uid, r->pid);
		view_notify(a, c);
		resolve_serve(a);
	}
	return answer(c, m, rc, GF_ERR_STATE, msg, why, whylen);
}

/*
 * DISCONNECT_REQ: pid's connections closed from here, as a lost one is
 * (conversation_closing): what it was granted is kept while it lives,
 * and its library reconnects and re-registers it.
 */
static int
adminctl_disconnect(struct arbiter *a, struct conn *c,
    const struct gf_msg *m, char *why, size_t whylen)
{
	uint32_t pid = m->u.disconnect_req.pid;
	char msg[GF_ERRMSG_LEN], said[96];
	struct conn *v;
	size_t n = 0;
	int rc = 0;

	if (!allowed(a, c, m, "disconnect", "a disconnection", &rc, why,
	    whylen))
		return rc;
	snprintf(said, sizeof(said), "disconnected by pid %u (uid %u)",
	    c->pid, c->uid);
	TAILQ_FOREACH(v, &a->control.conns, entry)
		if (v->client != NULL && v->client->pid == pid) {
			control_close_later(v, said);
			n++;
		}
	if (n == 0) {
		snprintf(msg, sizeof(msg), "no client with pid %u", pid);
		return answer(c, m, -1, GF_ERR_NO_SUCH_PID, msg, why, whylen);
	}
	log_info("pid %u (uid %u) disconnected pid %u", c->pid, c->uid, pid);
	return answer(c, m, 0, 0, NULL, why, whylen);
}

void
adminctl_conn_gone(struct conn *c)
{
	free(c->rules);
	c->rules = NULL;
	c->nrules = 0;
}

static const struct dispatch_handler handlers[] = {
	{ GF_MSG_RELOAD_REQ, DISPATCH_ANY, adminctl_reload },
	{ GF_MSG_SWAP_REQ, DISPATCH_ANY, adminctl_swap },
	{ GF_MSG_GROUP_RULE, DISPATCH_ANY, adminctl_group_rule },
	{ GF_MSG_GROUP_SET, DISPATCH_ANY, adminctl_group_set },
	{ GF_MSG_GROUP_RM, DISPATCH_ANY, adminctl_group_rm },
	{ GF_MSG_LIMIT_REQ, DISPATCH_ANY, adminctl_limit },
	{ GF_MSG_DISCONNECT_REQ, DISPATCH_ANY, adminctl_disconnect },
};

int
adminctl_register(struct dispatch *d)
{
	return dispatch_add(d, handlers, sizeof(handlers) / sizeof(handlers[0]));
}
