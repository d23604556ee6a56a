// SPDX-License-Identifier: GPL-2.0
/*
 * The sleep protocol: when an idle worker may sleep, and whom a job poster
 * wakes. It follows Rayon's (rayon-core/src/sleep), on kernel primitives:
 * the pool's packed counter word (counters.h), a bitmap of the workers a
 * waker can find asleep, and a simple wait queue (swait) per worker.
 *
 * An idle worker goes through rounds: each round looks for work once
 * (worker.c) and, finding none, calls blitz_idle_no_work_found():
 *
 *   rounds 0..31  look again, yielding the CPU if asked, out of the idle
 *                 count (skipped when another task is runnable here)
 *   round 32      announce sleepy: make the JEC even if it was odd and
 *                 remember its value
 *   round 33      look once more
 *   then          sleep, unless the latch was set or the JEC moved
 *
 * Sleeping, on the worker's stop latch (joiners and callers sleep on their
 * own latches, outside the protocol; see the end):
 *
 *   1. latch UNSET -> SLEEPY               (fails if set: back to work)
 *   2. latch SLEEPY -> SLEEPING            (fails if set: back to work)
 *   3. if the JEC moved since round 32, a job was posted that our last
 *      look may have missed: latch -> UNSET, back to round 32;
 *      else cmpxchg sleeping += 1 (retry if the word changed)
 *   4. set our bit in the pool's sleepers bitmap: wakers can find us
 *   5. smp_mb(), then look at every deque and injection queue, with
 *      interrupts on; if one is not empty, do not sleep
 *   6. else wait in TASK_IDLE on our swait queue until a waker says it
 *      woke us, or the latch is set
 *   7. take our bit back if it is still set; if a waker took it, wait
 *      until it says so
 *
 * A poster (blitz_new_jobs()) with nobody in the bitmap has nobody to
 * wake, and returns. Else it makes the JEC odd if it was even and reads
 * the counts from the same atomic operation. If no awake idle worker is
 * left to find its jobs, it wakes sleepers: it finds them in the bitmap
 * without a lock and claims each with test_and_clear_bit(); a claimant
 * subtracts the sleeper from the sleeping count, then sets its woken flag
 * and swake_up_one()s its queue. Whoever clears the bit, a waker or the
 * sleeper itself in step 7, subtracts, so exactly once per count; and the
 * bit is set after the count (litmus/sleeper-bit-claim.litmus). A worker
 * is counted without its bit between steps 3 and 4, awake, before its
 * last look: a poster that sees it counted but not in the bitmap has its
 * job seen by that look (litmus/poster-sleeper-bitmap.litmus); and
 * between a claim of its bit and the claimant's subtraction: it looks
 * again after that (litmus/woken-sleeper-finds.litmus). Pool
 * destruction sets the stop latch and wakes the worker only if it was
 * SLEEPING and in the bitmap; if it was not in the bitmap yet, step 6 sees
 * the latch set (litmus/stop-sleeper-bitmap.litmus).
 *
 * Why nothing is lost. A poster that returns on an empty bitmap queued
 * its job before a sleeper's bit, and so before its last look
 * (litmus/poster-bitmap-empty.litmus). Otherwise: a job posted after a
 * worker announced sleepy makes the JEC differ from the worker's
 * snapshot, so step 3 catches it, or the poster's JEC update came after
 * the worker's cmpxchg in step 3, and then the poster sees the worker in
 * the sleeping count (litmus/jec-sleepy-poster.litmus). When the JEC was
 * already odd the poster only reads the word; then the two full barriers
 * decide: the poster's after the job is queued (smp_mb() in
 * blitz_new_jobs(), or the cmpxchg of llist_add()) and the one in step 5
 * after the sleeper is counted and its bit set. Either the poster sees the
 * sleeper, counted and in the bitmap, or the sleeper's last look, at every
 * deque and injection list, sees the job (litmus/poster-sleeper-*.litmus).
 * A poster that finds a counted sleeper already claimed by someone else
 * leaves its job to that sleeper, which looks again after its claimant's
 * subtraction (litmus/woken-sleeper-finds.litmus). Rayon skips the
 * barrier for jobs pushed on the poster's own deque, reasoning that the
 * owner runs them itself; a kernel job may block waiting for what it
 * submitted, so blitz does not.
 *
 * Wake throttling (the "waking thread" of kprotty's Zig pool, Go's
 * spinning threads): a poster wakes nobody while an awake idle worker is
 * looking for work, and of the workers that stop looking because they
 * found some, only the last one wakes a sleeper, and only if work is left.
 * So a burst of posts wakes one sleeper at a time, each woken once the
 * previous one found work. A batch of injected jobs pushed on a deque is
 * posted as one job, for the same reason.
 */
#include <linux/sched.h>
#include <linux/sched/stat.h>
#include <linux/swait.h>

