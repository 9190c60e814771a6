/*
 * The shim's start-up (init.c): the one file that knows every layer, and
 * wires them.
 */
#ifndef GF_SHIM_INIT_H
#define GF_SHIM_INIT_H

/*
 * Once, on the first hooked call, inside the hooks' guard (what it calls
 * is not hooked): reads the environment, finds the driver, installs the
 * fork handlers and the callbacks. 1: the hooks do their work; 0: every
 * call passes straight to the driver (no driver, GPUFRAC_DISABLE=1).
 * Contacts no one: the client connects on its first request.
 */
int	init_shim(void);

#endif
