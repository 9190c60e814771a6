/*
 * One look at everything the checks compare: the daemon's status, its ps
 * and each live client's context records (what gpufracctl status, ps and
 * allocs show, asked the way gpufracctl asks), and the simulated
 * driver's own state through its NVML (tests/simcuda/libnvidia-ml.so.1,
 * opened by path: this program is not run with its LD_LIBRARY_PATH):
 * each device's used memory and what each process holds there.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctl_query.h"
#include "harness.h"
#include "log.h"
#include "nvml_abi.h"
#include "soak_look.h"
#include "uuid.h"

static struct {
	int		ready;
	__typeof__(nvmlDeviceGetHandleByIndex_v2) *handle;
	__typeof__(nvmlDeviceGetUUID) *uuid;
	__typeof__(nvmlDeviceGetMemoryInfo) *meminfo;
	__typeof__(nvmlDeviceGetComputeRunningProcesses_v3) *procs;
} nv;

static int
nvml_open(const struct soak *s)
{
	__typeof__(nvmlInit_v2) *init;
	char path[PATH_MAX];
	void *h;

	if (nv.ready)
		return 0;
	if (harness_path(path, sizeof(path), s->build,
	    "tests/simcuda/libnvidia-ml.so.1") < 0)
		return -1;
	if ((h = dlopen(path, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		log_warnx("cannot open the simulated NVML: %s", dlerror());
		return -1;
	}
	init = (__typeof__(init))dlsym(h, "nvmlInit_v2");
	nv.handle = (__typeof__(nv.handle))dlsym(h,
	    "nvmlDeviceGetHandleByIndex_v2");
	nv.uuid = (__typeof__(nv.uuid))dlsym(h, "nvmlDeviceGetUUID");
	nv.meminfo = (__typeof__(nv.meminfo))dlsym(h,
	    "nvmlDeviceGetMemoryInfo");
	nv.procs = (__typeof__(nv.procs))dlsym(h,
	    "nvmlDeviceGetComputeRunningProcesses_v3");
	if (init == NULL || nv.handle == NULL || nv.uuid == NULL ||
	    nv.meminfo == NULL || nv.procs == NULL || init() != NVML_SUCCESS) {
		log_warnx("cannot use the simulated NVML '%s'", path);
		return -1;
	}
	nv.ready = 1;
	return 0;
}

/* Device ord as the driver sees it: used memory, its processes. */
static int
driver_look(struct look *l, int ord)
{
	nvmlProcessInfo_t *p;
	nvmlDevice_t dev;
	nvmlMemory_t m;
	unsigned n = 0;
	nvmlReturn_t r;

	if (nv.handle((unsigned)ord, &dev) != NVML_SUCCESS ||
	    nv.uuid(dev, l->uuid[ord], sizeof(l->uuid[ord])) != NVML_SUCCESS ||
	    nv.meminfo(dev, &m) != NVML_SUCCESS)
		return -1;
	l->drv_used[ord] = m.used;
	r = nv.procs(dev, &n, NULL);
	if (r != NVML_SUCCESS && r != NVML_ERROR_INSUFFICIENT_SIZE)
		return -1;
	n += 16;	/* room for any that start meanwhile */
	if ((p = calloc(n, sizeof(*p))) == NULL ||
	    nv.procs(dev, &n, p) != NVML_SUCCESS) {
		free(p);
		return -1;
	}
	l->procs[ord] = p;
	l->nprocs[ord] = n;
	return 0;
}

/* The records of kind context of each live client, by device ordinal. */
static int
contexts_look(const struct soak *s, struct look *l)
{
	const struct gf_device_status *d;
	struct gf_alloc *a;
	size_t n, j;
	int i, ord, rc = 0;

	for (i = 0; i < SOAK_MAX_SLOTS && rc == 0; i++) {
		if (s->clients[i].pid <= 0)
			continue;
		if (ctl_query_allocs(s->sock, (uint32_t)s->clients[i].pid, &a,
		    &n) < 0) {
			/* Not a client (yet): its context counts as none. */
			continue;
		}
		for (j = 0; j < n; j++) {
			if (a[j].kind != GF_KIND_CONTEXT)
				continue;
			for (ord = 0; ord < SOAK_NDEV; ord++) {
				d = look_device(l, ord);
				if (d != NULL && memcmp(d->uuid, a[j].uuid,
				    GF_UUID_LEN) == 0)
					l->context[i][ord] += a[j].size;
			}
		}
		free(a);
	}
	return rc;
}