#include "blitz.h"
#include "sleep.h"

#define BLITZ_ROUNDS_UNTIL_SLEEPY	32
#define BLITZ_ROUNDS_UNTIL_SLEEPING	(BLITZ_ROUNDS_UNTIL_SLEEPY + 1)

/*
 * Whether any job is queued anywhere in @pool: a sleeper's last look
 * (step 5), also the wake cascade's. It looks at every queue itself, not
 * at the queued bitmap, a hint that lags the first add to a queue; and
 * it marks a queue it finds jobs on, so that takers need not wait for
 * that add's producer (a vCPU its host may hold) to find them.
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

/* The worker is counted idle, and its notifier knows it (cm.c). */
static void blitz_idle_enter(struct blitz_worker *w)
{
	preempt_disable();
	blitz_add_inactive(&w->pool->counters);
	blitz_cm_looking(w, true);
	preempt_enable();
}

/* A worker starts looking for work: it becomes inactive. */
void blitz_idle_start(struct blitz_worker *w, struct blitz_idle *idle)
{
	idle->rounds = 0;
	blitz_idle_enter(w);
}

static void blitz_wake_one(struct blitz_pool *pool, unsigned int near);

/**
 * blitz_idle_handoff - an idle worker stopped looking: wake one if needed
 * @pool: its pool
 * @c: the counter word its fully ordered decrement of the idle count left
 * @near: the worker to wake first
 *
 * If it was the last awake idle worker and jobs are still queued, wake a
 * sleeper for them: see blitz_idle_work_found(). Any context.
 */
void blitz_idle_handoff(struct blitz_pool *pool, u64 c, unsigned int near)
{
	if (blitz_sleeping(c) && !blitz_awake_idle(c) && blitz_has_work(pool))
		blitz_wake_one(pool, near);
}

/*
 * A looking worker is active again, with a job or not (its latch was set,
 * or it is about to yield its CPU). If it was the last awake idle worker
 * and jobs are still queued, it wakes a sleeper for them: the wake cascade
 * that spreads a burst of work. That it found a job does not matter: a
 * poster may have counted on it as an awake idle worker and woken nobody,
 * so whatever it leaves behind needs a sleeper woken. While other awake
 * workers are still looking, they carry that duty on: the last one of
 * them to stop looking, or to sleep, sees the job. Returns the counter
 * word as the decrement left it.
 *
 * The fully ordered decrement in blitz_sub_inactive() and the poster's
 * barrier after its queueing (smp_mb() in blitz_new_jobs(), or the
 * cmpxchg of llist_add() before __blitz_new_jobs()) pair: a poster that
 * saw us, or any idle worker the decrement leaves counted, still looking,
 * and so woke nobody, queued its job before the decrement, and
 * blitz_has_work() sees it (litmus/idle-leave-poster.litmus,
 * litmus/idle-leave-last.litmus).
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
 * An idle worker gives its CPU to another task. Bound to this CPU (unless
 * the CPU is away), it cannot run elsewhere meanwhile: it stops counting
 * as idle first, and wakes a sleeper for any job queued, so that no job
 * waits for us.
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
 * Take @i out of the bitmap if it is there: who clears the bit subtracts
 * the worker from the sleeping count, once per time it counted itself.
 * The bit was set after the count, and test_and_clear_bit() is fully
 * ordered when it clears it: the subtraction follows the sleeper's
 * addition (litmus/sleeper-bit-claim.litmus).
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
	 * Acquire: pairs with smp_store_release() in blitz_wake_worker(),
	 * after its subtraction: we look again after it
	 * (litmus/woken-sleeper-finds.litmus).
	 */
	return smp_load_acquire(&w->woken);
}

