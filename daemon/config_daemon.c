/*
 * The [daemon] and [device] sections of gpufrac.conf: a device's section
 * header (an ordinal or a UUID) and the keys of both, each checked and
 * reported "FILE:LINE: message" (config.c reads the files and finds
 * which key is whose).
 */
#include <ctype.h>
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "config_parse.h"
#include "log.h"
#include "metrics_addr.h"
#include "proto.h"
#include "units.h"
#include "uuid.h"

/* A decimal ordinal: digits only, checked. */
static int
ordinal_parse(const char *s, uint32_t *out)
{
	uint64_t v;

	if (decimal_parse(s, INT_MAX, &v) < 0)
		return -1;
	*out = (uint32_t)v;
	return 0;
}

/* The [device] entry with this identity, added if new; -1 on ENOMEM. */
static int
device_entry(struct parse *p, int by_uuid, const uint8_t *uuid,
    uint32_t ordinal)
{
	struct config *c = p->conf;
	struct config_device *d;
	size_t i;

	for (i = 0; i < c->ndevices; i++) {
		d = &c->devices[i];
		if (d->by_uuid == by_uuid && (by_uuid ?
		    memcmp(d->uuid, uuid, GF_UUID_LEN) == 0 :
		    d->ordinal == ordinal)) {
			p->device = i;
			return 0;
		}
	}
	d = realloc(c->devices, (c->ndevices + 1) * sizeof(*d));
	if (d == NULL)
		return -1;
	c->devices = d;
	d = &c->devices[c->ndevices];
	memset(d, 0, sizeof(*d));
	d->by_uuid = by_uuid;
	if (by_uuid)
		memcpy(d->uuid, uuid, GF_UUID_LEN);
	d->ordinal = ordinal;
	if ((d->where = parse_where(p)) == NULL)
		return -1;
	p->device = c->ndevices++;
	return 0;
}

/* [device X]: X is GPU-<uuid> or an ordinal. */
int
section_device(struct parse *p, const char *arg)
{
	uint8_t uuid[GF_UUID_LEN];
	char ubuf[UUID_STR_LEN];
	uint32_t ordinal = 0;
	int by_uuid;

	if (*arg == '\0') {
		parse_error(p, "missing device in section '[%s]' (expected "
		    "[device GPU-<uuid>] or [device N])", p->section_text);
		return -1;
	}
	if (uuid_parse(arg, uuid) == 0) {
		by_uuid = 1;
		snprintf(p->section_id, sizeof(p->section_id), "device %s",
		    uuid_format(uuid, ubuf, sizeof(ubuf)));
	} else if (ordinal_parse(arg, &ordinal) == 0) {
		by_uuid = 0;
		snprintf(p->section_id, sizeof(p->section_id), "device %u",
		    ordinal);
	} else {
		parse_error(p, "bad device '%s' in section '[%s]' (expected "
		    "GPU-<uuid> or an ordinal)", arg, p->section_text);
		return -1;
	}
	if (device_entry(p, by_uuid, uuid, ordinal) < 0) {
		parse_error(p, "out of memory");
		return -1;
	}
	return SEC_DEVICE;
}

void
key_socket(struct parse *p, const char *key, const char *v)
{
	if (v[0] != '/')
		parse_error(p, "bad path for '%s': '%s' (must be absolute)",
		    key, v);
	else if (strlen(v) >= sizeof(p->conf->socket))
		parse_error(p, "bad path for '%s': '%s' (longer than %zu "
		    "bytes)", key, v, sizeof(p->conf->socket) - 1);
	else
		proto_strlcpy(p->conf->socket, v, sizeof(p->conf->socket));
}

void
key_state_dir(struct parse *p, const char *key, const char *v)
{
	if (v[0] != '/')
		parse_error(p, "bad path for '%s': '%s' (must be absolute)",
		    key, v);
	else if (strlen(v) + sizeof("/" RTGROUPS_FILE) > sizeof(p->conf->state_dir))
		parse_error(p, "bad path for '%s': '%s' (longer than %zu "
		    "bytes)", key, v, sizeof(p->conf->state_dir) -
		    sizeof("/" RTGROUPS_FILE));
	else
		proto_strlcpy(p->conf->state_dir, v, sizeof(p->conf->state_dir));
}

void
key_socket_mode(struct parse *p, const char *key, const char *v)
{
	unsigned long mode;
	char *end;

	errno = 0;
	mode = strtoul(v, &end, 8);
	if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0 ||
	    mode > 0777)
		parse_error(p, "bad mode for '%s': '%s' (expected octal "
		    "permission bits, e.g. 0660)", key, v);
	else
		p->conf->socket_mode = (unsigned)mode;
}

void
key_admin_group(struct parse *p, const char *key, const char *v)
{
	struct config *c = p->conf;
	struct group *gr;
	uint32_t gid;

	if (*v == '\0' || strlen(v) >= sizeof(c->admin_group) ||
	    strpbrk(v, " \t:") != NULL) {
		parse_error(p, "bad group for '%s': '%s'", key, v);
		return;
	}
	proto_strlcpy(c->admin_group, v, sizeof(c->admin_group));
	c->admin_gid_valid = 0;
	if (ordinal_parse(v, &gid) == 0) {
		c->admin_gid = (gid_t)gid;
		c->admin_gid_valid = 1;
	} else if ((gr = getgrnam(v)) != NULL) {
		c->admin_gid = gr->gr_gid;
		c->admin_gid_valid = 1;
	} else
		log_warnx("%s:%u: group '%s' for '%s' does not exist; only "
		    "root may administer", p->file, p->line, v, key);
}

