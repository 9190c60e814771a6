/*
 * A container's run-time group: its name from the container's id, its
 * settings from the container's annotations, its rules from the
 * container's cgroup.
 */
#include <nettle/sha2.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "group.h"
#include "sock.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

/* Room for the id after the prefix, and what is kept of a longer one. */
#define NAME_ID_MAX	(GF_GROUP_LEN - 1 - (sizeof(OCI_GROUP_PREFIX) - 1))
#define NAME_HASH_LEN	16	/* hexadecimal digits: 64 bits */
#define NAME_ID_KEPT	(NAME_ID_MAX - 1 - NAME_HASH_LEN)

/* Each annotation and the group setting it gives (ctlreq_group_option). */
static const struct {
	const char	*annot;
	const char	*key;
} annots[] = {
	{ "memory",	"limit" },
	{ "guarantee",	"guarantee" },
	{ "priority",	"priority" },
	{ "resolver",	"resolver" },
	{ "unshimmed",	"unshimmed" },
};

static int
name_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	    (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

void
oci_group_name(const char *id, char name[GF_GROUP_LEN])
{
	uint8_t h[SHA256_DIGEST_SIZE];
	struct sha256_ctx ctx;
	size_t len = strlen(id), i, n;

	n = strlen(OCI_GROUP_PREFIX);
	memcpy(name, OCI_GROUP_PREFIX, n);
	if (len <= NAME_ID_MAX && strspn(id, "abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") == len) {
		memcpy(name + n, id, len + 1);
		return;
	}
	/*
	 * "oci." where a kept id has "oci-": no id, however chosen, takes
	 * the name derived from another (issue 27). The hash is SHA-256 so
	 * that no one finds a second id for a name by trying.
	 */
	name[n - 1] = OCI_GROUP_DERIVED;
	for (i = 0; i < NAME_ID_KEPT && id[i] != '\0'; i++)
		name[n++] = name_char(id[i]) ? id[i] : '_';
	name[n++] = OCI_GROUP_DERIVED;
	sha256_init(&ctx);
	sha256_update(&ctx, len, (const uint8_t *)id);
	sha256_digest(&ctx, sizeof(h), h);
	for (i = 0; i < NAME_HASH_LEN / 2; i++)
		n += (size_t)snprintf(name + n, GF_GROUP_LEN - n, "%02x", h[i]);
}

int
oci_group_wanted(const struct oci_state *st)
{
	return st->nannots > 0;
}

static const char *
annot_key(const char *annot)
{
	size_t i;

	for (i = 0; i < NITEMS(annots); i++)
		if (strcmp(annots[i].annot, annot) == 0)
			return annots[i].key;
	return NULL;
}

int
oci_group_build(const struct oci_state *st, struct ctlreq_group *g,
    char *err, size_t errlen)
{
	char name[GF_GROUP_LEN], why[SOCK_ERR_LEN];
	const struct oci_annot *a;
	const char *key;
	size_t i;

	oci_group_name(st->id, name);
	if (ctlreq_group_init(g, name, err, errlen) < 0)
		return -1;
	/* the container's word, not the administrator's: [jobs] caps it */
	g->set.flags |= GF_GROUP_JOB;
	if (oci_state_annot(st, "memory") == NULL) {
		snprintf(err, errlen, "container '%s': annotation '%s%s' is "
		    "missing (the other %s annotations need it)", st->id,
		    OCI_ANNOT_PREFIX, "memory", OCI_ANNOT_PREFIX);
		return -1;
	}
	for (i = 0; i < st->nannots; i++) {
		a = &st->annots[i];
		if ((key = annot_key(a->name)) == NULL) {
			snprintf(err, errlen, "container '%s': unknown "
			    "annotation '%s%s' (expected memory, guarantee, "
			    "priority, resolver or unshimmed)", st->id,
			    OCI_ANNOT_PREFIX,
			    a->name);
			return -1;
		}
		if (ctlreq_group_option(g, key, a->value, why,
		    sizeof(why)) < 0) {
			snprintf(err, errlen, "container '%s': annotation "
			    "'%s%s': %s", st->id, OCI_ANNOT_PREFIX, a->name,
			    why);
			return -1;
		}
	}
	return 0;
}

/* Is cgroup a the same as cgroup b, or above it? */
static int
cgroup_covers(const char *a, const char *b)
{
	size_t n = strlen(a);

	while (n > 0 && a[n - 1] == '/')
		n--;
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

int
oci_group_cgroup(struct ctlreq_group *g, const char *id, const char *cg,
    const char *self, char *err, size_t errlen)
{
	char why[SOCK_ERR_LEN];

	if (*self != '\0' && cgroup_covers(cg, self)) {
		snprintf(err, errlen, "container '%s' has no cgroup of its "
		    "own: its process is in cgroup '%s', which holds the "
		    "runtime's too", id, cg);
		return -1;
	}
	if (ctlreq_group_cgroup(g, cg, why, sizeof(why)) < 0) {
		snprintf(err, errlen, "container '%s': %s", id, why);
		return -1;
	}
	return 0;
}
