/*
 * Inside the ledger: what ledger.c and ledger_lend.c share. Not for other
 * modules.
 */
#ifndef GF_DAEMON_LEDGER_INT_H
#define GF_DAEMON_LEDGER_INT_H

#include <stddef.h>
#include <stdint.h>

#include "ledger.h"

/*
 * What group may take on dev, borrowing unused guarantees or not, where
 * spare bytes of the charges on it would be given back first.
 */
uint64_t ledger_available_as(const struct ledger *l, size_t group,
	    size_t dev, int borrow, uint64_t spare);

#endif
