/*
 * The program's retains of each device's primary context, counted as the
 * hooks see them: whether a release will leave the context active, known
 * before the driver is asked (the driver says it only after the fact,
 * cuDevicePrimaryCtxGetState), so that such a release lists nothing the
 * context holds (hooks_ctx.c). Thread-safe; on no fast path.
 *
 * The count is never above the driver's: a retain is counted once the
 * driver has made it, a release before the driver is asked; the shim's
 * own retains (the copy engine's, hooks_ctx.c's look at the context) and
 * any made where no hook sees are not in it. Releases through the hooks
 * are made one at a time (under the free lock, client_end_keys), so that
 * a count of two or more when one is taken down means the driver's
 * stays above zero.
 */
#ifndef GF_SHIM_CTX_RETAIN_H
#define GF_SHIM_CTX_RETAIN_H

/* The driver retained dev's primary context for the program. */
void		ctx_retained(int dev);
/* Whether a release of dev's now would leave it active (looked at, not
   taken: ctx_release_begin decides). */
int		ctx_release_may_keep(int dev);
/*
 * A release of dev's is about to be asked of the driver: the count is
 * taken down by one (not below 0), and its value before returned (2 or
 * more: the context stays active).
 */
unsigned	ctx_release_begin(int dev);
/* The driver refused that release: the count as it was (before). */
void		ctx_release_undo(int dev, unsigned before);
/* In a fork child: the contexts are the parent's. */
void		ctx_retain_fork_child(void);

#endif
