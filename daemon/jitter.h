/*
 * Periods nobody can time (issue 38, D): a look that comes at a fixed
 * interval after the last one can be learnt by any user (a 2 MiB probe
 * shows when) and memory held between two looks goes unseen. Each wait is
 * drawn anew, uniformly, from the kernel's random source (arc4random,
 * glibc >= 2.36), never from rand() seeded by the clock.
 */
#ifndef GF_DAEMON_JITTER_H
#define GF_DAEMON_JITTER_H

#include <stdint.h>

/* A wait of mean ms: uniform in [ms/2, ms*3/2]. */
uint64_t jitter_ms(uint64_t ms);

#endif
