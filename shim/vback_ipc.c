/*
 * Legacy IPC of the copy engine's memory (vback_ipc.h): handles of the
 * shim's own for backed allocations, made in the exporter and opened in
 * the importer, and the importer's table of what it opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "ptrmap.h"
#include "real.h"
#include "vback.h"
#include "vback_int.h"
#include "vback_ipc.h"

/* Linux 5.3 and 5.6, x86_64 and aarch64 alike (asm-generic numbers). */
#ifndef SYS_pidfd_open
#define SYS_pidfd_open		434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd		438
#endif

#define VBACK_IPC_MAGIC	0x3163706962766667ull	/* "gfvbipc1" */

/*
 * The handle, in the driver's 64 opaque bytes. Both ends are the same
 * machine and the same shim: host byte order. The zeros and the
 * exporter's address make a driver's handle taken for one unlikely.
 *
 * The descriptor's number alone would name whatever the exporter opens
 * next under it once the memory is freed (issue 33): the importer reads
 * the export's nonce in the exporter after taking the descriptor, and
 * the exporter clears it before closing that descriptor, so that a
 * handle of freed memory is refused, as the driver refuses its own.
 */
struct vback_ipc_handle {
	uint64_t	magic;		/* VBACK_IPC_MAGIC */
	int32_t		pid;		/* the exporter */
	int32_t		fd;		/* its descriptor of the memory */
	uint64_t	held;		/* the mapping's size */
	uint64_t	offset;		/* of the exported pointer in it */
	uint64_t	ptr;		/* the mapping in the exporter */
	uint64_t	nonce;		/* the export's (struct vback) ... */
	uint64_t	at;		/* ... at this address in the exporter */
	uint8_t		zero[8];
};

_Static_assert(sizeof(struct vback_ipc_handle) == CU_IPC_HANDLE_SIZE,
    "a legacy IPC handle is 64 bytes");

/* What this process opened, by the pointer it returned. */
struct vback_import {
	CUdeviceptr	va;		/* the reservation */
	uint64_t	held;
	CUmemGenericAllocationHandle h;
};

static pthread_mutex_t import_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ptrmap import_map;
static size_t import_count;	/* in the map: 0 spares a close the lock */

/* The backed allocation holding p, or NULL; vback_lock held. */
static struct vback *
vback_containing(CUdeviceptr p)
{
	struct vback *v;
	uint64_t key;
	size_t pos = 0;

	if ((v = ptrmap_get(&vback_map, p)) != NULL)
		return v;
	while ((v = ptrmap_next(&vback_map, &pos, &key)) != NULL)
		if (p > v->ptr && p - v->ptr < v->size)
			return v;
	return NULL;
}

/*
 * A nonce never given before in this process, nor 0: a random start, so
 * that memory freed and reused holds it only by a 2^-64 chance.
 */
static uint64_t
vback_ipc_nonce(void)
{
	static uint64_t next;
	uint64_t n;

	if (next == 0 && getrandom(&next, sizeof(next), 0) !=
	    (ssize_t)sizeof(next))
		next = (uint64_t)getpid() << 32 ^ (uint64_t)time(NULL);
	if ((n = ++next) == 0)
		n = ++next;
	return n;
}

/* Keep v's memory open as a descriptor for importers; vback_lock held. */
static CUresult
vback_export(struct vback *v)
{
	CUresult r;
	int fd;

	if (v->exported)
		return CUDA_SUCCESS;
	if (v->h == 0)		/* out: the gates keep callers from this */
		return CUDA_ERROR_INVALID_VALUE;
	if ((r = REAL_CALL(cuMemExportToShareableHandle, &fd, v->h,
	    CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)) != CUDA_SUCCESS)
		return r;
	/* The program's own exec'd children have no use for it. */
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	v->ipc_fd = fd;
	v->ipc_nonce = vback_ipc_nonce();
	__atomic_store_n(&v->exported, 1, __ATOMIC_RELEASE);
	return CUDA_SUCCESS;
}