/* The swaps gpufracd made lately (a process swapped in and out over and
 * over shows there). */
static int
swaps_look(const struct soak *s, struct look *l)
{
	struct gf_event *ev = NULL;
	struct timespec now;
	uint64_t since;
	size_t n = 0, i;

	if (ctl_query_events(s->sock, &ev, &n) < 0)
		return -1;
	clock_gettime(CLOCK_REALTIME, &now);
	since = (uint64_t)now.tv_sec * 1000 + (uint64_t)now.tv_nsec /
	    1000000 - LOOK_SWAPS_MS;
	for (i = 0; i < n; i++)
		if ((ev[i].kind == GF_EV_SWAP_OUT || ev[i].kind ==
		    GF_EV_SWAP_IN) && ev[i].time_ms >= since) {
			l->recent_swaps++;
			l->swap_pid = ev[i].pid;
			memcpy(l->swap_reason, ev[i].reason,
			    sizeof(l->swap_reason));
			l->swap_reason[sizeof(l->swap_reason) - 1] = '\0';
		}
	free(ev);
	return 0;
}

int
look_take(const struct soak *s, struct look *l)
{
	const struct gf_device_status *d;
	char u[UUID_STR_LEN];
	int ord, level = log_getlevel();

	memset(l, 0, sizeof(*l));
	if (nvml_open(s) < 0)
		return -1;
	for (ord = 0; ord < SOAK_NDEV; ord++)
		if (driver_look(l, ord) < 0) {
			log_warnx("the simulated NVML cannot say what "
			    "device %d holds", ord);
			return -1;
		}
	log_setlevel(-1);	/* a client just gone is not an error */
	if (ctl_query_status(s->sock, &l->st) < 0 ||
	    ctl_query_ps(s->sock, &l->ps, &l->nps) < 0 ||
	    contexts_look(s, l) < 0 || swaps_look(s, l) < 0) {
		log_setlevel(level);
		return -1;
	}
	log_setlevel(level);
	for (ord = 0; ord < SOAK_NDEV; ord++) {
		if ((d = look_device(l, ord)) == NULL ||
		    strcmp(uuid_format(d->uuid, u, sizeof(u)), l->uuid[ord])) {
			log_warnx("gpufracd's device %d is not the "
			    "driver's '%s'", ord, l->uuid[ord]);
			return -1;
		}
	}
	return 0;
}

void
look_free(struct look *l)
{
	int ord;

	ctl_status_free(&l->st);
	free(l->ps);
	for (ord = 0; ord < SOAK_MAX_DEV; ord++)
		free(l->procs[ord]);
	memset(l, 0, sizeof(*l));
}

const struct gf_device_status *
look_device(const struct look *l, int ord)
{
	size_t i;

	for (i = 0; i < l->st.ndevices; i++)
		if (l->st.devices[i].index == (uint32_t)ord)
			return &l->st.devices[i];
	return NULL;
}

const struct gf_client *
look_client(const struct look *l, pid_t pid, int ord)
{
	const struct gf_device_status *d = look_device(l, ord);
	size_t i;

	for (i = 0; d != NULL && i < l->nps; i++)
		if (l->ps[i].pid == (uint32_t)pid &&
		    memcmp(l->ps[i].uuid, d->uuid, GF_UUID_LEN) == 0)
			return &l->ps[i];
	return NULL;
}

uint64_t
look_driver_proc(const struct look *l, pid_t pid, int ord)
{
	unsigned i;

	for (i = 0; i < l->nprocs[ord]; i++)
		if (l->procs[ord][i].pid == (unsigned)pid)
			return l->procs[ord][i].usedGpuMemory;
	return 0;
}
