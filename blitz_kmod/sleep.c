// SPDX-License-Identifier: GPL-2.0
/*
 * The sleep protocol: when an idle worker may sleep, and whom a poster
 * wakes. Rayon's (rayon-core/src/sleep) on kernel primitives: the packed
 * counter word with its jobs event counter (JEC), the core latch, a
 * sleepers bitmap and a swait queue per worker; progressive sleep over 33
 * idle rounds, and wake throttling as in Go's spinning threads. The steps
 * and the argument: Documentation/blitz/design.rst, "Idle rounds and
 * sleeping" through "Why no wake-up is lost".
 */
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/swait.h>

#include "blitz.h"
#include "sleep.h"

#define BLITZ_ROUNDS_UNTIL_SLEEPY	32
#define BLITZ_ROUNDS_UNTIL_SLEEPING	(BLITZ_ROUNDS_UNTIL_SLEEPY + 1)

/*
 * Whether any job is queued in @pool: the sleeper's last look (step 5).
 * Not from the queued bitmap, which lags a first add; it marks what it finds.
 */
bool blitz_has_work(struct blitz_pool *pool)
{
	unsigned int i, n = blitz_nr_slots(pool);
	struct blitz_worker *w;

	for (i = 0; i < n; i++) {
		w = pool->workers[i];
		if (!blitz_inject_empty(&w->inject)) {
			blitz_inject_mark(pool->queued, i);
			return true;
		}
		if (!blitz_deque_empty(&w->deque))
			return true;
	}
	return false;
}

static void blitz_idle_enter(struct blitz_worker *w)
{
	preempt_disable();
	blitz_add_inactive(&w->pool->counters);
	blitz_cm_looking(w, true);
	preempt_enable();
}

void blitz_idle_start(struct blitz_worker *w, struct blitz_idle *idle)
{
	idle->rounds = 0;
	blitz_idle_enter(w);
}

static void blitz_wake_one(struct blitz_pool *pool, unsigned int near);

/**
 * blitz_idle_handoff - wake a sleeper if the last idle worker left work
 * @pool: its pool
 * @c: the counter word its fully ordered decrement of the idle count left
 * @near: the worker to wake first
 *
 * Context: any.
 */
void blitz_idle_handoff(struct blitz_pool *pool, u64 c, unsigned int near)
{
	if (blitz_sleeping(c) && !blitz_awake_idle(c) && blitz_has_work(pool))
		blitz_wake_one(pool, near);
}

/*
 * A looking worker is active again, with a job or not: the wake cascade
 * ("The wake cascade and throttling"). A poster may have counted on it and
 * woken nobody, so the last looker wakes a sleeper for what is left.
 * Returns the counter word as the decrement left it.
 *
 * The fully ordered decrement pairs with the poster's smp_mb() or llist_add()
 * (litmus/idle-leave-poster.litmus, litmus/idle-leave-last.litmus).
 */
u64 blitz_idle_work_found(struct blitz_worker *w)
{
	u64 c;

	preempt_disable();
	c = blitz_sub_inactive(&w->pool->counters);
	blitz_cm_looking(w, false);
	preempt_enable();
	blitz_idle_handoff(w->pool, c, w->index + 1);
	return c;
}

/*
 * Bound to this CPU, a yielding worker cannot look for work: it leaves the
 * idle count first, so that no poster counts on it.
 */
static void blitz_idle_yield(struct blitz_worker *w)
{
	blitz_race_window(BLITZ_RACE_IDLE_YIELD);
	if (!need_resched())
		return;
	blitz_idle_work_found(w);
	cond_resched();
	blitz_idle_enter(w);
}

/*
 * Who clears @i's bit subtracts it from the sleeping count. The fully ordered
 * clear follows the count (litmus/sleeper-bit-claim.litmus).
 */
static bool blitz_claim_sleeper(struct blitz_pool *pool, unsigned int i)
{
	if (!test_and_clear_bit(i, pool->sleepers))
		return false;
	blitz_sub_sleeping(&pool->counters);
	return true;
}

/* Whether a waker claimed @w and is done subtracting it. */
static bool blitz_was_woken(struct blitz_worker *w)
{
	/*
	 * Pairs with smp_store_release() in blitz_wake_worker(), after its
	 * subtraction (litmus/woken-sleeper-finds.litmus).
	 */
	return smp_load_acquire(&w->woken);
}

