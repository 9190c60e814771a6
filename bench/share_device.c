/*
 * -r: the share of a real device. A gpufracd with no configuration says
 * what device 0 is (its name, UUID and total, as the driver reports them)
 * and what is held on it outside gpufrac before any tenant starts: the
 * driver's own memory and other programs', its foreign memory and what
 * its processes without the shim hold (it has no other clients). The
 * ways' daemons then keep back
 *
 *	reserve = total - kept - SHARE_DEVICE_BYTES
 *
 * since a daemon counts foreign and unshimmed memory besides its reserve:
 * what their clients may be given is SHARE_DEVICE_BYTES, as on the
 * simulated device.
 */
#include <stdio.h>
#include <string.h>

#include "ctl_query.h"
#include "gpufrac/proto.h"
#include "harness.h"
#include "log.h"
#include "share.h"
#include "units.h"
#include "uuid.h"

/*
 * The daemon looks at NVML every second: what it counts as foreign is
 * taken once it has stayed within KEPT_SLACK for KEPT_STEADY_MS (memory
 * of a program that just ended may still be on its way back), or at
 * KEPT_MAX_MS whatever it is.
 */
#define KEPT_STEADY_MS	1200
#define KEPT_MAX_MS	5000
#define KEPT_POLL_MS	250
#define KEPT_SLACK	(64ull << 20)

/* What the probe's daemon sees held outside gpufrac on device d. */
static uint64_t
outside(const struct gf_device_status *d)
{
	return d->foreign + d->used;
}

/* Device 0's status into *d; 0 or -1 (said). */
static int
device_status(const struct share_run *r, struct gf_device_status *d)
{
	struct ctl_status st;
	int rc = -1;

	memset(&st, 0, sizeof(st));
	if (ctl_query_status(r->sock, &st) < 0)
		log_warnx("cannot ask gpufracd about the device");
	else if (st.ndevices == 0)
		log_warnx("gpufracd sees no device: no libcuda.so.1 on the "
		    "library path, or no GPU");
	else {
		*d = st.devices[0];
		rc = 0;
	}
	ctl_status_free(&st);
	return rc;
}

/* Device 0 once its foreign memory has settled; 0 or -1 (said). */
static int
device_settled(const struct share_run *r, struct gf_device_status *d)
{
	uint64_t start = harness_now_ns(), since = start, now, was;

	if (device_status(r, d) < 0)
		return -1;
	was = outside(d);
	for (;;) {
		harness_sleep_us(KEPT_POLL_MS * 1000);
		if (device_status(r, d) < 0)
			return -1;
		now = harness_now_ns();
		if (outside(d) > was + KEPT_SLACK ||
		    outside(d) + KEPT_SLACK < was) {
			was = outside(d);
			since = now;
		} else if (now - since >= KEPT_STEADY_MS * 1000000ull)
			return 0;
		if (now - start >= KEPT_MAX_MS * 1000000ull)
			return 0;
	}
}

int
device_probe(struct share_run *r)
{
	struct share_device *dev = &r->dev;
	struct gf_device_status d;
	char total[32], kept[32], want[32];
	int rc = -1;

	if (daemon_start(r, WAY_PROBE) < 0) {
		log_warnx("gpufracd did not start on the driver found");
		daemon_stop(r);
		daemon_log_tail(r);
		return -1;
	}
	if (device_settled(r, &d) < 0)
		goto out;
	snprintf(dev->name, sizeof(dev->name), "%.*s", (int)sizeof(d.name),
	    d.name);
	uuid_format(d.uuid, dev->uuid, sizeof(dev->uuid));
	dev->total = d.total;
	dev->kept = outside(&d);
	dev->kept_used = d.used;
	if (d.total < dev->kept || d.total - dev->kept < SHARE_DEVICE_BYTES) {
		log_warnx("%s has %s, %s of it held outside gpufrac: too "
		    "small to share %s of it", dev->name,
		    size_format(d.total, total, sizeof(total)),
		    size_format(dev->kept, kept, sizeof(kept)),
		    size_format(SHARE_DEVICE_BYTES, want, sizeof(want)));
		goto out;
	}
	dev->reserve = d.total - dev->kept - SHARE_DEVICE_BYTES;
	rc = 0;
out:
	if (daemon_stop(r) != 0) {
		log_warnx("gpufracd did not exit cleanly");
		daemon_log_tail(r);
		rc = -1;
	}
	return rc;
}
