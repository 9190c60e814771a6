/*
 * Reading GPUFRAC_* once: each value checked, a bad one reported on one
 * line and replaced by the safe default: nothing requested, except for
 * the memory limit, where asking for nothing would hand a typo the
 * group's whole allowance (limit_request_refuse).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "env.h"
#include "gpufrac/proto.h"
#include "log.h"
#include "sock.h"
#include "units.h"

struct shim_env shim_env;

static void
env_log(void)
{
	const char *s = getenv("GPUFRAC_LOG");
	int level = LOG_LVL_ERROR;

	if (s != NULL && *s != '\0' && (level = log_level_parse(s)) < 0) {
		level = LOG_LVL_ERROR;
		log_errx("bad GPUFRAC_LOG '%s': expected error, warn, info or "
		    "debug; using error", s);
	}
	log_init("gpufrac", level, 0);
}

static void
env_disable(void)
{
	const char *s = getenv("GPUFRAC_DISABLE");

	if (s == NULL || *s == '\0' || strcmp(s, "0") == 0)
		return;
	if (strcmp(s, "1") == 0)
		shim_env.disabled = 1;
	else
		log_errx("bad GPUFRAC_DISABLE '%s': expected 0 or 1; "
		    "not disabled", s);
}

static void
env_socket(void)
{
	const char *s = sock_default_path();
	size_t len = strlen(s);

	if (len >= sizeof(shim_env.socket)) {
		log_errx("bad GPUFRAC_SOCKET: longer than %zu bytes; using "
		    "'%s'", sizeof(shim_env.socket) - 1, GF_SOCKET_DEFAULT);
		s = GF_SOCKET_DEFAULT;
		len = strlen(s);
	}
	memcpy(shim_env.socket, s, len + 1);
}

static void
env_limit(void)
{
	const char *s = getenv("GPUFRAC_MEMORY_LIMIT");
	char why[160];

	if (limit_request_parse(s, &shim_env.limit, why, sizeof(why)) < 0) {
		limit_request_refuse(&shim_env.limit);
		log_errx("bad GPUFRAC_MEMORY_LIMIT '%s': %s; no device memory "
		    "is given until it is fixed", s, why);
	}
}

static void
env_priority(void)
{
	const char *s = getenv("GPUFRAC_PRIORITY");
	char *end;
	long v;

	shim_env.priority = INT32_MIN;
	if (s == NULL || *s == '\0')
		return;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE || v <= INT32_MIN ||
	    v > INT32_MAX) {
		log_errx("bad GPUFRAC_PRIORITY '%s': expected an integer; "
		    "not requested", s);
		return;
	}
	shim_env.priority = (int32_t)v;
}

static void
env_resolver(void)
{
	static const char *const names[] = {
		[GF_RESOLVER_FAIL] = "fail",
		[GF_RESOLVER_WAIT] = "wait",
		[GF_RESOLVER_PREEMPT] = "preempt",
		[GF_RESOLVER_SWAP] = "swap",
	};
	const char *s = getenv("GPUFRAC_RESOLVER");
	uint32_t i;

	shim_env.resolver = GF_UNSET;
	if (s == NULL || *s == '\0')
		return;
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(s, names[i]) == 0) {
			shim_env.resolver = i;
			return;
		}
	log_errx("bad GPUFRAC_RESOLVER '%s': expected fail, wait, preempt or "
	    "swap; not requested", s);
}

/*
 * A duration in name, at most max ms: 1 with *ms, 0 unset; -1 bad, said
 * with what is done instead.
 */
static int
env_duration(const char *name, uint64_t max, const char *instead,
    uint32_t *ms)
{
	const char *s = getenv(name);
	uint64_t v;

	if (s == NULL || *s == '\0')
		return 0;
	if (duration_parse(s, &v) < 0 || v > max) {
		log_errx("bad %s '%s': expected a duration (250ms, 30s, 5m); %s",
		    name, s, instead);
		return -1;
	}
	*ms = (uint32_t)v;
	return 1;
}

static void
env_wait_timeout(void)
{
	if (env_duration("GPUFRAC_WAIT_TIMEOUT", GF_UNSET - 1, "not requested",
	    &shim_env.wait_timeout_ms) != 1)
		shim_env.wait_timeout_ms = GF_UNSET;
}

static void
env_rejoin_timeout(void)
{
	char instead[32];

	snprintf(instead, sizeof(instead), "using %u ms", ENV_REJOIN_TIMEOUT_MS);
	if (env_duration("GPUFRAC_REJOIN_TIMEOUT", UINT32_MAX, instead,
	    &shim_env.rejoin_timeout_ms) != 1)
		shim_env.rejoin_timeout_ms = ENV_REJOIN_TIMEOUT_MS;
}

void
env_load(void)
{
	env_log();
	env_disable();
	env_socket();
	env_limit();
	env_priority();
	env_resolver();
	env_wait_timeout();
	env_rejoin_timeout();
}
