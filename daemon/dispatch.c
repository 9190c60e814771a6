/*
 * Message routing (dispatch.h): a message's handler by type, and its
 * connection's state checked before the handler runs.
 */
#include <stdio.h>

#include "control.h"
#include "dispatch.h"
#include "log.h"
#include "proto.h"

int
dispatch_add(struct dispatch *d, const struct dispatch_handler *h, size_t n)
{
	size_t i, j;

	for (i = 0; i < n; i++) {
		for (j = 0; j < d->n; j++)
			if (d->h[j]->type == h[i].type) {
				log_warnx("two handlers of %s",
				    proto_type_name(h[i].type));
				return -1;
			}
		if (d->n == DISPATCH_MAX) {
			log_warnx("no room for the handler of %s",
			    proto_type_name(h[i].type));
			return -1;
		}
		d->h[d->n++] = &h[i];
	}
	return 0;
}

int
dispatch_msg(const struct dispatch *d, struct arbiter *a, struct conn *c,
    const struct gf_msg *m, char *why, size_t whylen)
{
	const char *name = proto_type_name(m->hdr.type);
	const struct dispatch_handler *h = NULL;
	char reason[GF_ERRMSG_LEN];
	size_t i;

	for (i = 0; i < d->n && h == NULL; i++)
		if (d->h[i]->type == m->hdr.type)
			h = d->h[i];
	if (h == NULL) {
		snprintf(why, whylen, "it sent %s, which only the daemon "
		    "sends", name);
		return -1;
	}
	if (h->state == DISPATCH_FRESH && c->client != NULL)
		snprintf(reason, sizeof(reason), "%s twice", name);
	else if (h->state == DISPATCH_CLIENT && c->client == NULL)
		snprintf(reason, sizeof(reason), "%s before HELLO", name);
	else
		return h->fn(a, c, m, why, whylen);
	/* Say why before hanging up; the close that follows is what counts. */
	(void)conn_reply_error(c, m->hdr.seq, GF_ERR_STATE, reason, why, whylen);
	snprintf(why, whylen, "%s", reason);
	return -1;
}
