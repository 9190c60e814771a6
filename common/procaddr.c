/*
 * cuGetProcAddress-style lookup over a sorted table of ABIs.
 */
#include <string.h>

#include "procaddr.h"

#define PROCADDR_FLAG_PTDS	2	/* CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM */

/* Index of the first entry named name, or n. */
static size_t
first_named(const struct procaddr *tab, size_t n, const char *name)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (strcmp(tab[mid].name, name) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

const struct procaddr *
procaddr_find(const struct procaddr *tab, size_t n, const char *name,
    int version, uint64_t flags, int *status)
{
	const struct procaddr *best = NULL;
	int want_ptds = (flags & PROCADDR_FLAG_PTDS) != 0;
	size_t i = first_named(tab, n, name);

	if (i == n || strcmp(tab[i].name, name) != 0) {
		*status = PROCADDR_NOT_FOUND;
		return NULL;
	}
	for (; i < n && strcmp(tab[i].name, name) == 0; i++) {
		if (tab[i].version > version)
			break;
		/*
		 * Entries come in version order, ptds after legacy: the last
		 * fitting legacy entry wins, and a per-thread one beats it
		 * when asked for.
		 */
		if (!tab[i].ptds || want_ptds)
			best = &tab[i];
	}
	*status = best ? PROCADDR_FOUND : PROCADDR_VERSION_LOW;
	return best;
}

const struct procaddr *
procaddr_by_symbol(const struct procaddr *tab, size_t n, const char *symbol)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (strcmp(tab[i].symbol, symbol) == 0)
			return &tab[i];
	return NULL;
}

int
procaddr_check_sorted(const struct procaddr *tab, size_t n)
{
	size_t i;

	for (i = 1; i < n; i++) {
		int c = strcmp(tab[i - 1].name, tab[i].name);

		if (c > 0 || (c == 0 && (tab[i - 1].version > tab[i].version ||
		    (tab[i - 1].version == tab[i].version &&
		    tab[i - 1].ptds >= tab[i].ptds))))
			return -1;
	}
	return 0;
}
