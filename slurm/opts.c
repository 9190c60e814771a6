/*
 * The plugin's arguments and the user's options. Values are checked with
 * the same code that builds the daemon's request (ctlreq), so what passes
 * here is what the daemon is sent.
 */
#include <stdio.h>
#include <string.h>

#include "ctlreq.h"
#include "opts.h"
#include "sock.h"
#include "units.h"

enum {
	OPT_MEM,
	OPT_PRIORITY,
	OPT_RESOLVER,
	OPT_UNSHIMMED,
	OPT_COUNT
};

static struct opts_conf	conf;
static struct opts_req	req;

static int	opt_given(int, const char *, int);

static struct spank_option options[OPT_COUNT] = {
	{ "gpu-mem", "SIZE", "GPU memory for the step's tasks on each node, "
	    "per GPU: a size such as 8Gi or a share such as 50% (gpufrac)",
	    1, OPT_MEM, opt_given },
	{ "gpu-priority", "N", "the priority of that memory against other "
	    "jobs' (with --gpu-mem)", 1, OPT_PRIORITY, opt_given },
	{ "gpu-resolver", "R", "when it does not fit: fail, wait, preempt "
	    "or swap (with --gpu-mem)", 1, OPT_RESOLVER, opt_given },
	{ "gpu-unshimmed", "A", "a task that holds GPU memory without "
	    "gpufrac's shim: count or kill it when past the limit (with "
	    "--gpu-mem)", 1, OPT_UNSHIMMED, opt_given },
};

/* The daemon's key for each option. */
static const char *const opt_keys[OPT_COUNT] = {
	"limit", "priority", "resolver", "unshimmed"
};

/* Check value as the daemon's request would carry it: 0 or -1 with err. */
static int
value_check(const char *key, const char *value, struct ctlreq_group *g,
    char *err, size_t errlen)
{
	if (ctlreq_group_init(g, "check", err, errlen) < 0)
		return -1;
	return ctlreq_group_option(g, key, value, err, errlen);
}

/* Copy an absolute path: 0, or -1 with err naming the argument. */
static int
arg_path(const char *key, const char *v, char *dst, size_t size, char *err,
    size_t errlen)
{
	if (v[0] != '/') {
		snprintf(err, errlen, "%s='%s' is not an absolute path", key,
		    v);
		return -1;
	}
	if (strlen(v) >= size) {
		snprintf(err, errlen, "%s= path is too long (at most %zu "
		    "bytes)", key, size - 1);
		return -1;
	}
	strcpy(dst, v);
	return 0;
}

