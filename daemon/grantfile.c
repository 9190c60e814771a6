/*
 * The grants' file (grantfile.h): its layout, read at start, made anew,
 * mapped, and its slots written in place.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "grantfile.h"
#include "log.h"
#include "proto.h"

#define GRANTFILE_MAGIC		"GFGRANTS"
#define GRANTFILE_FIRST		64	/* slots in a new file */
#define GRANTFILE_MAX_SLOTS	(1u << 20)
#define GRANTFILE_MAX_DEVICES	1024
#define SLOT_WORDS		3	/* per device: granted, lease, context */

/* The header; the devices' UUIDs follow it, then the slots. */
struct gf_head {
	char		magic[8];
	uint32_t	version;
	uint32_t	ndevices;
	uint32_t	slot_size;
	uint32_t	nslots;
	uint64_t	slots_at;	/* offset of slot 0 */
	uint64_t	alive_ms;	/* the writer's last sign of life,
					   ms since boot */
	uint8_t		boot[GF_UUID_LEN];	/* which boot */
};

/* A slot's head; per device its granted, lease and context bytes
 * follow, then the checksum of all of it (the generation too). */
struct gf_slot {
	uint32_t	gen;		/* odd while written */
	uint32_t	pid;		/* 0: free */
	uint64_t	start_ms;
	uint32_t	flags;
	uint32_t	pad;
};

static size_t
slot_size(size_t ndevices)
{
	return sizeof(struct gf_slot) + ndevices * SLOT_WORDS *
	    sizeof(uint64_t) +
	    sizeof(uint64_t);
}

static size_t
slots_at(size_t ndevices)
{
	size_t n = sizeof(struct gf_head) + ndevices * GF_UUID_LEN;

	return (n + 63) & ~(size_t)63;
}

/* FNV-1a over 64-bit words: n is a multiple of 8. */
static uint64_t
checksum(const uint8_t *p, size_t n)
{
	uint64_t h = 0xcbf29ce484222325ull, w;
	size_t i;

	for (i = 0; i < n; i += sizeof(w)) {
		memcpy(&w, p + i, sizeof(w));
		h = (h ^ w) * 0x100000001b3ull;
	}
	return h;
}

/*
 * A slot's checksum: all of it but the generation (whose parity says
 * whether it is whole) and the checksum itself.
 */
static uint64_t
slot_sum(const uint8_t *s, size_t size)
{
	uint32_t pid;

	memcpy(&pid, s + offsetof(struct gf_slot, pid), sizeof(pid));
	return checksum(s + offsetof(struct gf_slot, start_ms), size -
	    offsetof(struct gf_slot, start_ms) - sizeof(uint64_t)) ^
	    ((uint64_t)pid << 32);
}

/* ---- reading the previous file ------------------------------------------ */

/*
 * Whether the directory of path is the daemon's (or root's), and nobody
 * else may put a file in the grants' place there: not writable by group
 * or others, unless sticky (they may then add files, not replace its).
 */
