/*
 * For the simulator's check programs: a fresh simulated machine of their
 * own, which the children they start share, and its end. Include after
 * check.h.
 */
#ifndef GF_TEST_MACHINE_H
#define GF_TEST_MACHINE_H

#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static char machine_path[160];	/* its segment */

/*
 * A fresh machine of these devices (SIMCUDA_DEVICES): named
 * $SIMCUDA_STATE, or PREFIX-PID exported for the children; its segment
 * removed first. CUDA_VISIBLE_DEVICES and SIMCUDA_CONTEXT_BYTES unset.
 */
static void
machine_start(const char *prefix, const char *devices)
{
	static char state[128];
	const char *name = getenv("SIMCUDA_STATE");

	if (name == NULL || *name == '\0') {
		snprintf(state, sizeof(state), "%s-%d", prefix, (int)getpid());
		name = state;
		setenv("SIMCUDA_STATE", name, 1);
	}
	snprintf(machine_path, sizeof(machine_path), "/dev/shm/simcuda-%s",
	    name);
	unlink(machine_path);
	setenv("SIMCUDA_DEVICES", devices, 1);
	unsetenv("CUDA_VISIBLE_DEVICES");
	unsetenv("SIMCUDA_CONTEXT_BYTES");
}

/*
 * Release device 0's primary context, remove the machine and say how
 * many checks failed. Returns the exit status: 1 if any failed, else 0.
 */
static int
machine_end(void)
{
	OK(cuDevicePrimaryCtxRelease_v2(0));
	unlink(machine_path);
	if (failures != 0)
		printf("%d check(s) failed\n", failures);
	return failures != 0;
}

#endif