static int
arg_one(const char *arg, char *err, size_t errlen)
{
	struct ctlreq_group g;
	const char *eq = strchr(arg, '='), *v;
	char e[SOCK_ERR_LEN];
	size_t klen;
	uint64_t ms;

	if (eq == NULL)
		goto unknown;
	klen = (size_t)(eq - arg);
	v = eq + 1;
	if (klen == 6 && strncmp(arg, "socket", klen) == 0)
		return arg_path("socket", v, conf.socket, sizeof(conf.socket),
		    err, errlen);
	if (klen == 4 && strncmp(arg, "shim", klen) == 0)
		return arg_path("shim", v, conf.shim, sizeof(conf.shim), err,
		    errlen);
	if (klen == 6 && strncmp(arg, "cgroup", klen) == 0)
		return arg_path("cgroup", v, conf.cgroup, sizeof(conf.cgroup),
		    err, errlen);
	if (klen == 7 && strncmp(arg, "timeout", klen) == 0) {
		/* Connect and reply together: srun waits on us. */
		if (duration_parse(v, &ms) < 0 || ms == 0 ||
		    ms > OPTS_TIMEOUT_MAX_MS) {
			snprintf(err, errlen, "bad timeout= '%s' (a duration "
			    "from 1ms to 10min)", v);
			return -1;
		}
		ctlreq_timeout_set((int)ms);
		return 0;
	}
	if (klen == 12 && strncmp(arg, "max_priority", klen) == 0) {
		if (value_check("priority", v, &g, e, sizeof(e)) < 0) {
			snprintf(err, errlen, "max_priority: %s", e);
			return -1;
		}
		conf.max_priority = g.set.priority;
		conf.max_priority_set = 1;
		return 0;
	}
	if (klen == 6 && strncmp(arg, "shards", klen) == 0) {
		if (strcmp(v, "on") != 0 && strcmp(v, "off") != 0) {
			snprintf(err, errlen, "shards='%s' is neither on nor "
			    "off", v);
			return -1;
		}
		conf.shards_off = strcmp(v, "off") == 0;
		return 0;
	}
	if (klen == 9 && strncmp(arg, "gres_conf", klen) == 0)
		return arg_path("gres_conf", v, conf.gres_conf,
		    sizeof(conf.gres_conf), err, errlen);
	if (klen == 4 && strncmp(arg, "node", klen) == 0) {
		if (v[0] == '\0' || strlen(v) >= sizeof(conf.node)) {
			snprintf(err, errlen, "bad node= '%s' (a node name of "
			    "1 to %zu characters)", v, sizeof(conf.node) - 1);
			return -1;
		}
		strcpy(conf.node, v);
		return 0;
	}
unknown:
	snprintf(err, errlen, "unknown argument '%s' (expected socket=PATH, "
	    "shim=PATH, cgroup=DIR, max_priority=N, timeout=DURATION, "
	    "shards=on|off, gres_conf=PATH or node=NAME)", arg);
	return -1;
}

int
opts_args(int ac, char **av, char *err, size_t errlen)
{
	int i;

	memset(&conf, 0, sizeof(conf));
	ctlreq_timeout_set(CTLREQ_TIMEOUT_MS);
	snprintf(conf.socket, sizeof(conf.socket), "%s", sock_default_path());
	snprintf(conf.shim, sizeof(conf.shim), "%s", OPTS_SHIM_DEFAULT);
	for (i = 0; i < ac; i++)
		if (arg_one(av[i], err, errlen) < 0)
			return -1;
	return 0;
}

/*
 * Slurm calls this for each option given, in srun, sbatch or salloc and
 * again in slurmstepd. Failing it fails the command with our line.
 */
static int
opt_given(int val, const char *optarg, int remote)
{
	char *dst[OPT_COUNT] = { req.mem, req.priority, req.resolver,
	    req.unshimmed };
	char err[SOCK_ERR_LEN];
	struct ctlreq_group g;

	(void)remote;
	if (val < 0 || val >= OPT_COUNT || optarg == NULL)
		return -1;
	if (strlen(optarg) >= OPTS_VALUE_LEN) {
		slurm_error("gpufrac: --%s: value too long (at most %d "
		    "characters)", options[val].name, OPTS_VALUE_LEN - 1);
		return -1;
	}
	if (value_check(opt_keys[val], optarg, &g, err, sizeof(err)) < 0) {
		slurm_error("gpufrac: --%s: %s", options[val].name, err);
		return -1;
	}
	if (val == OPT_PRIORITY && conf.max_priority_set &&
	    g.set.priority > conf.max_priority) {
		slurm_error("gpufrac: --gpu-priority: %d is above %d, the "
		    "highest this cluster allows", (int)g.set.priority,
		    (int)conf.max_priority);
		return -1;
	}
	strcpy(dst[val], optarg);
	return 0;
}

int
opts_register(spank_t sp, char *err, size_t errlen)
{
	spank_err_t rc;
	int i;

	for (i = 0; i < OPT_COUNT; i++)
		if ((rc = spank_option_register(sp, &options[i])) !=
		    ESPANK_SUCCESS) {
			snprintf(err, errlen, "cannot register --%s: %s",
			    options[i].name, spank_strerror(rc));
			return -1;
		}
	return 0;
}

const struct opts_conf *
opts_conf(void)
{
	return &conf;
}

const struct opts_req *
opts_req(void)
{
	return &req;
}
