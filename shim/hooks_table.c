/*
 * The hook table: one entry per ABI in hooks_list.h, in its order (name,
 * then version, then per-thread variant; tests/unit/test_shim_table.c
 * checks it). An entry without a function marks a newer ABI left unhooked.
 */
#include "hooks.h"

const struct procaddr hooks_table[] = {
#define HOOK_ABI(name, version, ptds, symbol) \
	{ name, version, ptds, #symbol, (void *)symbol },
#define GATE_ABI(name, version, ptds, symbol, flag, params, args) \
	{ name, version, ptds, #symbol, (void *)symbol },
#define GATE_OWN_ABI(name, version, symbol, real, params, args) \
	{ name, version, 0, #symbol, (void *)symbol },
#define NEWER(name, version, symbol) \
	{ name, version, 0, #symbol, NULL },
#include "hooks_list.h"
};

const size_t hooks_table_len = sizeof(hooks_table) / sizeof(hooks_table[0]);
