/*
 * Parsing GPUFRAC_MEMORY_LIMIT into a per-device request. A bad value asks
 * for nothing at all (the safe default): a half-applied list would be a
 * surprise.
 */
#include <stdio.h>
#include <string.h>

#include "gpufrac/proto.h"
#include "limit.h"
#include "units.h"

#define LIMIT_TOKEN_MAX	64	/* longer than any valid size or percentage */

/* One limit ("2Gi", "50%") of len bytes at s; a zero is refused. */
static int
limit_one_parse(const char *s, size_t len, struct limit_one *one,
    char *why, size_t whylen)
{
	char buf[LIMIT_TOKEN_MAX];
	int r;

	if (len == 0) {
		snprintf(why, whylen, "empty limit");
		return -1;
	}
	if (len >= sizeof(buf))
		goto bad;
	memcpy(buf, s, len);
	buf[len] = '\0';
	r = limit_parse(buf, &one->kind, &one->value);
	if (r == LIMIT_ZERO) {
		snprintf(why, whylen, "a limit of zero (a limit must be "
		    "positive)");
		return -1;
	}
	if (r < 0)
		goto bad;
	return 0;

bad:
	snprintf(why, whylen, "'%.*s' is not a size (512Mi, 2GiB, 1.5G, "
	    "bytes) or a percentage (above 0%%, at most 100%%)",
	    len < LIMIT_TOKEN_MAX ? (int)len : LIMIT_TOKEN_MAX, s);
	return -1;
}

/* A device ordinal of len bytes at s: decimal digits, below the bound. */
static int
limit_ordinal_parse(const char *s, size_t len, unsigned *ord,
    char *why, size_t whylen)
{
	unsigned long v = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			break;
		v = v * 10 + (unsigned long)(s[i] - '0');
		if (v >= SHIM_MAX_DEVICES) {
			snprintf(why, whylen, "device ordinal '%.*s' is not "
			    "below %d", (int)len, s, SHIM_MAX_DEVICES);
			return -1;
		}
	}
	if (len == 0 || i < len) {
		snprintf(why, whylen, "device '%.*s' is not an ordinal",
		    (int)len, s);
		return -1;
	}
	*ord = (unsigned)v;
	return 0;
}

/* "0=2Gi,1=4Gi": every entry ORDINAL=LIMIT, no ordinal twice. */
static int
limit_list_parse(const char *s, struct limit_request *req, char *why,
    size_t whylen)
{
	const char *p = s;

	for (;;) {
		size_t len = strcspn(p, ",");
		const char *eq = memchr(p, '=', len);
		struct limit_one one;
		unsigned ord;

		if (len == 0) {
			snprintf(why, whylen, "empty entry in the list");
			return -1;
		}
		if (eq == NULL) {
			snprintf(why, whylen, "'%.*s' is not ORDINAL=LIMIT",
			    (int)len, p);
			return -1;
		}
		if (limit_ordinal_parse(p, (size_t)(eq - p), &ord, why,
		    whylen) < 0 ||
		    limit_one_parse(eq + 1, len - (size_t)(eq - p) - 1, &one,
		    why, whylen) < 0)
			return -1;
		if (req->dev[ord].kind != GF_LIMIT_NONE) {
			snprintf(why, whylen, "device %u is given twice", ord);
			return -1;
		}
		req->dev[ord] = one;
		if (p[len] == '\0')
			return 0;
		p += len + 1;
	}
}

void
limit_request_refuse(struct limit_request *req)
{
	size_t i;

	for (i = 0; i < SHIM_MAX_DEVICES; i++) {
		req->dev[i].kind = GF_LIMIT_BYTES;
		req->dev[i].value = 0;
	}
}

int
limit_request_parse(const char *s, struct limit_request *req, char *why,
    size_t whylen)
{
	struct limit_one one;
	int r = 0;
	size_t i;

	memset(req, 0, sizeof(*req));
	if (s == NULL || *s == '\0')
		return 0;
	if (strchr(s, '=') != NULL)
		r = limit_list_parse(s, req, why, whylen);
	else if ((r = limit_one_parse(s, strlen(s), &one, why, whylen)) == 0)
		for (i = 0; i < SHIM_MAX_DEVICES; i++)
			req->dev[i] = one;
	if (r < 0)
		memset(req, 0, sizeof(*req));
	return r;
}
