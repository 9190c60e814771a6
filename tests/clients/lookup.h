/*
 * For the simulator's check programs: what cuGetProcAddress_v2 must find,
 * and what it must not find yet. Include after check.h.
 */
#ifndef GF_TEST_LOOKUP_H
#define GF_TEST_LOOKUP_H

#include <cuda.h>
#include <stddef.h>

/*
 * A name asked for at a CUDA version with flags, and the entry point it
 * must give; NULL: none, the name being newer than the version.
 */
struct lookup_want {
	const char	*name;
	int		version;
	cuuint64_t	flags;
	void		*want;
};

static inline void
check_lookups(const struct lookup_want *w, size_t n)
{
	CUdriverProcAddressQueryResult st;
	CUresult rc;
	void *fn;
	size_t i;

	for (i = 0; i < n; i++) {
		fn = (void *)1;
		st = w[i].want != NULL ? CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND :
		    CU_GET_PROC_ADDRESS_SUCCESS;
		rc = cuGetProcAddress_v2(w[i].name, &fn, w[i].version,
		    w[i].flags, &st);
		if (w[i].want != NULL)
			CHECK(rc == CUDA_SUCCESS && fn == w[i].want &&
			    st == CU_GET_PROC_ADDRESS_SUCCESS,
			    "%s@%d flags %llu: %s, status %d", w[i].name,
			    w[i].version, (unsigned long long)w[i].flags,
			    err_name(rc), (int)st);
		else
			CHECK(rc == CUDA_ERROR_NOT_FOUND && fn == NULL &&
			    st == CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT,
			    "too new: %s@%d: %s, status %d", w[i].name,
			    w[i].version, err_name(rc), (int)st);
	}
}

#endif
