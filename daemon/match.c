/*
 * Group membership rules: parsing "KIND:ARG" words, and finding container
 * ids and pod UIDs in the cgroup path layouts of Docker, containerd, CRI-O,
 * Podman and the kubelet's two cgroup drivers.
 */
#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "match.h"
#include "units.h"

static const struct {
	const char	*name;
	int		 kind;
} kinds[] = {
	{ "cgroup", MATCH_CGROUP },
	{ "container", MATCH_CONTAINER },
	{ "pod", MATCH_POD },
	{ "uid", MATCH_UID },
	{ "gid", MATCH_GID },
};

/* A character that may sit next to an id without being part of a name. */
static int
boundary(char c)
{
	return c == '\0' || !isalnum((unsigned char)c);
}

/*
 * The UID at s in either form (8-4-4-4-12 hex digits separated by '-', or
 * by '_' as the systemd driver writes it), normalised into out
 * (MATCH_POD_LEN + 1 bytes). Returns 0 or -1.
 */
static int
uid_take(const char *s, char *out)
{
	static const int dash[] = { 8, 13, 18, 23 };
	size_t i, d = 0;

	for (i = 0; i < MATCH_POD_LEN; i++) {
		if (d < 4 && (int)i == dash[d]) {
			if (s[i] != '-' && s[i] != '_')
				return -1;
			out[i] = '-';
			d++;
		} else if (isxdigit((unsigned char)s[i]))
			out[i] = (char)tolower((unsigned char)s[i]);
		else
			return -1;
	}
	out[i] = '\0';
	return 0;
}

/* The container id in the segment [s, end), or -1. */
static int
segment_container(const char *s, const char *end, char *id)
{
	const char *p = s, *run;
	size_t i;

	while (p < end) {
		if (!isxdigit((unsigned char)*p)) {
			p++;
			continue;
		}
		for (run = p; p < end && isxdigit((unsigned char)*p); p++)
			;
		if (p - run == MATCH_CONTAINER_LEN &&
		    (run == s || boundary(run[-1])) &&
		    (p == end || boundary(*p))) {
			for (i = 0; i < MATCH_CONTAINER_LEN; i++)
				id[i] = (char)tolower((unsigned char)run[i]);
			id[i] = '\0';
			return 0;
		}
	}
	return -1;
}

int
match_container_id(const char *cgroup, char *id)
{
	const char *seg, *end;
	int found = -1;

	for (seg = cgroup; *seg != '\0'; seg = *end ? end + 1 : end) {
		end = strchrnul(seg, '/');
		if (segment_container(seg, end, id) == 0)
			found = 0;	/* later segments win */
	}
	return found;
}

/*
 * "pod" and a UID in the segment [s, end): at its start (cgroupfs) or
 * after a '-' (systemd: "kubepods-burstable-pod<uid>.slice").
 */
static int
segment_pod(const char *s, const char *end, char *uid)
{
	const char *p;

	for (p = s; end - p >= 3 + MATCH_POD_LEN; p++) {
		if (strncmp(p, "pod", 3) != 0 || (p != s && p[-1] != '-'))
			continue;
		if (uid_take(p + 3, uid) < 0)
			continue;
		p += 3 + MATCH_POD_LEN;
		if (p == end || *p == '.')
			return 0;
	}
	return -1;
}

int
match_pod_uid(const char *cgroup, char *uid)
{
	const char *kube = strstr(cgroup, "kubepods"), *seg, *end;

	if (kube == NULL)
		return -1;
	/* The pod's segment is the kubepods one or comes after it. */
	while (kube > cgroup && kube[-1] != '/')
		kube--;
	for (seg = kube; *seg != '\0'; seg = *end ? end + 1 : end) {
		end = strchrnul(seg, '/');
		if (segment_pod(seg, end, uid) == 0)
			return 0;
	}
	return -1;
}

