/*
 * The decision log's entries about a client (decision.h): who, in which
 * group, on which device, as the ledger knows them, handed to events.c.
 */
#include <stdarg.h>

#include "arbiter.h"
#include "decision.h"
#include "events.h"
#include "ledger.h"

static void
decision_vevent(struct arbiter *a, uint32_t kind,
    const struct ledger_client *lc, int dev, uint64_t bytes,
    uint32_t duration_ms, const char *fmt, va_list ap)
{
	events_vadd(&a->events, events_wall_ms(), kind, lc ? lc->pid : 0,
	    lc ? a->ledger.groups[lc->group].pol.name : NULL,
	    dev >= 0 ? a->ledger.devices[dev].uuid : NULL, bytes,
	    duration_ms, fmt, ap);
}

void
decision_event(struct arbiter *a, uint32_t kind,
    const struct ledger_client *lc, int dev, uint64_t bytes,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	decision_vevent(a, kind, lc, dev, bytes, 0, fmt, ap);
	va_end(ap);
}

void
decision_event_timed(struct arbiter *a, uint32_t kind,
    const struct ledger_client *lc, uint64_t bytes, uint32_t duration_ms,
    const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	decision_vevent(a, kind, lc, -1, bytes, duration_ms, fmt, ap);
	va_end(ap);
}