static int
dir_owned(const char *path, char *why, size_t whylen)
{
	char dir[PATH_MAX];
	struct stat st;

	proto_strlcpy(dir, path, sizeof(dir));
	if (stat(dirname(dir), &st) < 0) {
		snprintf(why, whylen, "cannot read the directory of '%s': %s",
		    path, strerror(errno));
		return 0;
	}
	if ((st.st_uid != geteuid() && st.st_uid != 0) ||
	    ((st.st_mode & 022) && !(st.st_mode & S_ISVTX))) {
		snprintf(why, whylen, "the directory of '%s' is not gpufracd's "
		    "own (owner %u, mode %04o): others may replace the file",
		    path, (unsigned)st.st_uid, (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

/* Whether the file open on fd is the daemon's own to believe. */
static int
file_owned(int fd, const char *path, char *why, size_t whylen)
{
	struct stat st;

	if (!dir_owned(path, why, whylen))
		return 0;
	if (fstat(fd, &st) < 0) {
		snprintf(why, whylen, "cannot read '%s': %s", path,
		    strerror(errno));
		return 0;
	}
	if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077)) {
		snprintf(why, whylen, "'%s' is not gpufracd's own (owner %u, "
		    "mode %04o)", path, (unsigned)st.st_uid,
		    (unsigned)(st.st_mode & 07777));
		return 0;
	}
	return 1;
}

/* The file's header, checked against its size and this boot: 0, or -1
 * with why. */
static int
head_check(const struct gf_head *h, size_t size,
    const uint8_t boot[GF_UUID_LEN], char *why, size_t whylen)
{
	if (size < sizeof(*h) || memcmp(h->magic, GRANTFILE_MAGIC, 8) != 0) {
		snprintf(why, whylen, "the grants' file is not one");
		return -1;
	}
	if (h->version != GRANTFILE_VERSION) {
		snprintf(why, whylen, "the grants' file is of layout version "
		    "%u, not %u", h->version, GRANTFILE_VERSION);
		return -1;
	}
	if (h->ndevices > GRANTFILE_MAX_DEVICES ||
	    h->slot_size != slot_size(h->ndevices) ||
	    h->slots_at != slots_at(h->ndevices) ||
	    h->nslots > GRANTFILE_MAX_SLOTS ||
	    h->slots_at + (uint64_t)h->nslots * h->slot_size > size) {
		snprintf(why, whylen, "the grants' file's header does not fit "
		    "its size");
		return -1;
	}
	if (memcmp(h->boot, boot, GF_UUID_LEN) != 0) {
		snprintf(why, whylen, "the grants' file was written before "
		    "the machine last started");
		return -1;
	}
	return 0;
}

static int
rec_alloc(struct grant_rec *r, size_t ndevices)
{
	r->granted = calloc(ndevices ? ndevices : 1, sizeof(*r->granted));
	r->lease = calloc(ndevices ? ndevices : 1, sizeof(*r->lease));
	r->context = calloc(ndevices ? ndevices : 1, sizeof(*r->context));
	return r->granted != NULL && r->lease != NULL && r->context != NULL ?
	    0 : -1;
}

/* Where the file's device d is among the daemon's, or -1. */
static long
device_of(const uint8_t *fuuid, const uint8_t (*uuids)[GF_UUID_LEN],
    size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (memcmp(fuuid, uuids[i], GF_UUID_LEN) == 0)
			return (long)i;
	return -1;
}

/* One slot into rd: a record, a loss, or nothing. -1: ENOMEM. */
static int
slot_read(const uint8_t *map, const struct gf_head *h, uint32_t i,
    const uint8_t (*uuids)[GF_UUID_LEN], size_t ndevices,
    struct grant_read *rd)
{
	const uint8_t *s = map + h->slots_at + (size_t)i * h->slot_size;
	const uint8_t *fuuids = map + sizeof(*h);
	struct gf_slot head;
	struct grant_rec *r;
	uint64_t sum, v[SLOT_WORDS];
	uint32_t d;
	long to;

	memcpy(&head, s, sizeof(head));
	if (head.pid == 0)
		return 0;
	memcpy(&sum, s + h->slot_size - sizeof(sum), sizeof(sum));
	if ((head.gen & 1) || sum != slot_sum(s, h->slot_size)) {
		rd->lost[rd->nlost].pid = head.pid;
		rd->lost[rd->nlost++].why = (head.gen & 1) ? "its record was "
		    "torn, half written when its daemon died" : "its record "
		    "does not match its checksum";
		return 0;
	}
	/* Counted first: grant_read_free frees what one half-made holds. */
	r = &rd->recs[rd->nrecs++];
	if (rec_alloc(r, ndevices) < 0)
		return -1;
	r->pid = head.pid;
	r->start_ms = head.start_ms;
	r->flags = head.flags;
	for (d = 0; d < h->ndevices; d++) {
		if ((to = device_of(fuuids + (size_t)d * GF_UUID_LEN, uuids,
		    ndevices)) < 0)
			continue;
		memcpy(v, s + sizeof(head) + (size_t)d * sizeof(v),
		    sizeof(v));
		r->granted[to] = v[0];
		r->lease[to] = v[1];
		r->context[to] = v[2];
	}
	return 0;
}

static int
rec_cmp(const void *x, const void *y)
{
	const struct grant_rec *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	return a->start_ms < b->start_ms ? -1 : a->start_ms > b->start_ms;
}

static void
rec_free(struct grant_rec *r)
{
	free(r->granted);
	free(r->lease);
	free(r->context);
}

/*
 * Two records of one process (pid and start): no daemon writes that, and
 * which is its own cannot be told: neither is believed (ordered by pid).
 */
static void
dups_lose(struct grant_read *rd)
{
	size_t i, j, n = 0;

	qsort(rd->recs, rd->nrecs, sizeof(*rd->recs), rec_cmp);
	for (i = 0; i < rd->nrecs; i = j) {
		for (j = i + 1; j < rd->nrecs &&
		    rec_cmp(&rd->recs[i], &rd->recs[j]) == 0; j++)
			;
		if (j == i + 1) {
			rd->recs[n++] = rd->recs[i];
			continue;
		}
		for (; i < j; i++) {
			rd->lost[rd->nlost].pid = rd->recs[i].pid;
			rd->lost[rd->nlost++].why = "two records of one process";
			rec_free(&rd->recs[i]);
		}
	}
	rd->nrecs = n;
}

/* Read the previous file's records into rd (empty if none). */
static int
file_read(const char *path, const uint8_t boot[GF_UUID_LEN],
    const uint8_t (*uuids)[GF_UUID_LEN], size_t ndevices,
    struct grant_read *rd)
{
	const struct gf_head *h;
	struct stat st;
	uint8_t *map;
	uint32_t i;
	int fd, rc = 0;

	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
		if ((rd->left = errno != ENOENT))
			snprintf(rd->why, sizeof(rd->why), "cannot read '%s': "
			    "%s", path, strerror(errno));
		else
			snprintf(rd->why, sizeof(rd->why), "no earlier daemon "
			    "left '%s'", path);
		return 0;
	}
	rd->left = 1;
	if (!file_owned(fd, path, rd->why, sizeof(rd->why)) ||
	    fstat(fd, &st) < 0)
		goto out_close;
	if ((size_t)st.st_size < sizeof(*h)) {
		snprintf(rd->why, sizeof(rd->why), "the grants' file is not "
		    "one");
		goto out_close;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		snprintf(rd->why, sizeof(rd->why), "cannot map '%s': %s",
		    path, strerror(errno));
		goto out_close;
	}
	h = (const struct gf_head *)map;
	if (head_check(h, (size_t)st.st_size, boot, rd->why,
	    sizeof(rd->why)) < 0)
		goto out_unmap;
	rd->recs = calloc(h->nslots ? h->nslots : 1, sizeof(*rd->recs));
	rd->lost = calloc(h->nslots ? h->nslots : 1, sizeof(*rd->lost));
	if (rd->recs == NULL || rd->lost == NULL)
		goto out_nomem;
	for (i = 0; i < h->nslots; i++)
		if (slot_read(map, h, i, uuids, ndevices, rd) < 0)
			goto out_nomem;
	dups_lose(rd);
	rd->whole = 1;
	rd->alive_ms = h->alive_ms;
	goto out_unmap;

out_nomem:
	snprintf(rd->why, sizeof(rd->why), "no memory to read '%s'", path);
	rc = -1;
out_unmap:
	munmap(map, (size_t)st.st_size);
out_close:
	close(fd);
	return rc;
}

void
grant_read_free(struct grant_read *rd)
{
	size_t i;

	for (i = 0; i < rd->nrecs; i++)
		rec_free(&rd->recs[i]);
	free(rd->recs);
	free(rd->lost);
	rd->recs = NULL;
	rd->lost = NULL;
	rd->nrecs = rd->nlost = 0;
}

/* ---- the new file ------------------------------------------------------- */

static struct gf_head *
head_of(const struct grantfile *gf)
{
	return (struct gf_head *)gf->map;
}

/*
 * Whether records are kept: a file mapped. (Not its descriptor: an
 * arbiter made without grantfile_open, zeroed, has fd 0 and no map.)
 */
static int
recording(const struct grantfile *gf)
{
	return gf->map != NULL;
}

static uint8_t *
slot_at(const struct grantfile *gf, uint32_t i)
{
	const struct gf_head *h = head_of(gf);

	return gf->map + h->slots_at + (size_t)i * h->slot_size;
}

/* Room for n slots in all: the file, its mapping, the free list. */
static int
file_grow(struct grantfile *gf, uint32_t n)
{
	size_t size = slots_at(gf->ndevices) + (size_t)n *
	    slot_size(gf->ndevices);
	uint32_t *free_;
	void *map;
	uint32_t i;

	if (n > GRANTFILE_MAX_SLOTS || ftruncate(gf->fd, (off_t)size) < 0)
		return -1;
	map = gf->map == NULL ? mmap(NULL, size, PROT_READ | PROT_WRITE,
	    MAP_SHARED, gf->fd, 0) : mremap(gf->map, gf->size, size,
	    MREMAP_MAYMOVE);
	if (map == MAP_FAILED)
		return -1;
	gf->map = map;
	gf->size = size;
	if ((free_ = reallocarray(gf->free, n, sizeof(*free_))) == NULL)
		return -1;
	gf->free = free_;
	/* The lowest first: a small file stays dense. */
	for (i = n; i > gf->nslots; i--)
		gf->free[gf->nfree++] = i - 1;
	gf->nslots = n;
	head_of(gf)->nslots = n;
	return 0;
}

/* The new file at tmp: header and devices, n slots. */
static int
file_make(struct grantfile *gf, const char *tmp,
    const uint8_t boot[GF_UUID_LEN], const uint8_t (*uuids)[GF_UUID_LEN],
    uint32_t n)
{
	struct gf_head *h;

	if ((gf->fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_NOFOLLOW |
	    O_CLOEXEC, 0600)) < 0)
		return -1;
	if (fchmod(gf->fd, 0600) < 0 || file_grow(gf, n) < 0)
		return -1;
	h = head_of(gf);
	memcpy(h->magic, GRANTFILE_MAGIC, 8);
	h->version = GRANTFILE_VERSION;
	h->ndevices = (uint32_t)gf->ndevices;
	h->slot_size = (uint32_t)slot_size(gf->ndevices);
	h->slots_at = slots_at(gf->ndevices);
	memcpy(h->boot, boot, GF_UUID_LEN);
	memcpy(gf->map + sizeof(*h), uuids, gf->ndevices * GF_UUID_LEN);
	return 0;
}