/* Step 6: what ends the wait. */
static bool blitz_sleep_over(struct blitz_worker *w, struct blitz_latch *latch)
{
	return blitz_was_woken(w) || blitz_latch_probe(latch);
}

/*
 * swait_event_idle_exclusive(), freezable: the freezer freezes a worker
 * of a freezable pool asleep here, and the thaw wakes it to test again
 * (a wake-up meanwhile is not lost). Others have PF_NOFREEZE.
 */
#define blitz_swait(w, condition)					\
	((void)___swait_event((w)->idle_wait, condition,		\
			      (TASK_IDLE | TASK_FREEZABLE), 0, schedule()))

static void blitz_sleep(struct blitz_worker *w, struct blitz_idle *idle,
			struct blitz_latch *latch)
{
	struct blitz_pool *pool = w->pool;
	u64 c;

	if (!blitz_latch_get_sleepy(latch))
		return;
	if (!blitz_latch_fall_asleep(latch)) {
		idle->rounds = 0;
		return;
	}

	/*
	 * The cmpxchg and the poster's JEC update are fully ordered: one of us
	 * sees the other (litmus/jec-sleepy-poster.litmus).
	 */
	do {
		c = blitz_counters_load(&pool->counters);
		if (blitz_jec(c) != idle->jec) {
			/*
			 * Posted since sleepy: look again, after the latch's
			 * cmpxchg (litmus/jec-moved-look-again.litmus).
			 */
			idle->rounds = BLITZ_ROUNDS_UNTIL_SLEEPY;
			blitz_latch_wake_up(latch);
			return;
		}
	} while (!blitz_try_add_sleeping(&pool->counters, c));
	blitz_race_window(BLITZ_RACE_SLEEP_BITMAP);
	set_bit(w->index, pool->sleepers);
	blitz_race_window(BLITZ_RACE_SLEEP_LOOK);

	/*
	 * Pairs with the poster's smp_mb() or llist_add() after queueing
	 * (litmus/poster-sleeper-deque.litmus,
	 * litmus/poster-sleeper-inject.litmus,
	 * litmus/poster-sleeper-bitmap.litmus,
	 * litmus/poster-bitmap-empty.litmus), and with blitz_latch_set()
	 * before the stopper reads our bit (litmus/stop-sleeper-bitmap.litmus).
	 */
	smp_mb__after_atomic();
	if (!blitz_has_work(pool) && !blitz_sleep_over(w, latch)) {
		blitz_stat_inc(w, BLITZ_STAT_SLEEPS);
		trace_blitz_sleep(pool->name, w->index);
		/* A dozing spare is also woken when its worker runs (cm.c). */
		if (w->spare)
			blitz_spare_doze(w, true);
		blitz_swait(w, blitz_sleep_over(w, latch) ||
			    (w->spare && blitz_spare_surplus(w)));
		if (w->spare)
			blitz_spare_doze(w, false);
		blitz_stat_inc(w, BLITZ_STAT_WAKEUPS);
	}
	/* Take our bit back, or wait for its claimant's subtraction. */
	if (!blitz_claim_sleeper(pool, w->index))
		blitz_swait(w, blitz_was_woken(w));
	WRITE_ONCE(w->woken, false);

	idle->rounds = 0;
	blitz_latch_wake_up(latch);
}

/*
 * One idle round found no work. Polls only while the CPU has nothing else
 * to run: a waiting task is often the submitter of the next job.
 */
void blitz_idle_no_work_found(struct blitz_worker *w, struct blitz_idle *idle,
			      struct blitz_latch *latch)
{
	/* Ask for latent frames; not every round: asks write others' lines. */
	if (!idle->rounds || idle->rounds == BLITZ_ROUNDS_UNTIL_SLEEPY)
		blitz_ask_busy(w);
	if (idle->rounds < BLITZ_ROUNDS_UNTIL_SLEEPY) {
		if (single_task_running()) {
			cpu_relax();
			blitz_idle_yield(w);
			idle->rounds++;
		} else {
			idle->rounds = BLITZ_ROUNDS_UNTIL_SLEEPY;
		}
	} else if (idle->rounds == BLITZ_ROUNDS_UNTIL_SLEEPY) {
		idle->jec = blitz_jec(blitz_increment_jec_if_active(&w->pool->counters));
		blitz_idle_yield(w);
		idle->rounds++;
	} else {
		blitz_sleep(w, idle, latch);
	}
}

