/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The posting half of the sleep protocol (sleep.c), Rayon's
 * Sleep::new_jobs(); inline, on every submit's path. See
 * Documentation/blitz/design.rst, "Posting jobs: the wake decision".
 */
#ifndef _BLITZ_SLEEP_H
#define _BLITZ_SLEEP_H

#include "blitz.h"

/* The first worker in [@from, @to) in the sleepers bitmap, or @to. */
static inline unsigned int blitz_next_sleeper(struct blitz_pool *pool,
					      unsigned int from,
					      unsigned int to)
{
	return blitz_next_bit(pool->sleepers, from, to);
}

/*
 * A job was queued on worker @near's deque or injection list, with a full
 * barrier after: wake a sleeper if one is needed to find it. Any context.
 * The barrier pairs with smp_mb__after_atomic() in blitz_sleep() and the
 * fully ordered decrement in blitz_idle_work_found()
 * (litmus/poster-sleeper-*.litmus, litmus/idle-leave-*.litmus).
 * An empty bitmap needs no wake: a sleeper sets its bit before its last
 * look (litmus/poster-bitmap-empty.litmus). The bitmap comes first: unlike
 * the counter word, it stays put while workers start and stop looking.
 */
static inline void __blitz_new_jobs(struct blitz_pool *pool,
				    unsigned int near)
{
	unsigned int n = blitz_nr_slots(pool);
	u64 c;

	if (blitz_next_sleeper(pool, 0, n) == n)
		return;
	c = blitz_counters_load(&pool->counters);
	if (!blitz_jec_is_sleepy(blitz_jec(c)) &&
	    (!blitz_sleeping(c) || blitz_awake_idle(c) > 1))
		return;
	blitz_wake_for_job(pool, near);
}

/* As __blitz_new_jobs(), after a queueing that was not fully ordered. */
static inline void blitz_new_jobs(struct blitz_pool *pool, unsigned int near)
{
	/* Pairs as described at __blitz_new_jobs(). */
	smp_mb();
	__blitz_new_jobs(pool, near);
}

/*
 * Whether @w, counted awake and idle, was woken on our CPU and cannot look
 * for work until the task here (we, or the one we interrupted) stops.
 */
static inline bool blitz_woken_behind_us(struct blitz_worker *w)
{
	return w->cpu == raw_smp_processor_id() && !blitz_on_idle_task() &&
	       READ_ONCE(w->woken);
}

#endif /* _BLITZ_SLEEP_H */