int
grantfile_open(struct grantfile *gf, const char *path,
    const uint8_t boot[GF_UUID_LEN], const uint8_t (*uuids)[GF_UUID_LEN],
    size_t ndevices, struct grant_read *rd, char *err, size_t errlen)
{
	char tmp[PATH_MAX];
	uint32_t n = GRANTFILE_FIRST;
	size_t i;

	memset(gf, 0, sizeof(*gf));
	gf->fd = -1;
	gf->ndevices = ndevices;
	memset(rd, 0, sizeof(*rd));
	if (file_read(path, boot, uuids, ndevices, rd) < 0)
		log_warnx("%s", rd->why);
	while (n < rd->nrecs * 2)
		n *= 2;
	if (strlen(path) >= sizeof(gf->path) ||
	    snprintf(tmp, sizeof(tmp), "%s.new", path) >= (int)sizeof(tmp)) {
		snprintf(err, errlen, "the grants' file's path is too long: "
		    "'%s'", path);
		goto out_fail;
	}
	if (file_make(gf, tmp, boot, uuids, n) < 0)
		goto out_errno;
	proto_strlcpy(gf->path, path, sizeof(gf->path));
	/* The records come first: a daemon killed now leaves the old. */
	for (i = 0; i < rd->nrecs; i++) {
		rd->recs[i].slot = grantfile_slot(gf);
		grantfile_put(gf, rd->recs[i].slot, &rd->recs[i]);
	}
	if (rename(tmp, path) < 0)
		goto out_errno;
	return 0;

out_errno:
	snprintf(err, errlen, "cannot make '%s': %s", tmp, strerror(errno));
	(void)unlink(tmp);
out_fail:
	grantfile_close(gf);
	for (i = 0; i < rd->nrecs; i++)
		rd->recs[i].slot = UINT32_MAX;
	return -1;
}