void
key_log_level(struct parse *p, const char *key, const char *v)
{
	int level = log_level_parse(v);

	if (level < 0)
		parse_error(p, "bad level for '%s': '%s' (expected error, "
		    "warn, info or debug)", key, v);
	else
		p->conf->log_level = level;
}

void
key_default_limit(struct parse *p, const char *key, const char *v)
{
	uint32_t kind;
	uint64_t value;

	if (parse_limit(p, key, v, &kind, &value) == 0) {
		p->conf->default_limit_kind = kind;
		p->conf->default_limit_value = value;
	}
}

void
key_default_resolver(struct parse *p, const char *key, const char *v)
{
	(void)parse_resolver(p, key, v, &p->conf->default_resolver);
}

void
key_wait_timeout(struct parse *p, const char *key, const char *v)
{
	(void)parse_duration(p, key, v, &p->conf->wait_timeout_ms);
}

void
key_swap_min_idle(struct parse *p, const char *key, const char *v)
{
	(void)parse_duration(p, key, v, &p->conf->swap_min_idle_ms);
}

void
key_swap_engine(struct parse *p, const char *key, const char *v)
{
	(void)parse_swap_engine(p, key, v, &p->conf->swap_engine);
}

void
key_unshimmed(struct parse *p, const char *key, const char *v)
{
	(void)parse_unshimmed(p, key, v, &p->conf->unshimmed);
}

void
key_swap_move_timeout(struct parse *p, const char *key, const char *v)
{
	(void)parse_duration(p, key, v, &p->conf->swap_move_timeout_ms);
}

void
key_swap_keep(struct parse *p, const char *key, const char *v)
{
	(void)parse_duration(p, key, v, &p->conf->swap_keep_ms);
}

void
key_swap_host_limit(struct parse *p, const char *key, const char *v)
{
	if (size_parse(v, &p->conf->swap_host_limit) < 0)
		parse_error(p, "bad size for '%s': '%s'", key, v);
}

void
key_release_timeout(struct parse *p, const char *key, const char *v)
{
	(void)parse_duration(p, key, v, &p->conf->release_timeout_ms);
}

/* A duration of at least min ms into *out, else an error saying why. */
static void
duration_at_least(struct parse *p, const char *key, const char *v,
    uint64_t min, const char *why, uint64_t *out)
{
	uint64_t ms;

	if (parse_duration(p, key, v, &ms) < 0)
		return;
	if (ms < min)
		parse_error(p, "bad duration for '%s': '%s' (at least %llums: "
		    "%s)", key, v, (unsigned long long)min, why);
	else
		*out = ms;
}

void
key_look_interval(struct parse *p, const char *key, const char *v)
{
	duration_at_least(p, key, v, LOOK_INTERVAL_MIN_MS, "a look reads "
	    "NVML and /proc for every process", &p->conf->look_interval_ms);
}

void
key_lease_idle(struct parse *p, const char *key, const char *v)
{
	duration_at_least(p, key, v, LEASE_IDLE_MIN_MS, "a lease needs time "
	    "to be drawn from", &p->conf->lease_idle_ms);
}

void
key_lend_guarantees(struct parse *p, const char *key, const char *v)
{
	(void)parse_yesno(p, key, v, &p->conf->lend_guarantees);
}

void
key_client_may_raise(struct parse *p, const char *key, const char *v)
{
	(void)parse_yesno(p, key, v, &p->conf->client_may_raise);
}

void
key_metrics_listen(struct parse *p, const char *key, const char *v)
{
	char why[METRICS_ADDR_ERR_LEN];

	if (metrics_addr_parse(v, NULL, why, sizeof(why)) < 0)
		parse_error(p, "bad address for '%s': '%s' (%s)", key, v, why);
	else
		proto_strlcpy(p->conf->metrics_listen, v,
		    sizeof(p->conf->metrics_listen));
}

void
key_max_conns(struct parse *p, const char *key, const char *v)
{
	uint64_t n;

	if (decimal_parse(v, CONFIG_CONNS_MAX, &n) < 0)
		parse_error(p, "bad value for '%s': '%s' (expected a number "
		    "of connections from 0, no cap, to %u)", key, v,
		    CONFIG_CONNS_MAX);
	else
		p->conf->max_conns_per_uid = (uint32_t)n;
}

void
key_outq_limit(struct parse *p, const char *key, const char *v)
{
	uint64_t size;

	if (size_parse(v, &size) < 0 || size < CONFIG_OUTQ_MIN)
		parse_error(p, "bad size for '%s': '%s' (expected 1Mi or more)",
		    key, v);
	else
		p->conf->outq_limit = size;
}

void
key_reserve(struct parse *p, const char *key, const char *v)
{
	struct config_device *d = &p->conf->devices[p->device];
	uint64_t size;
	char *where;

	if (size_parse(v, &size) < 0) {
		parse_error(p, "bad size for '%s': '%s'", key, v);
		return;
	}
	if ((where = parse_where(p)) == NULL) {
		parse_error(p, "out of memory");
		return;
	}
	free(d->reserve_where);
	d->reserve_where = where;
	d->reserve = size;
	d->reserve_set = 1;
}
