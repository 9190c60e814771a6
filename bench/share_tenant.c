/*
 * share_tenant: one tenant of `make bench-share`, a CUDA program that
 * follows its demand trace. It reads the trace on stdin (share_trace.c's
 * lines), opens the driver as numba does (dlopen, dlsym: the preloaded
 * shim hands out its hooks), says "ready", and at the start time of the
 * "go T0" line runs the trace:
 *
 *   allocate its base; for each burst, at its due time (or at once when
 *   late): allocate it, work for its hold time (every 20 ms read back and
 *   rewrite the first 64 KiB of the burst and of the base through the
 *   driver, so a swapped-out tenant is brought back), free it;
 *   at the end free the base.
 *
 * An allocation refused with CUDA_ERROR_OUT_OF_MEMORY is counted and its
 * burst skipped: its work is lost, and the tenant idles through the time
 * the burst would have taken, so that its trace ends when due. Data
 * that comes back changed (after a swap, say) is an error. At the end it
 * prints one "result" line; its exit status is 0, or 1 on an error.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

#define WORK_MS		20
#define TOUCH_BYTES	(64u << 10)
#define CHECK_BYTES	4096u
#define BURSTS_MAX	128

typedef CUresult (*init_fn)(unsigned int);
typedef CUresult (*device_get_fn)(CUdevice *, int);
typedef CUresult (*retain_fn)(CUcontext *, CUdevice);
typedef CUresult (*set_current_fn)(CUcontext);
typedef CUresult (*alloc_fn)(CUdeviceptr *, size_t);
typedef CUresult (*free_fn)(CUdeviceptr);
typedef CUresult (*memset_fn)(CUdeviceptr, unsigned int, size_t);
typedef CUresult (*dtoh_fn)(void *, CUdeviceptr, size_t);

static struct {
	alloc_fn	 alloc;
	free_fn		 free;
	memset_fn	 memset32;
	dtoh_fn		 dtoh;
} cu;

struct burst {
	uint64_t	 start_ms, hold_ms, bytes;
};

/* A live allocation and the pattern it should hold. */
struct block {
	CUdeviceptr	 ptr;
	uint64_t	 bytes;
	uint32_t	 pattern;
};

/* What the tenant reports. */
static struct {
	uint64_t	 oom;
	uint64_t	 done;		/* bursts granted and worked */
	uint64_t	 in_driver_ns;	/* time inside driver calls */
	double		 work;		/* bytes x ms of the bursts done */
} res;

static void
sleep_until(uint64_t ns)
{
	struct timespec ts = { (time_t)(ns / 1000000000u),
	    (long)(ns % 1000000000u) };

	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) ==
	    EINTR)
		;
}

static void *
sym(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (p == NULL)
		fprintf(stderr, "share_tenant: libcuda.so.1 has no '%s'\n",
		    name);
	return p;
}

/* dlopen the driver, find what is used, make device 0's context current. */
static int
cuda_open(void)
{
	set_current_fn set_current;
	device_get_fn device_get;
	retain_fn retain;
	init_fn init;
	CUcontext ctx;
	CUdevice dev;
	void *h;

	if ((h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) == NULL) {
		fprintf(stderr, "share_tenant: cannot load libcuda.so.1: %s\n",
		    dlerror());
		return -1;
	}
	*(void **)&init = sym(h, "cuInit");
	*(void **)&device_get = sym(h, "cuDeviceGet");
	*(void **)&retain = sym(h, "cuDevicePrimaryCtxRetain");
	*(void **)&set_current = sym(h, "cuCtxSetCurrent");
	*(void **)&cu.alloc = sym(h, "cuMemAlloc_v2");
	*(void **)&cu.free = sym(h, "cuMemFree_v2");
	*(void **)&cu.memset32 = sym(h, "cuMemsetD32_v2");
	*(void **)&cu.dtoh = sym(h, "cuMemcpyDtoH_v2");
	if (init == NULL || device_get == NULL || retain == NULL ||
	    set_current == NULL || cu.alloc == NULL || cu.free == NULL ||
	    cu.memset32 == NULL || cu.dtoh == NULL)
		return -1;
	if (init(0) != CUDA_SUCCESS || device_get(&dev, 0) != CUDA_SUCCESS ||
	    retain(&ctx, dev) != CUDA_SUCCESS ||
	    set_current(ctx) != CUDA_SUCCESS) {
		fprintf(stderr, "share_tenant: cannot make device 0's context "
		    "current\n");
		return -1;
	}
	return 0;
}

