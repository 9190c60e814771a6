/*
 * Waits drawn at random around their mean (jitter.h says why).
 */
#include <stdint.h>
#include <stdlib.h>

#include "jitter.h"

uint64_t
jitter_ms(uint64_t ms)
{
	if (ms < 2 || ms >= UINT32_MAX)
		return ms;
	return ms / 2 + arc4random_uniform((uint32_t)ms + 1);
}
