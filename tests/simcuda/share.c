/*
 * VMM allocations exported to other processes (vmm.c), in the segment:
 * who holds each, and whose charge it is until the last holder lets go
 * or dies.
 */
#include <string.h>

#include "segment.h"

/* Take slot out of sh's holders; whether others still hold it. */
static int
share_unhold(struct state_share *sh, int slot)
{
	int i, left = 0;

	for (i = 0; i < SHARE_HOLDERS; i++) {
		if (sh->holder[i] == slot + 1)
			sh->holder[i] = 0;
		else if (sh->holder[i] != 0)
			left = 1;
	}
	return left;
}

static int
share_held(const struct state_share *sh, int slot)
{
	int i;

	for (i = 0; i < SHARE_HOLDERS; i++)
		if (sh->holder[i] == slot + 1)
			return 1;
	return 0;
}

/*
 * Slot lets go of sh. The owner's charge leaves its slot: returned if no
 * one else holds sh, else orphaned. A dead owner's may have been parked
 * by a checkpoint; an orphan is back on the device.
 */
static void
share_leave(struct state_share *sh, int slot)
{
	struct state_proc *sp = &state_shm->procs[slot];
	int d = sh->phys, left = share_unhold(sh, slot);

	if (sh->owner == slot + 1) {
		if (sp->used[d] >= sh->bytes) {
			sp->used[d] -= sh->bytes;
			if (!left)
				state_shm->used[d] -= sh->bytes;
		} else if (sp->parked[d] >= sh->bytes) {
			sp->parked[d] -= sh->bytes;
			if (left)
				state_shm->used[d] += sh->bytes;
		}
		sh->owner = 0;
	} else if (!left && sh->owner == 0)
		state_shm->used[d] -= sh->bytes;
	if (!left)
		memset(sh, 0, sizeof(*sh));
}

void
share_drop_slot(int slot)
{
	struct state_share *sh;

	for (sh = state_shm->shares; sh < state_shm->shares + STATE_SHARES;
	    sh++)
		if (sh->ino != 0 && share_held(sh, slot))
			share_leave(sh, slot);
}

void
share_repair(void)
{
	struct state_share *sh;

	for (sh = state_shm->shares; sh < state_shm->shares + STATE_SHARES;
	    sh++)
		if (sh->ino != 0 && sh->owner == 0)
			state_shm->used[sh->phys] += sh->bytes;
}

static struct state_share *
share_find(uint64_t dev, uint64_t ino)
{
	struct state_share *sh;

	for (sh = state_shm->shares; sh < state_shm->shares + STATE_SHARES;
	    sh++)
		if (sh->ino == ino && sh->dev == dev)
			return sh;
	return NULL;
}

int
state_share_open(uint64_t dev, uint64_t ino, int phys, uint64_t bytes)
{
	struct state_share *sh;
	int slot, r = -1;

	if (ino == 0 || state_lock() < 0)
		return -1;
	if ((slot = state_self_get()) < 0)
		goto out;
	/* A record of this inode is a dead holder's, of a memfd since
	 * closed and its inode number reused. */
	if (share_find(dev, ino) != NULL)
		state_reap();
	if (share_find(dev, ino) != NULL || (sh = share_find(0, 0)) == NULL)
		goto out;
	sh->dev = dev;
	sh->ino = ino;
	sh->bytes = bytes;
	sh->phys = phys;
	sh->owner = slot + 1;
	sh->holder[0] = slot + 1;
	r = (int)(sh - state_shm->shares);
out:
	state_unlock();
	return r;
}

int
state_share_join(uint64_t dev, uint64_t ino, int *phys, uint64_t *bytes)
{
	struct state_share *sh;
	int slot, i, r = -1;

	if (ino == 0 || state_lock() < 0)
		return -2;
	if ((slot = state_self_get()) < 0) {
		r = -2;
		goto out;
	}
	if ((sh = share_find(dev, ino)) == NULL)
		goto out;
	r = -2;
	for (i = 0; i < SHARE_HOLDERS && !share_held(sh, slot); i++)
		if (sh->holder[i] == 0)
			sh->holder[i] = slot + 1;
	if (!share_held(sh, slot))
		goto out;
	*phys = sh->phys;
	*bytes = sh->bytes;
	r = (int)(sh - state_shm->shares);
out:
	state_unlock();
	return r;
}

void
state_share_leave(int share)
{
	struct state_share *sh;

	if (state_self_slot < 0 || share < 0 || share >= STATE_SHARES ||
	    state_lock() < 0)
		return;
	sh = &state_shm->shares[share];
	if (sh->ino != 0 && share_held(sh, state_self_slot))
		share_leave(sh, state_self_slot);
	state_unlock();
}