/* A decimal uid or gid; (uint32_t)-1 means "none" to the kernel. */
static int
id_parse(const char *s, uint32_t *out)
{
	uint64_t v;

	if (decimal_parse(s, UINT32_MAX - 1, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

static int
hex_prefix_check(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > MATCH_CONTAINER_LEN)
		return -1;
	for (; *s != '\0'; s++)
		if (!isxdigit((unsigned char)*s))
			return -1;
	return 0;
}

/* Check arg for kind; -1 with the reason in err. */
static int
arg_check(int kind, const char *arg, struct match_rule *r, char *err,
    size_t errlen)
{
	char uid[MATCH_POD_LEN + 1];

	switch (kind) {
	case MATCH_CGROUP:
		if (*arg == '/' || *arg == '*' || *arg == '?' || *arg == '[')
			return 0;
		snprintf(err, errlen, "a cgroup pattern must match a path "
		    "that starts with '/'");
		return -1;
	case MATCH_CONTAINER:
		if (hex_prefix_check(arg) == 0)
			return 0;
		snprintf(err, errlen, "a container id prefix is 1 to %d hex "
		    "digits", MATCH_CONTAINER_LEN);
		return -1;
	case MATCH_POD:
		if (strlen(arg) == MATCH_POD_LEN && uid_take(arg, uid) == 0)
			return 0;
		snprintf(err, errlen, "a pod UID is 32 hex digits in the "
		    "form 8-4-4-4-12");
		return -1;
	default:
		if (id_parse(arg, &r->id) == 0)
			return 0;
		snprintf(err, errlen, "expected a number");
		return -1;
	}
}

/* arg as the rule keeps it: lower case, pod UIDs with '-'. */
static char *
arg_normalise(int kind, const char *arg)
{
	char *s, *p;

	if (kind == MATCH_CGROUP)
		return strdup(arg);
	if ((s = strdup(arg)) == NULL)
		return NULL;
	for (p = s; *p != '\0'; p++)
		*p = *p == '_' ? '-' : (char)tolower((unsigned char)*p);
	return s;
}

int
match_rule_parse(const char *word, struct match_rule *r, char *err,
    size_t errlen)
{
	const char *colon = strchr(word, ':');
	struct match_rule nr;
	size_t i, n;

	memset(&nr, 0, sizeof(nr));
	n = colon ? (size_t)(colon - word) : 0;
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (colon && strlen(kinds[i].name) == n &&
		    strncmp(word, kinds[i].name, n) == 0)
			nr.kind = kinds[i].kind;
	if (nr.kind == 0) {
		snprintf(err, errlen, "expected cgroup:GLOB, "
		    "container:ID-PREFIX, pod:UID, uid:N or gid:N");
		return -1;
	}
	if (arg_check(nr.kind, colon + 1, &nr, err, errlen) < 0)
		return -1;
	if (nr.kind != MATCH_UID && nr.kind != MATCH_GID &&
	    (nr.arg = arg_normalise(nr.kind, colon + 1)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	*r = nr;
	return 0;
}

void
match_rule_free(struct match_rule *r)
{
	free(r->arg);
	r->arg = NULL;
}

char *
match_rule_format(const struct match_rule *r, char *buf, size_t size)
{
	const char *name = "";
	size_t i;

	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (kinds[i].kind == r->kind)
			name = kinds[i].name;
	if (r->kind == MATCH_UID || r->kind == MATCH_GID)
		snprintf(buf, size, "%s:%u", name, r->id);
	else
		snprintf(buf, size, "%s:%s", name, r->arg);
	return buf;
}

int
match_rule_test(const struct match_rule *r, const struct match_subject *s)
{
	char id[MATCH_CONTAINER_LEN + 1];

	switch (r->kind) {
	case MATCH_CGROUP:
		return *s->cgroup != '\0' &&
		    fnmatch(r->arg, s->cgroup, 0) == 0;
	case MATCH_CONTAINER:
		return match_container_id(s->cgroup, id) == 0 &&
		    strncmp(id, r->arg, strlen(r->arg)) == 0;
	case MATCH_POD:
		return match_pod_uid(s->cgroup, id) == 0 &&
		    strcmp(id, r->arg) == 0;
	case MATCH_UID:
		return s->uid == r->id;
	case MATCH_GID:
		return s->gid == r->id;
	default:
		return 0;
	}
}

int
match_rule_path(const struct match_rule *r, char *buf, size_t size)
{
	const char *s;
	size_t n = 0;

	if (r->kind != MATCH_CGROUP)
		return -1;
	for (s = r->arg; *s != '\0'; s++) {
		if (*s == '*' || *s == '?' || *s == '[')
			return -1;
		if (*s == '\\' && s[1] != '\0')
			s++;
		if (n + 1 >= size)
			return -1;
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return 0;
}
