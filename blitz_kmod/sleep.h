/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The posting half of the sleep protocol (sleep.c): after queueing a
 * job, wake a sleeper if one is needed to find it. Rayon's
 * Sleep::new_jobs(). Inline: it is on every submit's path.
 */
#ifndef _BLITZ_SLEEP_H
#define _BLITZ_SLEEP_H

#include "blitz.h"

/*
 * The first worker in [@from, @to) in the sleepers bitmap, or @to. A bit
 * it misses was set after the caller's barrier, by a sleeper whose last
 * look comes after that.
 */
static inline unsigned int blitz_next_sleeper(struct blitz_pool *pool,
					      unsigned int from,
					      unsigned int to)
{
	return blitz_next_bit(pool->sleepers, from, to);
}

/*
 * A job was queued on worker @near's deque or injection list, with a full
 * barrier after: wake a sleeper if one is needed to find it (see
 * blitz_wake_for_job()). Any context.
 *
 * The barrier orders the queueing before our reads of the bitmap and the
 * counters. It pairs with smp_mb__after_atomic() in blitz_sleep(), step 5,
 * and with the fully ordered decrement in blitz_idle_work_found().
 * (litmus/poster-sleeper-*.litmus, litmus/idle-leave-*.litmus)
 *
 * Nobody in the bitmap, nobody to wake: a worker that counted itself, or
 * is only sleepy, sets its bit before its last look, which sees our job
 * (litmus/poster-bitmap-empty.litmus). The bitmap changes only when a
 * worker sleeps or is woken; the counter word, whenever one starts or
 * stops looking for work: a stream of posts to busy workers reads only
 * the bitmap.
 *
 * Someone in the bitmap, but two awake idle workers or more, and no
 * sleepy JEC to bump: blitz_wake_for_job() would read the same and wake
 * nobody. That is the steady state of posts while some worker sleeps and
 * others, woken, wait for their CPUs; it stays here, without a call.
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
	/* The barrier __blitz_new_jobs() needs: see there. */
	smp_mb();
	__blitz_new_jobs(pool, near);
}

/*
 * Whether worker @w was woken but cannot run before we stop: it is homed
 * on our CPU, where a task runs (we, or the task we interrupted), and has
 * not taken its wake-up yet. It counts as an awake idle worker, but it
 * will not look for work until then. Any context.
 */
static inline bool blitz_woken_behind_us(struct blitz_worker *w)
{
	return w->cpu == raw_smp_processor_id() && !blitz_on_idle_task() &&
	       READ_ONCE(w->woken);
}

#endif /* _BLITZ_SLEEP_H */
