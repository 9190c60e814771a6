/*
 * The daemon's life cycle: start-up (devices, configuration, socket), a
 * reload that applies a new configuration entirely or not at all, and
 * shutdown.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arbiter.h"
#include "devices.h"
#include "event.h"
#include "log.h"
#include "proto.h"
#include "units.h"
#include "uuid.h"

int
arbiter_read_config(struct config *c, const char *path, int optional,
    const char *socket_arg, config_report_fn *report, void *arg)
{
	int errors = config_load(c, path, optional, report, arg);
	char line[CONFIG_SOCKET_LEN + 64];

	if (socket_arg == NULL)
		return errors;
	if (strlen(socket_arg) >= sizeof(c->socket)) {
		snprintf(line, sizeof(line), "socket path '%s' is too long "
		    "(at most %zu bytes)", socket_arg, sizeof(c->socket) - 1);
		report(line, arg);
		return errors + 1;
	}
	proto_strlcpy(c->socket, socket_arg, sizeof(c->socket));
	return errors;
}

/* The ledger device a [device] section names, or -1. */
static int
device_match(const struct ledger *l, const struct config_device *d)
{
	size_t i;

	if (d->by_uuid)
		return ledger_device_find(l, d->uuid);
	for (i = 0; i < l->ndevices; i++)
		if (l->devices[i].index == d->ordinal)
			return (int)i;
	return -1;
}

static void __attribute__((format(printf, 3, 4)))
check_error(config_report_fn *report, void *arg, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	report(line, arg);
}

int
arbiter_check(const struct ledger *l, const struct config *conf,
    uint64_t *reserves, config_report_fn *report, void *arg)
{
	const char **claimed = calloc(l->ndevices ? l->ndevices : 1,
	    sizeof(*claimed));
	char ubuf[UUID_STR_LEN], rbuf[32], tbuf[32];
	int errors = 0, dev;
	size_t i;

	if (claimed == NULL) {
		report("out of memory checking the configuration", arg);
		return 1;
	}
	for (i = 0; i < l->ndevices; i++)
		reserves[i] = 0;
	for (i = 0; i < conf->ndevices; i++) {
		const struct config_device *d = &conf->devices[i];
		const struct ledger_device *ld;

		if ((dev = device_match(l, d)) < 0) {
			if (d->by_uuid)
				uuid_format(d->uuid, ubuf, sizeof(ubuf));
			else
				snprintf(ubuf, sizeof(ubuf), "%u", d->ordinal);
			log_warnx("%s: there is no device %s on this machine; "
			    "ignoring its section", d->where, ubuf);
			continue;
		}
		ld = &l->devices[dev];
		uuid_format(ld->uuid, ubuf, sizeof(ubuf));
		if (claimed[dev] != NULL) {
			check_error(report, arg, "%s: device %u (%s) is "
			    "configured twice; first at %s", d->where,
			    ld->index, ubuf, claimed[dev]);
			errors++;
			continue;
		}
		claimed[dev] = d->where;
		if (d->reserve_set && d->reserve > ld->total) {
			check_error(report, arg, "%s: 'reserve' of %s is more "
			    "than the total %s of device %u (%s)",
			    d->reserve_where, size_format(d->reserve, rbuf,
			    sizeof(rbuf)), size_format(ld->total, tbuf,
			    sizeof(tbuf)), ld->index, ubuf);
			errors++;
			continue;
		}
		reserves[dev] = d->reserve;
	}
	free(claimed);
	return errors;
}

static void
report_log(const char *line, void *arg)
{
	(void)arg;
	log_errx("%s", line);
}

/*
 * Check conf against the devices and put it in force, or leave everything
 * as it was. conf is taken over either way. Returns 0 or -1 (logged).
 */
static int
arbiter_apply(struct arbiter *a, struct config *conf)
{
	struct ledger *l = &a->ledger;
	uint64_t *reserves = calloc(l->ndevices ? l->ndevices : 1,
	    sizeof(*reserves));
	size_t i;

	if (reserves == NULL) {
		log_errx("out of memory applying the configuration");
		config_free(conf);
		return -1;
	}
	if (arbiter_check(l, conf, reserves, report_log, NULL) > 0) {
		free(reserves);
		config_free(conf);
		return -1;
	}
	for (i = 0; i < l->ndevices; i++)
		ledger_set_reserve(l, i, reserves[i]);
	free(reserves);
	ledger_set_default_limit(l, conf->default_limit_kind,
	    conf->default_limit_value);
	log_setlevel(conf->log_level);
	config_free(&a->conf);
	a->conf = *conf;
	return 0;
}

int
arbiter_start(struct arbiter *a, struct config *conf, const char *lib)
{
	struct device_desc *devs;
	uint32_t swap;
	int i, n;

	config_init(&a->conf);
	ledger_init(&a->ledger);
	control_init(&a->control, a->loop, a);
	a->start_ms = event_now_ms();
	if ((n = devices_discover(lib, &devs, &swap)) < 0) {
		log_errx("out of memory listing the devices");
		config_free(conf);
		return -1;
	}
	for (i = 0; i < n; i++)
		if (ledger_device_add(&a->ledger, devs[i].uuid, devs[i].index,
		    devs[i].name, devs[i].total, swap) < 0) {
			log_errx("out of memory adding device %d", i);
			free(devs);
			config_free(conf);
			return -1;
		}
	free(devs);
	if (arbiter_apply(a, conf) < 0) {
		log_errx("the configuration does not fit this machine");
		return -1;
	}
	return control_listen(&a->control, a->conf.socket,
	    a->conf.socket_mode);
}

void
arbiter_reload(struct arbiter *a)
{
	unsigned old_mode = a->conf.socket_mode;
	struct config c;

	config_init(&c);
	if (arbiter_read_config(&c, a->conf_path, a->conf_optional,
	    a->socket_arg, report_log, NULL) > 0) {
		config_free(&c);
		log_errx("keeping the configuration in force");
		return;
	}
	if (arbiter_apply(a, &c) < 0) {
		log_errx("keeping the configuration in force");
		return;
	}
	/* The socket stays where it is until a restart. */
	if (a->control.fd >= 0 &&
	    strcmp(a->conf.socket, a->control.path) != 0) {
		log_warnx("'socket' changed to '%s': still listening on '%s' "
		    "until a restart", a->conf.socket, a->control.path);
		proto_strlcpy(a->conf.socket, a->control.path,
		    sizeof(a->conf.socket));
	}
	if (a->conf.socket_mode != old_mode)
		control_chmod(&a->control, a->conf.socket_mode);
	log_info("configuration reloaded from '%s'", a->conf_path);
}

void
arbiter_stop(struct arbiter *a)
{
	control_shutdown(&a->control);
	ledger_free(&a->ledger);
	config_free(&a->conf);
}
