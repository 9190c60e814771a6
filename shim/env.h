/*
 * The environment the shim reads: once, at the first hooked CUDA call
 * (env_load, at start: init.c), never again.
 */
#ifndef GF_SHIM_ENV_H
#define GF_SHIM_ENV_H

#include <limits.h>
#include <stdint.h>

#include "limit.h"

/*
 * How long an allocation waits for a lost daemon to come back: a restart
 * by systemd takes about a second, and every client re-registers then.
 */
#define ENV_REJOIN_TIMEOUT_MS	10000

struct shim_env {
	int		disabled;	/* GPUFRAC_DISABLE=1: pure pass-through */
	char		socket[PATH_MAX]; /* GPUFRAC_SOCKET or the default */
	struct limit_request limit;	/* GPUFRAC_MEMORY_LIMIT */
	int32_t		priority;	/* GPUFRAC_PRIORITY, or INT32_MIN */
	uint32_t	resolver;	/* GPUFRAC_RESOLVER, or GF_UNSET */
	uint32_t	wait_timeout_ms; /* GPUFRAC_WAIT_TIMEOUT, or GF_UNSET */
	uint32_t	rejoin_timeout_ms; /* GPUFRAC_REJOIN_TIMEOUT */
};

/* Valid after env_load(); read-only from then on. */
extern struct shim_env shim_env;

/*
 * Read every GPUFRAC_* variable, set up the logger (GPUFRAC_LOG), and report
 * each bad value once on stderr; a bad value leaves that setting at its safe
 * default (not requested).
 */
void	env_load(void);

#endif