int
vback_ipc_get(CUipcMemHandle *out, CUdeviceptr dptr, CUresult *r)
{
	struct vback_ipc_handle h;
	struct vback *v;

	if (__atomic_load_n(&vback_count, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&vback_lock);
	if ((v = vback_containing(dptr)) == NULL) {
		pthread_mutex_unlock(&vback_lock);
		return 0;
	}
	*r = out == NULL ? CUDA_ERROR_INVALID_VALUE : vback_export(v);
	if (*r == CUDA_SUCCESS) {
		memset(&h, 0, sizeof(h));
		h.magic = VBACK_IPC_MAGIC;
		h.pid = (int32_t)getpid();
		h.fd = v->ipc_fd;
		h.held = v->held;
		h.offset = dptr - v->ptr;
		h.ptr = v->ptr;
		h.nonce = v->ipc_nonce;
		h.at = (uint64_t)(uintptr_t)&v->ipc_nonce;
		memcpy(out, &h, sizeof(h));
	}
	pthread_mutex_unlock(&vback_lock);
	return 1;
}

static int
vback_ipc_ours(const struct vback_ipc_handle *h)
{
	static const uint8_t zero[sizeof(h->zero)];

	return h->magic == VBACK_IPC_MAGIC && h->pid > 0 && h->fd >= 0 &&
	    h->held != 0 && h->offset < h->held && h->nonce != 0 &&
	    memcmp(h->zero, zero, sizeof(zero)) == 0;
}

/*
 * Whether the export h names is still the exporter's, read there after
 * its descriptor was taken: the exporter clears the nonce before it
 * closes the descriptor, so a nonce read after says the descriptor taken
 * before was the export's. Unreadable (unmapped, freed): stale.
 */
static int
vback_ipc_current(const struct vback_ipc_handle *h)
{
	struct iovec local, remote;
	uint64_t n = 0;

	local.iov_base = &n;
	local.iov_len = sizeof(n);
	remote.iov_base = (void *)(uintptr_t)h->at;
	remote.iov_len = sizeof(n);
	return process_vm_readv((pid_t)h->pid, &local, 1, &remote, 1, 0) ==
	    (ssize_t)sizeof(n) && n == h->nonce;
}

/*
 * The exporter's descriptor, as one of ours, or -1 and the answer in *r:
 * CUDA_ERROR_INVALID_HANDLE when the exporter or its export is gone
 * (exited, freed), CUDA_ERROR_MAP_FAILED when it may not be taken.
 */
static int
vback_ipc_fetch(const struct vback_ipc_handle *h, CUresult *r)
{
	static int said;
	int pidfd, fd, e;

	if ((pidfd = (int)syscall(SYS_pidfd_open, (pid_t)h->pid, 0)) < 0) {
		e = errno;
		goto out_fail;
	}
	fd = (int)syscall(SYS_pidfd_getfd, pidfd, h->fd, 0);
	e = errno;
	(void)close(pidfd);
	if (fd >= 0 && vback_ipc_current(h))
		return fd;
	if (fd >= 0) {
		(void)close(fd);
		e = ESRCH;
	}
out_fail:
	if (e == ESRCH || e == EBADF) {
		*r = CUDA_ERROR_INVALID_HANDLE;
		return -1;
	}
	*r = CUDA_ERROR_MAP_FAILED;
	if (!__atomic_exchange_n(&said, 1, __ATOMIC_RELAXED))
		log_errx("cannot take IPC memory of pid %d: %s (pidfd_getfd "
		    "needs permission to ptrace it)", (int)h->pid, strerror(e));
	return -1;
}

/* Import fd's memory and map it for device dev at a new range in *m. */
static CUresult
vback_ipc_map(int fd, CUdevice dev, struct vback_import *m)
{
	CUmemAccessDesc acc;
	CUresult r;

	if ((r = REAL_CALL(cuMemImportFromShareableHandle, &m->h,
	    (void *)(intptr_t)fd, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR)) !=
	    CUDA_SUCCESS)
		return r;
	if ((r = REAL_CALL(cuMemAddressReserve, &m->va, m->held, 0, 0, 0)) !=
	    CUDA_SUCCESS)
		goto out_release;
	if ((r = real_cu.cuMemMap(m->va, m->held, 0, m->h, 0)) !=
	    CUDA_SUCCESS)
		goto out_va;
	memset(&acc, 0, sizeof(acc));
	acc.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	acc.location.id = dev;
	acc.flags = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
	if ((r = REAL_CALL(cuMemSetAccess, m->va, m->held, &acc, 1)) ==
	    CUDA_SUCCESS)
		return CUDA_SUCCESS;
	(void)real_cu.cuMemUnmap(m->va, m->held);
out_va:
	(void)REAL_CALL(cuMemAddressFree, m->va, m->held);
out_release:
	(void)real_cu.cuMemRelease(m->h);
	return r;
}

static CUresult
vback_import(const struct vback_ipc_handle *h, CUdeviceptr *pdptr)
{
	struct vback_import *m;
	CUdevice dev;
	CUresult r;
	int fd;

	if (real_cu.cuMemMap == NULL || real_cu.cuMemUnmap == NULL ||
	    real_cu.cuMemRelease == NULL)
		return CUDA_ERROR_NOT_SUPPORTED;
	if ((r = REAL_CALL(cuCtxGetDevice, &dev)) != CUDA_SUCCESS)
		return r;
	if ((m = calloc(1, sizeof(*m))) == NULL)
		return CUDA_ERROR_OUT_OF_MEMORY;
	m->held = h->held;
	if ((fd = vback_ipc_fetch(h, &r)) < 0)
		goto out_free;
	r = vback_ipc_map(fd, dev, m);
	(void)close(fd);		/* the imported handle holds it */
	if (r != CUDA_SUCCESS)
		goto out_free;
	pthread_mutex_lock(&import_lock);
	if (ptrmap_put(&import_map, m->va + h->offset, m) < 0) {
		pthread_mutex_unlock(&import_lock);
		r = CUDA_ERROR_OUT_OF_MEMORY;
		goto out_unmap;
	}
	__atomic_add_fetch(&import_count, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&import_lock);
	*pdptr = m->va + h->offset;
	return CUDA_SUCCESS;
out_unmap:
	(void)real_cu.cuMemUnmap(m->va, m->held);
	(void)REAL_CALL(cuMemAddressFree, m->va, m->held);
	(void)real_cu.cuMemRelease(m->h);
out_free:
	free(m);
	return r;
}

int
vback_ipc_open(CUdeviceptr *pdptr, const CUipcMemHandle *handle,
    CUresult *r)
{
	struct vback_ipc_handle h;

	memcpy(&h, handle, sizeof(h));
	if (!vback_ipc_ours(&h))
		return 0;
	*r = pdptr == NULL ? CUDA_ERROR_INVALID_VALUE : vback_import(&h, pdptr);
	return 1;
}

int
vback_ipc_close(CUdeviceptr dptr, CUresult *r)
{
	struct vback_import *m;

	if (__atomic_load_n(&import_count, __ATOMIC_RELAXED) == 0)
		return 0;
	pthread_mutex_lock(&import_lock);
	if ((m = ptrmap_del(&import_map, dptr)) != NULL)
		__atomic_sub_fetch(&import_count, 1, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&import_lock);
	if (m == NULL)
		return 0;
	(void)real_cu.cuMemUnmap(m->va, m->held);
	(void)REAL_CALL(cuMemAddressFree, m->va, m->held);
	(void)real_cu.cuMemRelease(m->h);
	free(m);
	*r = CUDA_SUCCESS;
	return 1;
}

/* What the parent imported is its own (the child's driver starts anew). */
void
vback_ipc_fork_child(void)
{
	struct vback_import *m;
	size_t pos = 0;

	while ((m = ptrmap_next(&import_map, &pos, NULL)) != NULL)
		free(m);
	ptrmap_free(&import_map);
	ptrmap_init(&import_map);
	import_count = 0;
	pthread_mutex_init(&import_lock, NULL);
}