/* A driver call that began at since has returned: count its time. */
static CUresult
timed(uint64_t since, CUresult r)
{
	res.in_driver_ns += harness_now_ns() - since;
	return r;
}

static size_t
touch_len(const struct block *b)
{
	return b->bytes < TOUCH_BYTES ? (size_t)b->bytes : TOUCH_BYTES;
}

/* Write b's pattern over the part of it that is worked on. 0 or -1. */
static int
block_write(struct block *b)
{
	uint64_t t = harness_now_ns();
	CUresult r = timed(t, cu.memset32(b->ptr, b->pattern,
	    touch_len(b) / 4));

	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "share_tenant: cuMemsetD32: error %d\n",
		    (int)r);
		return -1;
	}
	return 0;
}

/*
 * Allocate b->bytes and write its pattern. 0; 1: out of memory (counted);
 * -1: another error.
 */
static int
block_alloc(struct block *b, uint32_t pattern)
{
	uint64_t t;
	CUresult r;

	b->ptr = 0;
	t = harness_now_ns();
	r = timed(t, cu.alloc(&b->ptr, b->bytes));
	if (r == CUDA_ERROR_OUT_OF_MEMORY) {
		res.oom++;
		return 1;
	}
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "share_tenant: cuMemAlloc of %" PRIu64
		    " bytes: error %d\n", b->bytes, (int)r);
		return -1;
	}
	b->pattern = pattern;
	return block_write(b);
}

static int
block_free(struct block *b)
{
	uint64_t t;
	CUresult r;

	if (b->ptr == 0)
		return 0;
	t = harness_now_ns();
	r = timed(t, cu.free(b->ptr));
	b->ptr = 0;
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "share_tenant: cuMemFree: error %d\n", (int)r);
		return -1;
	}
	return 0;
}

/* Work: read back what was written, check it, write the next pattern. */
static int
block_touch(struct block *b)
{
	static uint32_t buf[CHECK_BYTES / 4];
	size_t n = touch_len(b) < CHECK_BYTES ? touch_len(b) : CHECK_BYTES;
	uint64_t t;
	size_t i;
	CUresult r;

	if (b->ptr == 0)
		return 0;
	t = harness_now_ns();
	if ((r = timed(t, cu.dtoh(buf, b->ptr, n))) != CUDA_SUCCESS) {
		fprintf(stderr, "share_tenant: cuMemcpyDtoH: error %d\n",
		    (int)r);
		return -1;
	}
	for (i = 0; i < n / 4; i++)
		if (buf[i] != b->pattern) {
			fprintf(stderr, "share_tenant: data changed in device "
			    "memory: 0x%08x at word %zu, not 0x%08x\n",
			    buf[i], i, b->pattern);
			return -1;
		}
	b->pattern = b->pattern * 1664525u + 1013904223u;
	return block_write(b);
}

/* One burst, due at t0 + its start. 0 or -1. */
static int
burst_run(const struct burst *bu, uint64_t t0, struct block *base,
    uint32_t pattern)
{
	struct block b = { .bytes = bu->bytes };
	uint64_t end, now;
	int r;

	sleep_until(t0 + bu->start_ms * 1000000u);
	if ((r = block_alloc(&b, pattern)) < 0)
		return -1;
	if (r > 0) {
		/* Out of memory: the work is lost, the time still passes. */
		sleep_until(t0 + (bu->start_ms + bu->hold_ms) * 1000000u);
		return 0;
	}
	end = harness_now_ns() + bu->hold_ms * 1000000u;
	for (;;) {
		if (block_touch(&b) < 0 || block_touch(base) < 0)
			goto out_free;
		if ((now = harness_now_ns()) >= end)
			break;
		sleep_until(end - now < WORK_MS * 1000000u ? end :
		    now + WORK_MS * 1000000u);
	}
	res.done++;
	res.work += (double)bu->bytes * (double)bu->hold_ms;
	return block_free(&b);

out_free:
	block_free(&b);
	return -1;
}

