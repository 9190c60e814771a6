/*
 * The connection caps, sized on the descriptors (conncaps.h). A uid past
 * max_connections_per_uid is refused, and so is anyone but root and
 * admin_group past total: a reserve of an eighth (CONNCAPS_RESERVE_MIN at
 * the least) stays theirs, so that a neighbour, or several, filling the
 * daemon's descriptors never makes it fail open for the others (a
 * connection it cannot take is a refusal, and the shim fails closed).
 */
#include "conncaps.h"

void
conncaps_size(uint64_t nofile, uint32_t configured, struct conncaps *caps)
{
	uint64_t conns = 0, reserve;

	if (nofile > CONNCAPS_OWN_FDS)
		conns = (nofile - CONNCAPS_OWN_FDS) / CONNCAPS_FDS_PER_CONN;
	if (conns > UINT32_MAX)
		conns = UINT32_MAX;
	reserve = conns / 8;
	if (reserve < CONNCAPS_RESERVE_MIN)
		reserve = CONNCAPS_RESERVE_MIN;
	if (reserve > conns)
		reserve = conns;
	caps->conns = (uint32_t)conns;
	caps->reserve = (uint32_t)reserve;
	caps->total = (uint32_t)(conns - reserve);
	caps->per_uid = caps->total / 2;
	if (configured != 0 && configured < caps->per_uid)
		caps->per_uid = configured;
}
