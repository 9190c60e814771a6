/*
 * The run-time group a container asks for with its gpufrac.io/
 * annotations: its name, derived from the container's id, and its settings
 * and match rules, as a ctlreq_group ready to send. Nothing here speaks to
 * the daemon or prints.
 */
#ifndef GF_OCI_GROUP_H
#define GF_OCI_GROUP_H

#include <stddef.h>

#include "ctlreq.h"
#include "state.h"

/* Group names of containers start with this ("oci-", or "oci."). */
#define OCI_GROUP_PREFIX	"oci-"
#define OCI_GROUP_DERIVED	'.'

/*
 * The group name of the container called id, into name (GF_GROUP_LEN
 * bytes): "oci-" and the id when it is at most 27 letters, digits, '.',
 * '_' or '-'; else "oci.", its first 10 characters with any other
 * character as '_', '.' and 16 hexadecimal digits of the SHA-256 of the
 * whole id. A kept id always has '-' where a derived name has '.', so no
 * id is given the name derived from another; two long ids that start
 * alike get different groups.
 */
void	oci_group_name(const char *id, char name[GF_GROUP_LEN]);

/* Does the container ask for a group: has it any gpufrac.io/ annotation? */
int	oci_group_wanted(const struct oci_state *st);

/*
 * Build the group the container's annotations ask for:
 *   gpufrac.io/memory     limit (required)
 *   gpufrac.io/guarantee  guarantee
 *   gpufrac.io/priority   priority
 *   gpufrac.io/resolver   resolver
 *   gpufrac.io/unshimmed  unshimmed (count or kill)
 * The group is flagged GF_GROUP_JOB: the daemon holds it to its [jobs]
 * caps and replaces only the container's own group of the same name.
 * Returns 0, or -1 with err naming the annotation: an unknown one, a bad
 * value, or gpufrac.io/memory missing.
 */
int	oci_group_build(const struct oci_state *st, struct ctlreq_group *g,
	    char *err, size_t errlen);

/*
 * Match the group to the container's cgroup cg, as the kernel reports it
 * for the container's process (cgroup_of_pid); self is the hook's own.
 * A container that is not in a cgroup of its own -- in the hook's (the
 * runtime's) cgroup or one above it, as under a runtime that put it in no
 * cgroup of the hierarchy read -- is refused: the rule would take in
 * processes that are not the container's. Returns 0 or -1 with err set.
 */
int	oci_group_cgroup(struct ctlreq_group *g, const char *id,
	    const char *cg, const char *self, char *err, size_t errlen);

#endif
