// SPDX-License-Identifier: GPL-2.0
/*
 * The sleep protocol: when an idle worker may sleep, and whom a job poster
 * wakes. It follows Rayon's (rayon-core/src/sleep), on kernel primitives.
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
 * Sleeping, on the worker's stop latch and its sleep_lock (joiners and
 * callers sleep on their own latches, outside the protocol; see the end):
 *
 *   1. latch UNSET -> SLEEPY               (fails if set: back to work)
 *   2. take the worker's sleep_lock
 *   3. latch SLEEPY -> SLEEPING            (fails if set: back to work)
 *   4. if the JEC moved since round 32, a job was posted that our last
 *      look may have missed: latch -> UNSET, back to round 32;
 *      else cmpxchg sleeping += 1 (retry if the word changed)
 *   5. smp_mb(), then look at every deque and injection list: if one is
 *      not empty undo the sleeping count ourselves and go back to work
 *   6. is_blocked = true; wait in TASK_IDLE until a waker clears it
 *
 * A poster (blitz_new_jobs()) makes the JEC odd if it was even, reads the
 * counts from the same atomic operation, and wakes sleepers if no awake
 * idle worker is left to find the job. A waker takes the sleeper's lock,
 * and only if is_blocked is set clears it, wakes the task and decrements
 * the sleeping count. Because the sleeper holds that lock from before it
 * counts itself (step 2) until it blocks (step 6), a waker that saw it in
 * the count cannot miss it, and the count never includes a worker nobody
 * can wake (litmus/wake-worker-lock.litmus). A poster that finds the
 * sleeper already woken by someone else leaves its job to that sleeper,
 * which looks again (litmus/woken-sleeper-finds.litmus).
 *
 * Why nothing is lost. A job posted after a worker announced sleepy makes
 * the JEC differ from the worker's snapshot, so step 4 catches it, or the
 * poster's JEC update came after the worker's cmpxchg in step 4, and then
 * the poster sees the worker in the sleeping count and wakes it
 * (litmus/jec-sleepy-poster.litmus). When the JEC was already odd the
 * poster only reads the word; then the two full barriers decide: the one
 * in blitz_new_jobs() after the job is queued and the one in step 5 after
 * the sleeper is counted. Either the poster sees the sleeper, or the
 * sleeper's last look, at every deque and injection list, sees the job
 * (litmus/poster-sleeper-*.litmus). Rayon skips the barrier for jobs
 * pushed on the poster's own deque, reasoning that the owner runs them
 * itself; a kernel job may block waiting for what it submitted, so blitz
 * does not.
 */
#include <linux/minmax.h>
#include <linux/sched.h>
#include <linux/sched/stat.h>

#include "blitz.h"

#define BLITZ_ROUNDS_UNTIL_SLEEPY	32
#define BLITZ_ROUNDS_UNTIL_SLEEPING	(BLITZ_ROUNDS_UNTIL_SLEEPY + 1)

/* A worker starts looking for work: it becomes inactive. */
void blitz_idle_start(struct blitz_pool *pool, struct blitz_idle *idle)
{
	idle->rounds = 0;
	blitz_add_inactive(&pool->counters);
}

static void blitz_wake_any(struct blitz_pool *pool, unsigned int nr,
			   unsigned int near);

/*
 * A looking worker is active again, with a job or not (its latch was set,
 * or it is about to yield its CPU). If jobs are still queued, it brings
 * help: the wake cascade that spreads a burst of work. That it found a job
 * does not matter: a poster may have counted on it as an awake idle worker
 * and woken nobody, so whatever it leaves behind needs a sleeper woken.
 *
 * The fully ordered decrement in blitz_sub_inactive() and the smp_mb() in
 * blitz_new_jobs() pair: a poster that saw us still inactive queued its job
 * before the decrement, and blitz_has_work() sees it
 * (litmus/idle-leave-poster.litmus). Rayon wakes the helpers
 * unconditionally; for a lone job they would only spin and sleep
 * again.
 */
void blitz_idle_work_found(struct blitz_worker *w)
{
	struct blitz_pool *pool = w->pool;
	unsigned int nr = blitz_sub_inactive(&pool->counters);

	if (nr && blitz_has_work(pool))
		blitz_wake_any(pool, nr, w->index + 1);
}

/*
 * An idle worker gives its CPU to another task. Bound to this CPU, it
 * cannot run elsewhere meanwhile: it stops counting as idle first, and
 * wakes a sleeper for any job queued, so that no job waits for us.
 */
static void blitz_idle_yield(struct blitz_worker *w)
{
	blitz_race_window(BLITZ_RACE_IDLE_YIELD);
	if (!need_resched())
		return;
	blitz_idle_work_found(w);
	cond_resched();
	blitz_add_inactive(&w->pool->counters);
}

