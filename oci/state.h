/*
 * The container's state as an OCI runtime hands it to a hook on stdin
 * (runtime-spec, "State"): what gpufrac-oci-hook needs of it, its id, the
 * pid of its process, its bundle and its gpufrac.io/ annotations.
 */
#ifndef GF_OCI_STATE_H
#define GF_OCI_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* The annotations read as ours, "gpufrac.io/memory" and the like. */
#define OCI_ANNOT_PREFIX	"gpufrac.io/"

/* No runtime sends a state this large; reading stops there. */
#define OCI_STATE_MAX		(1 << 20)

struct oci_annot {
	char		*name;		/* after the prefix: "memory" */
	char		*value;
};

struct oci_state {
	char		*id;		/* never empty */
	char		*status;	/* "creating", "stopped"...; NULL: none */
	uint32_t	 pid;		/* 0: none given (poststop) */
	char		*bundle;	/* its directory; NULL: none given */
	struct oci_annot *annots;	/* the gpufrac.io/ ones only */
	size_t		 nannots;
};

/*
 * Read the state JSON from fp up to its end. Returns 0 with st filled (the
 * caller frees it with oci_state_free), or -1 with one line in err and st
 * empty: not JSON, not an object, no id, a pid that is not a pid, a status
 * or one of our annotations that is not a string of printable characters
 * (they are quoted in messages). Other annotations are not looked at.
 */
int	oci_state_read(FILE *fp, struct oci_state *st, char *err,
	    size_t errlen);

/* The annotation called OCI_ANNOT_PREFIX name, or NULL. */
const char *oci_state_annot(const struct oci_state *st, const char *name);

/* Free what oci_state_read allocated; st is left empty. */
void	oci_state_free(struct oci_state *st);

#endif