/* A number that must be all of s; 0 or -1. */
static int
number_parse(const char *s, uint64_t *v)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(s, &end, 10);
	if (end == s || *end != '\0' || errno == ERANGE || *s == '-')
		return -1;
	*v = n;
	return 0;
}

/* A line of words, split in place; the number of words (at most max). */
static int
words(char *line, char **w, int max)
{
	char *save = NULL, *tok;
	int n = 0;

	for (tok = strtok_r(line, " \n", &save); tok != NULL && n < max;
	    tok = strtok_r(NULL, " \n", &save))
		w[n++] = tok;
	return n;
}

/* The trace on stdin up to "end"; 0 or -1. */
static int
trace_read(uint64_t *base, struct burst *b, size_t *nb)
{
	char line[128], *w[5];
	int n;

	*nb = 0;
	while (fgets(line, sizeof(line), stdin) != NULL) {
		n = words(line, w, 5);
		if (n == 1 && strcmp(w[0], "end") == 0)
			return 0;
		if (n == 2 && strcmp(w[0], "base") == 0 &&
		    number_parse(w[1], base) == 0)
			continue;
		if (n == 4 && strcmp(w[0], "burst") == 0 && *nb < BURSTS_MAX &&
		    number_parse(w[1], &b[*nb].start_ms) == 0 &&
		    number_parse(w[2], &b[*nb].hold_ms) == 0 &&
		    number_parse(w[3], &b[*nb].bytes) == 0 &&
		    b[*nb].bytes > 0) {
			(*nb)++;
			continue;
		}
		fprintf(stderr, "share_tenant: bad trace line '%s'\n", w[0]);
		return -1;
	}
	fprintf(stderr, "share_tenant: the trace ended without 'end'\n");
	return -1;
}

/* "go T0": the start, CLOCK_MONOTONIC nanoseconds; 0 or -1. */
static int
go_read(uint64_t *t0)
{
	char line[64], *w[3];

	if (fgets(line, sizeof(line), stdin) == NULL ||
	    words(line, w, 3) != 2 || strcmp(w[0], "go") != 0 ||
	    number_parse(w[1], t0) < 0) {
		fprintf(stderr, "share_tenant: expected 'go T0' on stdin\n");
		return -1;
	}
	return 0;
}

int
main(void)
{
	static struct burst bursts[BURSTS_MAX];
	struct block base = { 0 };
	uint64_t t0;
	size_t nb, i;
	int rc = 1;

	if (trace_read(&base.bytes, bursts, &nb) < 0 || cuda_open() < 0)
		return 1;
	printf("ready\n");
	fflush(stdout);
	if (go_read(&t0) < 0)
		return 1;
	sleep_until(t0);
	if (base.bytes > 0 && block_alloc(&base, 0x5eed0000u) < 0)
		goto out;
	for (i = 0; i < nb; i++)
		if (burst_run(&bursts[i], t0, &base,
		    0xb0000000u + (uint32_t)i) < 0)
			goto out;
	if (block_free(&base) < 0)
		goto out;
	rc = 0;
out:
	printf("result %s oom=%" PRIu64 " done=%" PRIu64 " driver_ns=%" PRIu64
	    " end_ns=%" PRIu64 " work=%.0f\n", rc == 0 ? "ok" : "error",
	    res.oom, res.done, res.in_driver_ns, harness_now_ns(), res.work);
	fflush(stdout);
	return rc;
}
