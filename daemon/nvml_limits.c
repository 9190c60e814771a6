/*
 * The driver's memory limits per cgroup (driver r615, CUDA 13.4): NVML's
 * nvmlDeviceSetMemoryLimits_v1, looked up by dlsym since a driver before
 * r615 has none. The types are written here as CUDA 13.4's nvml.h
 * declares them (the toolkit used here ships no nvml.h): nameSpace is the
 * full path of a cgroup v2 directory, and soft 0 with hard ULLONG_MAX
 * clears a limit (NVIDIA's "MPS v3 memory partitioning" guide).
 */
#include <stdio.h>
#include <unistd.h>

#include "nvml.h"
#include "nvml_limits.h"

#define NVML_SUCCESS			0
#define NVML_DEVICE_MIG_ENABLE		1

/* nvmlSetMemoryLimits_v1_t: 24 bytes on x86-64. */
struct nvml_set_limits {
	const char	*nameSpace;
	unsigned long long softLimit;
	unsigned long long hardLimit;
};
_Static_assert(sizeof(struct nvml_set_limits) == 24, "nvmlSetMemoryLimits_v1_t");

/* nvmlGetMemoryLimits_v1_t: 32 bytes on x86-64. */
struct nvml_get_limits {
	const char	*nameSpace;
	unsigned long long softLimit;
	unsigned long long hardLimit;
	unsigned long long currentUsed;
};
_Static_assert(sizeof(struct nvml_get_limits) == 32, "nvmlGetMemoryLimits_v1_t");

typedef int	(*set_fn)(void *, struct nvml_set_limits *);
typedef int	(*get_fn)(void *, struct nvml_get_limits *);
typedef int	(*mig_mode_fn)(void *, unsigned int *, unsigned int *);
typedef int	(*is_mig_fn)(void *, unsigned int *);
typedef const char *(*error_fn)(int);

int
nvml_limits_usable(size_t dev, char *why, size_t whylen)
{
	unsigned int current = 0, pending = 0, is_mig = 0;
	mig_mode_fn mig_mode;
	is_mig_fn mig_handle;
	void *h;

	if (!nvml_ready()) {
		snprintf(why, whylen, "no NVML");
		return 0;
	}
	if (nvml_symbol("nvmlDeviceSetMemoryLimits_v1") == NULL ||
	    nvml_symbol("nvmlDeviceGetMemoryLimits_v1") == NULL) {
		/* A driver before r615. */
		snprintf(why, whylen, "no such function in this driver");
		return 0;
	}
	if ((h = nvml_device(dev)) == NULL) {
		snprintf(why, whylen, "NVML does not know the device");
		return 0;
	}
	*(void **)&mig_handle = nvml_symbol("nvmlDeviceIsMigDeviceHandle");
	*(void **)&mig_mode = nvml_symbol("nvmlDeviceGetMigMode");
	/* The driver refuses MIG handles (and a GPU in MIG mode is used
	 * through them). */
	if ((mig_handle != NULL && mig_handle(h, &is_mig) == NVML_SUCCESS &&
	    is_mig) || (mig_mode != NULL && mig_mode(h, &current, &pending) ==
	    NVML_SUCCESS && current == NVML_DEVICE_MIG_ENABLE)) {
		snprintf(why, whylen, "MIG");
		return 0;
	}
	if (geteuid() != 0) {
		snprintf(why, whylen, "not root");
		return 0;
	}
	return 1;
}

/* NVML's word for r, into why. Returns -1. */
static int
limits_error(int r, char *why, size_t whylen)
{
	error_fn errstr;

	*(void **)&errstr = nvml_symbol("nvmlErrorString");
	snprintf(why, whylen, "%s (NVML error %d)", errstr != NULL ?
	    errstr(r) : "error", r);
	return -1;
}

/* NVML's function name and device dev's handle in *h: the function, or
 * NULL with why said. */
static void *
limits_fn(size_t dev, const char *name, void **h, char *why, size_t whylen)
{
	void *fn = nvml_symbol(name);

	if (fn == NULL || (*h = nvml_device(dev)) == NULL) {
		snprintf(why, whylen, "no such function");
		return NULL;
	}
	return fn;
}

int
nvml_limits_set(size_t dev, const char *dir, uint64_t soft, uint64_t hard,
    char *why, size_t whylen)
{
	struct nvml_set_limits l = { dir, soft, hard };
	set_fn set;
	void *h;
	int r;

	if ((*(void **)&set = limits_fn(dev, "nvmlDeviceSetMemoryLimits_v1",
	    &h, why, whylen)) == NULL)
		return -1;
	if ((r = set(h, &l)) == NVML_SUCCESS)
		return 0;
	return limits_error(r, why, whylen);
}

int
nvml_limits_get(size_t dev, const char *dir, uint64_t *soft, uint64_t *hard,
    uint64_t *used, char *why, size_t whylen)
{
	struct nvml_get_limits l = { dir, 0, 0, 0 };
	get_fn get;
	void *h;
	int r;

	if ((*(void **)&get = limits_fn(dev, "nvmlDeviceGetMemoryLimits_v1",
	    &h, why, whylen)) == NULL)
		return -1;
	if ((r = get(h, &l)) != NVML_SUCCESS)
		return limits_error(r, why, whylen);
	*soft = l.softLimit;
	*hard = l.hardLimit;
	*used = l.currentUsed;
	return 0;
}
