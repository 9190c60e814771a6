/*
 * A callgrind output file, read for the fast path's count: its total, and
 * what the calls into the simulated driver's cuMemAlloc_v2 and
 * cuMemFree_v2 cost inside the driver. That cost moves between a bare run
 * and a run through the shim for reasons of the driver's own (its malloc
 * finds the heap laid out otherwise once the shim has mapped its table),
 * so bench_count.c takes it out of both sides: what is left is the
 * benchmark's loop, the shim, and every driver call the shim adds.
 *
 * The format (valgrind's docs/callgrind-format): "ob=", "fn=", "cob=" and
 * "cfn=" lines name objects and functions, compressed as "(id) name" the
 * first time, whichever line that is, and "(id)" after; "calls=" is followed by a line whose last
 * number is the inclusive cost of those calls; cob applies to the next
 * call only (without it, the callee is in the caller's object).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define CG_DRIVER_OBJ	"/libcuda.so.1"
#define CG_IDS		8	/* interesting functions' ids we keep */

struct cg_read {
	long	 driver_ob;		/* id of the driver's object, or -1 */
	long	 fns[CG_IDS];		/* ids of the driver's alloc and free */
	int	 nfns;
	long	 ob, cob, cfn;		/* current object; next call's */
	int	 in_call;		/* the cost line of a call is next */
};

/* The id of a "(id) name" or "(id)" value; *name: the name, or NULL. */
static long
cg_id(const char *v, const char **name)
{
	char *end;
	long id;

	*name = NULL;
	if (*v != '(')
		return -1;
	errno = 0;
	id = strtol(v + 1, &end, 10);
	if (errno != 0 || *end != ')')
		return -1;
	if (end[1] == ' ')
		*name = end + 2;
	return id;
}

static int
cg_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* An ob= or cob= value: its id, noting the driver's. */
static long
cg_object(struct cg_read *cg, const char *v)
{
	const char *name;
	long id = cg_id(v, &name);

	if (name != NULL && cg_suffix(name, CG_DRIVER_OBJ))
		cg->driver_ob = id;
	return id;
}

/* An fn= or cfn= value: its id, noting the functions counted. */
static long
cg_function(struct cg_read *cg, const char *v)
{
	const char *name;
	long id = cg_id(v, &name);

	if (name != NULL && (strcmp(name, "cuMemAlloc_v2") == 0 ||
	    strcmp(name, "cuMemFree_v2") == 0) && cg->nfns < CG_IDS)
		cg->fns[cg->nfns++] = id;
	return id;
}

static int
cg_counted(const struct cg_read *cg)
{
	int i;

	if (cg->driver_ob < 0 || cg->ob == cg->driver_ob ||
	    (cg->cob >= 0 ? cg->cob : cg->ob) != cg->driver_ob)
		return 0;
	for (i = 0; i < cg->nfns; i++)
		if (cg->fns[i] == cg->cfn)
			return 1;
	return 0;
}

/* One line; the driver's cost grows by a counted call's. */
static void
cg_line(struct cg_read *cg, char *line, double *total, double *driver)
{
	char *last;

	line[strcspn(line, "\n")] = '\0';
	if (cg->in_call) {
		cg->in_call = 0;
		if (cg_counted(cg) && (last = strrchr(line, ' ')) != NULL)
			*driver += strtod(last + 1, NULL);
		cg->cob = cg->cfn = -1;
	} else if (strncmp(line, "ob=", 3) == 0)
		cg->ob = cg_object(cg, line + 3);
	else if (strncmp(line, "cob=", 4) == 0)
		cg->cob = cg_object(cg, line + 4);
	else if (strncmp(line, "fn=", 3) == 0)
		(void)cg_function(cg, line + 3);	/* a name, maybe */
	else if (strncmp(line, "cfn=", 4) == 0)
		cg->cfn = cg_function(cg, line + 4);
	else if (strncmp(line, "calls=", 6) == 0)
		cg->in_call = 1;
	else if (strncmp(line, "totals:", 7) == 0 ||
	    strncmp(line, "summary:", 8) == 0)
		*total = strtod(strchr(line, ':') + 1, NULL);
}

int
callgrind_read(const char *path, double *total, double *driver)
{
	struct cg_read cg = { .driver_ob = -1, .ob = -1, .cob = -1,
	    .cfn = -1 };
	char line[8192];
	FILE *f;

	*total = -1;
	*driver = 0;
	if ((f = fopen(path, "re")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		cg_line(&cg, line, total, driver);
	fclose(f);
	return *total > 0 && *driver > 0 ? 0 : -1;
}
