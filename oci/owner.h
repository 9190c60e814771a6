/*
 * Who a container's processes run as, on the host: its config.json's
 * process.user, through its user namespace's mappings where it has one.
 * The runtime's engine wrote that file, not the container's processes:
 * the daemon bounds the container's group by the [group] that user's
 * processes would match (issue 39). Nothing here prints.
 */
#ifndef GF_OCI_OWNER_H
#define GF_OCI_OWNER_H

#include <stddef.h>
#include <stdint.h>

/*
 * The host uid and gid of the container whose bundle is at bundle.
 * Returns 0, or -1 with one line in err: config.json unreadable, no
 * process.user, or an id its user namespace does not map.
 */
int	oci_owner_read(const char *bundle, uint32_t *uid, uint32_t *gid,
	    char *err, size_t errlen);

#endif
