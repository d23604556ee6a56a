/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The inline half of promote.c: what every job's path and every idle
 * round does to a worker's latent frames.
 */
#ifndef _BLITZ_PROMOTE_H
#define _BLITZ_PROMOTE_H

#include "blitz.h"

/*
 * A job run on top of the worker's stack (by the main loop, a waiting
 * joiner or a waiting caller, a waiting group) starts a segment of its
 * own: promotions while it runs reach only its frames, not the latent
 * frames of the joins it runs on top of (promote.c, P1). Returns what
 * blitz_segment_close() restores. Inline: it is on every job's path.
 */
static inline unsigned int blitz_segment_open(struct blitz_worker *w)
{
	unsigned int published = READ_ONCE(w->forks.published);

	/* The usual case: nothing latent, nothing to hide. */
	if (likely(published == w->forks.depth))
		return published;
	return __blitz_segment_open(w);
}

static inline void blitz_segment_close(struct blitz_worker *w,
				       unsigned int published)
{
	WRITE_ONCE(w->forks.published, published);
}

/*
 * The worker starts looking for work: it has no frames, nobody need ask
 * it, and its timer must not fire for an idle worker. An asker that saw
 * it busy, or a thief of its last job, may still store a request after
 * this: it stays until the worker's next fork (one promotion) or idle,
 * and arms no timer. Inline, as blitz_share_busy(): a worker goes idle
 * and busy again for every burst it drains.
 */
static inline void blitz_share_idle(struct blitz_worker *w)
{
	/* Idle first: a request's interrupt work arms no timer then. */
	WRITE_ONCE(w->busy, false);
	if (READ_ONCE(w->forks.share))
		__blitz_share_idle(w);
}

/*
 * The worker leaves the idle loop with a job; @c is the counter word its
 * leaving left. With others inactive, it will share after one interval.
 */
static inline void blitz_share_busy(struct blitz_worker *w, u64 c)
{
	WRITE_ONCE(w->busy, true);
	if (blitz_inactive(c) && !READ_ONCE(w->forks.share))
		WRITE_ONCE(w->forks.share, BLITZ_SHARE_COLD);
}

#endif /* _BLITZ_PROMOTE_H */