static void blitz_sleep(struct blitz_worker *w, struct blitz_idle *idle,
			struct blitz_latch *latch)
{
	struct blitz_pool *pool = w->pool;
	u64 c;

	if (!blitz_latch_get_sleepy(latch))
		return;

	raw_spin_lock_irq(&w->sleep_lock);
	if (!blitz_latch_fall_asleep(latch)) {
		raw_spin_unlock_irq(&w->sleep_lock);
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
			raw_spin_unlock_irq(&w->sleep_lock);
			return;
		}
	} while (!blitz_try_add_sleeping(&pool->counters, c));
	blitz_race_window(BLITZ_RACE_SLEEP_LOOK);

	/*
	 * Counted as sleeping; now look at every queue once more. Pairs with
	 * smp_mb() in blitz_new_jobs(): either the poster sees us counted or
	 * we see its job. (The cmpxchg above is fully ordered already; the
	 * barrier names the pairing.) (litmus/poster-sleeper-deque.litmus,
	 * litmus/poster-sleeper-inject.litmus)
	 */
	smp_mb();
	if (blitz_has_work(pool)) {
		/* Nobody will wake us for this: undo the count ourselves. */
		blitz_sub_sleeping(&pool->counters);
	} else {
		w->is_blocked = true;
		blitz_stat_inc(w, BLITZ_STAT_SLEEPS);
		do {
			/* TASK_IDLE: no hung-task report, no load average. */
			set_current_state(TASK_IDLE);
			raw_spin_unlock_irq(&w->sleep_lock);
			schedule();
			raw_spin_lock_irq(&w->sleep_lock);
		} while (w->is_blocked);
		__set_current_state(TASK_RUNNING);
		blitz_stat_inc(w, BLITZ_STAT_WAKEUPS);
	}
	raw_spin_unlock_irq(&w->sleep_lock);

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
 * Wake @w if it is asleep. Returns whether it was. Takes the sleeper's
 * lock, which makes the is_blocked check and the count decrement atomic
 * with respect to the sleeper's steps 2-6 (litmus/wake-worker-lock.litmus).
 * Any context.
 */
bool blitz_wake_worker(struct blitz_worker *w)
{
	unsigned long flags;
	bool woke = false;

	raw_spin_lock_irqsave(&w->sleep_lock, flags);
	if (w->is_blocked) {
		w->is_blocked = false;
		wake_up_process(w->task);
		blitz_sub_sleeping(&w->pool->counters);
		woke = true;
	}
	raw_spin_unlock_irqrestore(&w->sleep_lock, flags);
	return woke;
}

/* Wake up to @nr sleepers, starting with worker @near and its neighbours. */
static void blitz_wake_any(struct blitz_pool *pool, unsigned int nr,
			   unsigned int near)
{
	unsigned int i, n = pool->nr_workers;

	for (i = 0; nr && i < n; i++)
		if (blitz_wake_worker(pool->workers[(near + i) % n]))
			nr--;
}

/*
 * @nr jobs were queued on worker @near's deque or injection list, which
 * was empty if @queue_was_empty: wake sleepers if no awake idle worker is
 * left to find them, @near first, for locality: from outside the pool,
 * @near is on the submitting CPU. Any context.
 */
void blitz_new_jobs(struct blitz_pool *pool, unsigned int nr,
		    bool queue_was_empty, unsigned int near)
{
	unsigned int sleeping, idle;
	u64 c;

	/*
	 * The jobs are queued before we read the counters. Pairs with
	 * smp_mb() in blitz_sleep(), step 5, and with the fully ordered
	 * decrement in blitz_idle_work_found(). (litmus/poster-sleeper-*.litmus,
	 * litmus/idle-leave-poster.litmus)
	 */
	smp_mb();
	c = blitz_increment_jec_if_sleepy(&pool->counters);
	sleeping = blitz_sleeping(c);
	if (!sleeping)
		return;
	if (!queue_was_empty) {
		blitz_wake_any(pool, min(nr, sleeping), near);
		return;
	}
	/* Awake idle workers will find the jobs without being woken. */
	idle = blitz_inactive(c) - min(blitz_inactive(c), sleeping);
	if (idle < nr)
		blitz_wake_any(pool, min(nr - idle, sleeping), near);
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
 * does not count them and no poster relies on them. Only the latch's setter
 * wakes them (blitz_latch_set() returned true), or whoever made @ready
 * true (and then kicked the latch, or woke the task). May return early:
 * callers look again and call it again.
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
	 * pairs with the fully ordered llist_add() before a kick: either we
	 * see the mailbox's work here, or the kick sees us sleepy
	 * (litmus/mailbox-kick.litmus). The barrier in set_current_state()
	 * pairs with the smp_mb() between a give-back's flag and its wake-up
	 * in join.c (litmus/give-back-wake.litmus).
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