/*
 * Wake @w if it is asleep in the protocol; whether it was. Preemption off:
 * the sleeper may be waiting for ->woken. Any context.
 */
bool blitz_wake_worker(struct blitz_worker *w)
{
	bool woke;

	preempt_disable();
	woke = blitz_claim_sleeper(w->pool, w->index);
	if (woke) {
		trace_blitz_wake(w->pool->name, w->index);
		/*
		 * Pairs with smp_load_acquire() in blitz_was_woken()
		 * (litmus/woken-sleeper-finds.litmus).
		 */
		smp_store_release(&w->woken, true);
		swake_up_one(&w->idle_wait);
	}
	preempt_enable();
	return woke;
}

/* Wake a sleeper among workers [@from, @to); whether one was. */
static bool blitz_wake_range(struct blitz_pool *pool, unsigned int from,
			     unsigned int to)
{
	unsigned int i;

	for (i = blitz_next_sleeper(pool, from, to); i < to;
	     i = blitz_next_sleeper(pool, i + 1, to))
		if (blitz_wake_worker(pool->workers[i]))
			return true;
	return false;
}

/* Wake a sleeper, the first from worker @near on, wrapping around. */
static void blitz_wake_one(struct blitz_pool *pool, unsigned int near)
{
	unsigned int n = blitz_nr_slots(pool);

	near %= n;
	if (!blitz_wake_range(pool, near, n))
		blitz_wake_range(pool, 0, near);
}

/*
 * __blitz_new_jobs() found a sleeper: wake one, @near first, if no awake
 * idle worker will find the job. Any context.
 */
void blitz_wake_for_job(struct blitz_pool *pool, unsigned int near)
{
	unsigned int idle;
	u64 c;

	c = blitz_increment_jec_if_sleepy(&pool->counters);
	if (!blitz_sleeping(c))
		return;
	idle = blitz_awake_idle(c);
	/* Our CPU's worker, woken for a job, cannot run before we stop. */
	near %= blitz_nr_slots(pool);
	if (idle && blitz_woken_behind_us(pool->workers[near]))
		idle--;
	if (!idle)
		blitz_wake_one(pool, near);
}

/*
 * Jobs injected at worker @near have waited over a tick (blitz_inject()):
 * wake a sleeper, @near first, even if workers are counted awake and idle.
 * Only ever an extra wake-up: the posts that counted on them stand. Any
 * context.
 */
void blitz_wake_stale(struct blitz_pool *pool, unsigned int near)
{
	unsigned int n = blitz_nr_slots(pool);

	if (blitz_next_sleeper(pool, 0, n) < n)
		blitz_wake_one(pool, near);
}

/**
 * blitz_latch_sleep - sleep until a latch is set, or there is work
 * @w: the worker waiting, or NULL for a task that is not one
 * @latch: the latch
 * @ready: if not NULL, do not sleep while ready(@arg) says there is work
 * @arg: its argument
 * @state: the task state to sleep in
 *
 * For joiners and callers: busy, not idle, so outside the sleep protocol.
 * Woken by the latch's setter or by whoever made @ready true and kicked the
 * latch. May return early: callers look again and call it again.
 */
void blitz_latch_sleep(struct blitz_worker *w, struct blitz_latch *latch,
		       bool (*ready)(void *arg), void *arg, unsigned int state)
{
	if (!blitz_latch_get_sleepy(latch))
		return;
	/*
	 * The state before the fall: a setter that sees SLEEPING wakes us.
	 * get_sleepy() pairs with the full barrier before a kick
	 * (litmus/share-kick-joiner.litmus).
	 */
	set_current_state(state);
	if ((!ready || !ready(arg)) &&
	    blitz_latch_fall_asleep(latch)) {
		if (w)
			blitz_stat_inc(w, BLITZ_STAT_SLEEPS);
		schedule();
		if (w)
			blitz_stat_inc(w, BLITZ_STAT_WAKEUPS);
	}
	__set_current_state(TASK_RUNNING);
	blitz_latch_wake_up(latch);
}