/* Step 6: what ends the wait. */
static bool blitz_sleep_over(struct blitz_worker *w, struct blitz_latch *latch)
{
	return blitz_was_woken(w) || blitz_latch_probe(latch);
}

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

	do {
		c = blitz_counters_load(&pool->counters);
		if (blitz_jec(c) != idle->jec) {
			/*
			 * A job was posted since we got sleepy: look again.
			 * The latch's cmpxchg orders that look after the
			 * poster's JEC update.
			 * (litmus/jec-moved-look-again.litmus)
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
	 * Counted and in the bitmap; now look at every queue once more.
	 * Pairs with the poster's barrier after its queueing (smp_mb() in
	 * blitz_new_jobs(), or the cmpxchg of llist_add() before
	 * __blitz_new_jobs()): either the poster sees our bit or we see its
	 * job. It also orders the bit before reading the latch in
	 * blitz_sleep_over(), against the fully ordered blitz_latch_set()
	 * before the stopper looks for our bit.
	 * (litmus/poster-sleeper-deque.litmus,
	 * litmus/poster-sleeper-inject.litmus,
	 * litmus/poster-sleeper-bitmap.litmus,
	 * litmus/poster-bitmap-empty.litmus)
	 */
	smp_mb__after_atomic();
	if (!blitz_has_work(pool) && !blitz_sleep_over(w, latch)) {
		blitz_stat_inc(w, BLITZ_STAT_SLEEPS);
		trace_blitz_sleep(pool->name, w->index);
		/*
		 * TASK_IDLE: no hung-task report, no load average. A spare
		 * also wakes when another worker of its CPU runs again: it
		 * counts itself dozing, and that worker's sched_in wakes it
		 * (cm.c).
		 */
		if (w->spare)
			blitz_spare_doze(w, true);
		swait_event_idle_exclusive(w->idle_wait,
					   blitz_sleep_over(w, latch) ||
					   (w->spare && blitz_spare_surplus(w)));
		if (w->spare)
			blitz_spare_doze(w, false);
		blitz_stat_inc(w, BLITZ_STAT_WAKEUPS);
	}
	/*
	 * Woken, work seen, or stopped: take our bit back. If a waker has
	 * it, that waker subtracts us and says so, if it has not yet: wait
	 * for that, so that we look again after the subtraction.
	 */
	if (!blitz_claim_sleeper(pool, w->index))
		swait_event_idle_exclusive(w->idle_wait, blitz_was_woken(w));
	WRITE_ONCE(w->woken, false);

	idle->rounds = 0;
	blitz_latch_wake_up(latch);
}

/*
 * One idle round found no work. Rounds are cheap, and after 33 of them (a
 * few microseconds) the worker sleeps: it never polls for long. It polls
 * only while its CPU has nothing else to run: Rayon yields between rounds,
 * but a task waiting for this CPU (often the very submitter of the next
 * job) is better served by the worker getting sleepy at once.
 */
void blitz_idle_no_work_found(struct blitz_worker *w, struct blitz_idle *idle,
			      struct blitz_latch *latch)
{
	/*
	 * Latent frames elsewhere may be work: ask for them when we start
	 * looking and before we announce sleepy, the last ask before we
	 * sleep. Not every round: the asks are writes to others' lines.
	 */
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
 * Wake @w if it is asleep in the protocol: claim its bit, subtract it from
 * the sleeping count, and tell it so. Returns whether it was asleep. With
 * preemption off: the sleeper may be waiting for the word. Any context.
 */
bool blitz_wake_worker(struct blitz_worker *w)
{
	bool woke;

	preempt_disable();
	woke = blitz_claim_sleeper(w->pool, w->index);
	if (woke) {
		trace_blitz_wake(w->pool->name, w->index);
		/* Pairs with smp_load_acquire() in blitz_sleep_over(). */
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
 * __blitz_new_jobs() found a sleeper in the bitmap (blitz.h): wake one if
 * no awake idle worker is there to find the job, @near first, for
 * locality: from outside the pool, @near is the worker the submitting CPU
 * injects into. Any context.
 */
void blitz_wake_for_job(struct blitz_pool *pool, unsigned int near)
{
	unsigned int idle;
	u64 c;

	c = blitz_increment_jec_if_sleepy(&pool->counters);
	if (!blitz_sleeping(c))
		return;
	idle = blitz_awake_idle(c);
	/*
	 * A submitter that keeps going woke the worker of its own CPU for
	 * its first job: the next one needs a worker that can run now.
	 */
	near %= blitz_nr_slots(pool);
	if (idle && blitz_woken_behind_us(pool->workers[near]))
		idle--;
	if (!idle)
		blitz_wake_one(pool, near);
}

/* === Waiting on a latch, outside the protocol === */

/**
 * blitz_latch_sleep - sleep until a latch is set, or there is work
 * @w: the worker waiting, or NULL for a task that is not one
 * @latch: the latch
 * @ready: if not NULL, do not sleep while ready(@arg) says there is work
 * @arg: its argument
 * @state: the task state to sleep in
 *
 * For a joiner waiting for a stolen b and a caller waiting for a call: they
 * are busy, not idle, and run only what is theirs, so the sleep protocol
 * does not count them and no poster of a job relies on them; a spare
 * takes their CPU (cm.c). Only the latch's setter wakes them
 * (blitz_latch_set() returned true), or whoever made @ready true (and
 * then kicked the latch, or woke the task). May return early: callers
 * look again and call it again.
 */
void blitz_latch_sleep(struct blitz_worker *w, struct blitz_latch *latch,
		       bool (*ready)(void *arg), void *arg, unsigned int state)
{
	if (!blitz_latch_get_sleepy(latch))
		return;
	/*
	 * set_current_state() before the fall: a setter that sees SLEEPING
	 * wakes us, and its wake-up then finds this state (or already
	 * RUNNING) and cannot be lost. The fully ordered get_sleepy() above
	 * pairs with the full barrier before a kick: either we see the work
	 * that the kicker made ready, or the kick sees us sleepy
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
