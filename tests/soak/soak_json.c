/*
 * What gpufracctl itself prints, `status --json` and `ps --json`
 * (gpufracctl(1)), held against the look the checks compared (the same
 * queries, in binary): every device's used, leased and host bytes, and
 * every process's on each device. So the interface users read is checked
 * under the same chaos, to the byte.
 */
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "soak_json.h"

#define CTL_MS	10000

/* gpufracctl -s SOCK WHAT --json, parsed; NULL when it failed. */
static json_t *
ctl_json(const struct soak *s, const char *what)
{
	char prog[PATH_MAX];
	json_error_t e;
	json_t *j;
	FILE *f;
	int fds[2], null;
	pid_t pid;

	if (harness_path(prog, sizeof(prog), s->build,
	    "tools/gpufracctl") < 0 || pipe2(fds, O_CLOEXEC) < 0)
		return NULL;
	if ((pid = harness_fork()) == 0) {
		if (dup2(fds[1], STDOUT_FILENO) < 0 ||
		    (null = open("/dev/null", O_WRONLY)) < 0 ||
		    dup2(null, STDERR_FILENO) < 0)
			_exit(127);
		execl(prog, "gpufracctl", "-s", s->sock, what, "--json",
		    (char *)NULL);
		_exit(127);
	}
	close(fds[1]);
	if (pid < 0 || (f = fdopen(fds[0], "r")) == NULL) {
		close(fds[0]);
		return NULL;
	}
	j = json_loadf(f, 0, &e);
	fclose(f);
	if (pid > 0 && harness_reap(pid, CTL_MS) != 0 && j != NULL) {
		json_decref(j);
		j = NULL;
	}
	return j;
}

static int
say(char *why, size_t len, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int
say(char *why, size_t len, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, len, fmt, ap);
	va_end(ap);
	return -1;
}

static int
is(json_t *o, const char *key, uint64_t want)
{
	json_t *v = json_object_get(o, key);

	return json_is_integer(v) && (uint64_t)json_integer_value(v) == want;
}

/* The member of array arr whose key is the string or integer wanted. */
static json_t *
find(json_t *arr, const char *key, const char *str, uint64_t num)
{
	json_t *e, *v;
	size_t i;

	json_array_foreach(arr, i, e) {
		v = json_object_get(e, key);
		if ((str != NULL && json_is_string(v) &&
		    strcmp(json_string_value(v), str) == 0) ||
		    (str == NULL && json_is_integer(v) &&
		    (uint64_t)json_integer_value(v) == num))
			return e;
	}
	return NULL;
}

static int
devices_agree(const struct look *l, json_t *st, char *why, size_t len)
{
	const struct gf_device_status *d;
	json_t *jd;
	size_t i;

	for (i = 0; i < l->st.ndevices; i++) {
		d = &l->st.devices[i];
		jd = find(json_object_get(st, "devices"), "index", NULL,
		    d->index);
		if (jd == NULL || !is(jd, "used_bytes", d->used) ||
		    !is(jd, "leased_bytes", d->leased) ||
		    !is(jd, "host_bytes", d->host))
			return say(why, len, "status --json: device %u is not "
			    "used %llu, leased %llu, host %llu", d->index,
			    (unsigned long long)d->used,
			    (unsigned long long)d->leased,
			    (unsigned long long)d->host);
	}
	return 0;
}

static int
clients_agree(const struct look *l, json_t *ps, char *why, size_t len)
{
	const struct gf_client *c;
	char u[UUID_STR_LEN];
	json_t *jc, *jd;
	size_t i;

	for (i = 0; i < l->nps; i++) {
		c = &l->ps[i];
		if (uuid_is_zero(c->uuid))
			continue;	/* no device opened yet */
		jc = find(json_object_get(ps, "clients"), "pid", NULL, c->pid);
		jd = jc == NULL ? NULL : find(json_object_get(jc, "devices"),
		    "uuid", uuid_format(c->uuid, u, sizeof(u)), 0);
		if (jd == NULL || !is(jd, "used_bytes", c->used) ||
		    !is(jd, "leased_bytes", c->leased) ||
		    !is(jd, "host_bytes", c->host))
			return say(why, len, "ps --json: pid %u is not used "
			    "%llu, leased %llu, host %llu on %s", c->pid,
			    (unsigned long long)c->used,
			    (unsigned long long)c->leased,
			    (unsigned long long)c->host, u);
	}
	return 0;
}

int
json_agrees(const struct soak *s, const struct look *l, char *why,
    size_t len)
{
	json_t *st = ctl_json(s, "status"), *ps = ctl_json(s, "ps");
	int r;

	if (st == NULL || ps == NULL)
		r = say(why, len, "gpufracctl status or ps --json failed");
	else if ((r = devices_agree(l, st, why, len)) == 0)
		r = clients_agree(l, ps, why, len);
	json_decref(st);
	json_decref(ps);
	return r;
}