void
grantfile_close(struct grantfile *gf)
{
	if (gf->map != NULL)
		munmap(gf->map, gf->size);
	if (gf->fd >= 0)
		close(gf->fd);
	free(gf->free);
	gf->map = NULL;
	gf->free = NULL;
	gf->fd = -1;
	gf->nslots = gf->nfree = 0;
}

/* ---- slots -------------------------------------------------------------- */

uint32_t
grantfile_slot(struct grantfile *gf)
{
	if (!recording(gf))
		return UINT32_MAX;
	if (gf->nfree == 0 && file_grow(gf, gf->nslots * 2) < 0) {
		log_warn("cannot grow '%s' past %u records: what more "
		    "processes are granted is not recorded", gf->path,
		    gf->nslots);
		return UINT32_MAX;
	}
	return gf->free[--gf->nfree];
}

/*
 * The generation is odd from the first store to the last: a daemon
 * killed in between leaves it odd. The stores stay in the mapping's
 * pages when the process dies; only their order matters, the
 * compiler's (release stores).
 */
void
grantfile_put(struct grantfile *gf, uint32_t slot, const struct grant_rec *r)
{
	uint8_t *s;
	struct gf_slot *head;
	uint64_t *v, sum;
	size_t d, n;

	if (!recording(gf) || slot >= gf->nslots)
		return;
	s = slot_at(gf, slot);
	head = (struct gf_slot *)s;
	__atomic_store_n(&head->gen, head->gen | 1, __ATOMIC_RELEASE);
	head->pid = r->pid;
	head->start_ms = r->start_ms;
	head->flags = r->flags;
	v = (uint64_t *)(head + 1);
	for (d = 0; d < gf->ndevices; d++) {
		v[SLOT_WORDS * d] = r->granted[d];
		v[SLOT_WORDS * d + 1] = r->lease[d];
		v[SLOT_WORDS * d + 2] = r->context[d];
	}
	n = slot_size(gf->ndevices);
	sum = slot_sum(s, n);
	memcpy(s + n - sizeof(sum), &sum, sizeof(sum));
	__atomic_store_n(&head->gen, head->gen + 1, __ATOMIC_RELEASE);
}

void
grantfile_alive(struct grantfile *gf, uint64_t boot_ms)
{
	if (recording(gf))
		__atomic_store_n(&head_of(gf)->alive_ms, boot_ms,
		    __ATOMIC_RELAXED);
}

void
grantfile_release(struct grantfile *gf, uint32_t slot)
{
	struct gf_slot *head;

	if (!recording(gf) || slot >= gf->nslots)
		return;
	head = (struct gf_slot *)slot_at(gf, slot);
	__atomic_store_n(&head->pid, 0, __ATOMIC_RELEASE);
	gf->free[gf->nfree++] = slot;
}
