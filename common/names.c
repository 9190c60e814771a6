/*
 * Name tables for the protocol's enumerations, indexed by value.
 */
#include <string.h>

#include "gpufrac/proto.h"
#include "names.h"

#define NITEMS(a)	(sizeof(a) / sizeof((a)[0]))

static const char *const states[] = {
	[GF_STATE_RUNNING] = "running",
	[GF_STATE_WAITING] = "waiting",
	[GF_STATE_SWAPPED] = "swapped",
	[GF_STATE_RELEASING] = "releasing",
	[GF_STATE_UNSHIMMED] = "unshimmed",
};

static const char *const kinds[] = {
	[GF_KIND_MEM] = "mem",
	[GF_KIND_PITCH] = "pitch",
	[GF_KIND_MANAGED] = "managed",
	[GF_KIND_ARRAY] = "array",
	[GF_KIND_VMM] = "vmm",
	[GF_KIND_POOL] = "pool",
	[GF_KIND_CONTEXT] = "context",
};

static const char *const resolvers[] = {
	[GF_RESOLVER_FAIL] = "fail",
	[GF_RESOLVER_WAIT] = "wait",
	[GF_RESOLVER_PREEMPT] = "preempt",
	[GF_RESOLVER_SWAP] = "swap",
};

static const char *const preempts[] = {
	[GF_PREEMPT_SWAP] = "swap",
	[GF_PREEMPT_KILL] = "kill",
	[GF_PREEMPT_NONE] = "none",
};

static const char *const events[] = {
	[GF_EV_GRANT] = "grant",
	[GF_EV_DENY] = "deny",
	[GF_EV_WAIT] = "wait",
	[GF_EV_WAKE] = "wake",
	[GF_EV_TIMEOUT] = "timeout",
	[GF_EV_PREEMPT] = "preempt",
	[GF_EV_KILL] = "kill",
	[GF_EV_SWAP_OUT] = "swap-out",
	[GF_EV_SWAP_IN] = "swap-in",
	[GF_EV_SWAP_SKIP] = "swap-skip",
	[GF_EV_FALLBACK] = "fallback",
	[GF_EV_LEND] = "lend",
	[GF_EV_RECLAIM] = "reclaim",
	[GF_EV_RELEASED] = "released",
	[GF_EV_DRIVER_KEPT] = "driver-kept",
	[GF_EV_DRIVER_OOM] = "driver-oom",
	[GF_EV_CTX_END] = "context-end",
	[GF_EV_CONN_LIMIT] = "conn-limit",
	[GF_EV_REFUSED] = "refused",
	[GF_EV_PAST_LIMIT] = "past-limit",
	[GF_EV_DRIVER_LIMIT] = "driver-limit",
	[GF_EV_UNSHIMMED] = "unshimmed",
	[GF_EV_UNSHIMMED_KILL] = "unshimmed-kill",
	[GF_EV_REGROUPED] = "regrouped",
	[GF_EV_UNRECORDED] = "unrecorded",
};

static const char *
lookup(const char *const *names, size_t n, uint32_t v)
{
	return v < n && names[v] != NULL ? names[v] : "unknown";
}

static int
parse(const char *const *names, size_t n, const char *s)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (names[i] != NULL && strcmp(names[i], s) == 0)
			return (int)i;
	return -1;
}

const char *
name_state(uint32_t v)
{
	return lookup(states, NITEMS(states), v);
}

const char *
name_kind(uint32_t v)
{
	return lookup(kinds, NITEMS(kinds), v);
}

const char *
name_resolver(uint32_t v)
{
	return lookup(resolvers, NITEMS(resolvers), v);
}

const char *
name_on_preempt(uint32_t v)
{
	return lookup(preempts, NITEMS(preempts), v);
}

const char *
name_event(uint32_t v)
{
	return lookup(events, NITEMS(events), v);
}

int
name_resolver_parse(const char *s)
{
	return parse(resolvers, NITEMS(resolvers), s);
}

int
name_on_preempt_parse(const char *s)
{
	return parse(preempts, NITEMS(preempts), s);
}
