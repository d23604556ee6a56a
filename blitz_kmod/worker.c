// SPDX-License-Identifier: GPL-2.0
/*
 * The worker: a kthread bound to one CPU. It runs jobs from its own deque
 * (newest first), then steals from the other workers (oldest first,
 * starting at a random victim), then takes injected jobs, and when it finds
 * nothing it goes through the sleep protocol (sleep.c).
 */
#include <linux/freezer.h>
#include <linux/kthread.h>
#include <linux/lockdep.h>
#include <linux/printk.h>
#include <linux/rcupdate.h>
#include <linux/pid.h>
#include <linux/sched.h>

#include "blitz.h"
#include "promote.h"
#include "sleep.h"

/* xorshift64*: cheap, good enough to spread thieves over victims. */
static unsigned int blitz_random_below(struct blitz_worker *w, unsigned int n)
{
	u64 x = w->rng;

	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	w->rng = x;
	return ((x * 0x2545f4914f6cdd1dULL) >> 32) * n >> 32;
}

static struct blitz_job *blitz_steal(struct blitz_worker *w)
{
	struct blitz_pool *pool = w->pool;
	unsigned int n = blitz_nr_slots(pool), i, v;
	struct blitz_deque *victim;
	struct blitz_job *job;
	bool retry;

	if (n == 1)
		return NULL;
	do {
		retry = false;
		v = blitz_random_below(w, n);
		for (i = 0; i < n; i++, v = v + 1 == n ? 0 : v + 1) {
			victim = &pool->workers[v]->deque;
			/*
			 * The unfenced look spares an idle scan a full barrier
			 * per empty victim; a job it misses is found by the
			 * sleep protocol's fenced last look.
			 */
			if (v == w->index || blitz_deque_empty(victim))
				continue;
			job = blitz_deque_steal(victim);
			if (job == BLITZ_DEQUE_ABORT) {
				/* Someone else got it: progress was made. */
				retry = true;
			} else if (job) {
				blitz_stat_inc(w, BLITZ_STAT_STOLEN);
				trace_blitz_steal(pool->name, w->index, v, job);
				/* Spread: the victim may have more for them. */
				if (blitz_next_sleeper(pool, 0, n) < n)
					blitz_ask(w, pool->workers[v]);
				return job;
			}
		}
	} while (retry);
	return NULL;
}

/*
 * Take a batch from the first injection queue in [@from, @to) that the
 * pool's queued bitmap marks and that has jobs; *@taken says how many.
 */
static struct llist_node *blitz_take_marked(struct blitz_pool *pool,
					    unsigned int from, unsigned int to,
					    unsigned int *taken, bool *back)
{
	struct llist_node *batch;
	unsigned int v;

	for (v = blitz_next_bit(pool->queued, from, to); v < to;
	     v = blitz_next_bit(pool->queued, v + 1, to)) {
		batch = blitz_inject_take(&pool->workers[v]->inject,
					  BLITZ_INJECT_BATCH, taken,
					  pool->queued, v, back);
		if (batch)
			return batch;
	}
	return NULL;
}

/*
 * Take a batch of the oldest injected jobs, from our own queue first (it
 * is fed from the CPUs mapped to us, and by our own overflow), then from
 * the next marked in the pool's queued bitmap: in a pool of more workers
 * than online CPUs, most queues are empty, and looking at each was a
 * cost the pool's size multiplied. Run the oldest job, push the others
 * on our deque, where idle workers can steal them, and from where we pop
 * them oldest first. The deque is empty (we found nothing on it), and a
 * batch is smaller than the deque: there is room. The push is posted as
 * one job: it wakes one sleeper at most, and the wake cascade wakes more
 * while jobs are left for them (sleep.c).
 *
 * A queue whose first producer has not marked it yet is missed: a
 * sleeper's last look sees it (blitz_has_work()), and then we look
 * again, until the mark. A take that moved the list out and put most of
 * it back posts it again (inject.h).
 */
static struct blitz_job *blitz_take_injected(struct blitz_worker *w)
{
	struct blitz_pool *pool = w->pool;
	unsigned int taken = 0;
	struct llist_node *batch;
	bool back = false;

	BUILD_BUG_ON(BLITZ_INJECT_BATCH > BLITZ_DEQUE_SLOTS);
	batch = blitz_take_marked(pool, w->index, blitz_nr_slots(pool),
				  &taken, &back);
	if (!batch)
		batch = blitz_take_marked(pool, 0, w->index, &taken, &back);
	if (!batch)
		return NULL;

	if (taken > 1)
		blitz_deque_push_list(&w->deque, batch->next, taken - 1);
	/*
	 * The jobs pushed, and those the take put back, which a sleeper's
	 * last look may have missed while the take held them: posted as
	 * one (litmus/inject-filter-post.litmus for the latter).
	 */
	if (taken > 1 || back)
		blitz_new_jobs(pool, w->index + 1);
	blitz_stat_add(w, BLITZ_STAT_INJECTED, taken);
	return llist_entry(batch, struct blitz_job, node);
}

/* Work from anywhere but our own deque. */
static struct blitz_job *blitz_find_other_work(struct blitz_worker *w)
{
	struct blitz_job *job = blitz_steal(w);

	return job ?: blitz_take_injected(w);
}

/* Our own deque first, inline: in a run of jobs most come from there. */
static __always_inline struct blitz_job *blitz_find_work(struct blitz_worker *w)
{
	struct blitz_job *job = blitz_deque_pop(&w->deque);

	return job ?: blitz_find_other_work(w);
}

/*
 * As the workqueue does: a job must leave no lock, atomic or RCU section,
 * nor interrupts disabled, that it did not find. A job that a waiting
 * joiner runs starts under the locks its caller holds (join.c), and the
 * context is compared with what it was before the job.
 */
struct blitz_context {
	unsigned int preempt;
	int locks;
	int rcu;
};

static void blitz_context_save(struct blitz_context *ctx)
{
	ctx->preempt = preempt_count();
	ctx->locks = lockdep_depth(current);
	ctx->rcu = rcu_preempt_depth();
}

static void blitz_check_leaks(const struct blitz_context *ctx,
			      void (*func)(struct blitz_job *job))
{
	if (unlikely(preempt_count() != ctx->preempt || irqs_disabled() ||
		     lockdep_depth(current) != ctx->locks ||
		     rcu_preempt_depth() != ctx->rcu)) {
		pr_err("BUG: blitz job leaked atomic, lock, IRQs off or RCU: %s[%d]\n"
		       "     preempt=0x%08x irqs_disabled=%d lock=%d RCU=%d func=%ps\n",
		       current->comm, task_pid_nr(current), preempt_count(),
		       irqs_disabled(), lockdep_depth(current),
		       rcu_preempt_depth(), func);
		debug_show_held_locks(current);
		dump_stack();
	}
}

/* Run @job's function, counted in @group if it has one. */
static void blitz_run(struct blitz_worker *w, struct blitz_job *job,
		      void (*func)(struct blitz_job *job),
		      struct blitz_group *group)
{
	unsigned int depth = w->forks.depth, published;
	struct blitz_context ctx;

	blitz_context_save(&ctx);
	/* A segment of its own: its promotions reach only its frames. */
	published = blitz_segment_open(w);
	if (group)
		blitz_group_job_start(w, group);
	trace_blitz_execute_start(w->pool->name, w->index, job, func);
	func(job);
	trace_blitz_execute_end(w->pool->name, w->index, job, func);
	if (group)
		blitz_group_job_end(w, group);
	/* Its frames are joined, as a function's calls return. */
	WARN_ON_ONCE(w->forks.depth != depth);
	blitz_segment_close(w, published);
	blitz_stat_inc(w, BLITZ_STAT_EXECUTED);
	blitz_check_leaks(&ctx, func);
}

/*
 * The preemption point between two jobs, so that a long run of them cannot
 * cause soft lockups without preemption. cond_resched() is a call: make
 * it when a reschedule is due (its own test, inline), and on every
 * BLITZ_RESCHED_EVERY-th job that finds none due, for what else it does
 * where it does it: report an urgent RCU quiescent state (without
 * PREEMPT_RCU), move a livepatch transition on (from 6.4).
 */
static __always_inline void blitz_between_jobs(struct blitz_worker *w)
{
	if (should_resched(0) || !(++w->since_resched % BLITZ_RESCHED_EVERY))
		cond_resched();
}

/* blitz_execute(), inline in the worker's loop, where most jobs run. */
static __always_inline void __blitz_execute(struct blitz_worker *w,
					    struct blitz_job *job)
{
	void (*func)(struct blitz_job *job) = READ_ONCE(job->func);
	struct blitz_group *group = READ_ONCE(job->group);
	bool submitted = false;

	/* Another worker may have run on our CPU since our last job. */
	this_cpu_write(blitz_hint, &w->forks);

	/*
	 * From the clear on, the job is its owner's again: it may be
	 * resubmitted and freed, so func and group were read before. Fully
	 * ordered; pairs with test_and_set_bit() in blitz_submit(): a
	 * submitter that got -EBUSY wrote its data before that, and func
	 * sees it. (litmus/submit-execute-pending.litmus)
	 */
	if (test_bit(BLITZ_JOB_PENDING, &job->state))
		submitted = test_and_clear_bit(BLITZ_JOB_PENDING, &job->state);
	/* A group cancelled before we got here: the job is skipped. */
	if (unlikely(group) && test_bit(BLITZ_GROUP_CANCELLED, &group->flags))
		blitz_stat_inc(w, BLITZ_STAT_CANCELLED);
	else
		blitz_run(w, job, func, group);
	if (group)
		blitz_group_done(group);
	if (submitted)
		w->refs++;
	blitz_between_jobs(w);
}

void blitz_execute(struct blitz_worker *w, struct blitz_job *job)
{
	__blitz_execute(w, job);
}

/*
 * Drop the pool references of the jobs we ran. In bulk, when we run out
 * of work, rather than an RCU read section per job: only destroy waits
 * for them, and it waits for every job, after which every worker runs out
 * of work.
 */
static void blitz_drop_refs(struct blitz_worker *w)
{
	if (w->refs) {
		percpu_ref_put_many(&w->pool->live, w->refs);
		w->refs = 0;
	}
}

/*
 * A spare that found no work leaves duty if another worker of its CPU
 * runs: with its pool references dropped and nobody to ask it for frames.
 * Not at every job's end, as the workqueue's surplus workers do: a spare
 * left on duty beside a worker back from a block is counted running, so
 * that when either blocks next the other already holds the CPU, with no
 * spare to wake and no switch through the idle task.
 */
static bool blitz_spare_done(struct blitz_worker *w)
{
	if (!blitz_spare_leave(w))
		return false;
	blitz_drop_refs(w);
	blitz_share_idle(w);
	return true;
}

/*
 * Whether this worker is to freeze now. Only a freezable pool's workers
 * freeze (set_freezable()): the others skip freezing(), which is a call at
 * every job whenever some freezer is active, a cgroup v1 freezer holding a
 * cgroup frozen for one. The freezer's key is looked at first: with no
 * freezer active, as nearly always, the look is a patched-out jump.
 * Without CONFIG_FREEZER there is no key, and nothing freezes.
 */
static inline bool blitz_worker_freezing(struct blitz_worker *w)
{
#ifdef CONFIG_FREEZER
	return static_branch_unlikely(&freezer_active) &&
	       (w->pool->flags & BLITZ_POOL_FREEZABLE) && freezing(current);
#else
	return false;
#endif
}

/*
 * Run jobs until the stop latch is set, sleeping through the sleep
 * protocol when there is nothing to run; a spare, until it finds nothing
 * to run while its CPU has another worker running. Only the worker's main
 * loop waits this way: a joiner or caller may not run just any job
 * (join.c). A worker of a freezable pool starts no job while the system
 * freezes: it goes idle, and freezes in its next idle round or in its
 * sleep (sleep.c).
 */
static void blitz_run_jobs(struct blitz_worker *w)
{
	struct blitz_latch *stop = &w->stop;
	struct blitz_idle idle;
	struct blitz_job *job;
	u64 c;

	while (!blitz_latch_probe(stop)) {
		job = NULL;
		if (likely(!blitz_worker_freezing(w)))
			job = blitz_find_work(w);
		if (job) {
			__blitz_execute(w, job);
			continue;
		}
		blitz_drop_refs(w);
		blitz_share_idle(w);
		blitz_idle_start(w, &idle);
		while (!blitz_latch_probe(stop)) {
			if (blitz_worker_freezing(w))
				try_to_freeze();
			job = blitz_find_work(w);
			if (job || (w->spare && blitz_spare_surplus(w)))
				break;
			blitz_idle_no_work_found(w, &idle, stop);
		}
		blitz_race_window(BLITZ_RACE_LATCH_EXIT);
		/* Active again, with a job or with whatever made us wait. */
		c = blitz_idle_work_found(w);
		if (job) {
			blitz_share_busy(w, c);
			blitz_execute(w, job);
		} else if (unlikely(w->spare) && blitz_spare_done(w)) {
			return;
		}
	}
}

/* === Which worker runs here === */

/*
 * For each CPU, the forks of the worker that last said it runs there:
 * blitz_join() finds its worker inline, and blitz_current_worker() in
 * one load, where asking the kthread costs two calls. A hint: right when
 * the worker it names is current (__blitz_hinted_forks()). A worker sets it
 * when it starts, and again whenever it finds it names someone else
 * (blitz_hint_lookup()); it clears it, on every CPU, before it exits.
 * Exported for blitz_join()'s fast path, inline in client modules;
 * per-CPU exports have no namespaced form.
 */
DEFINE_PER_CPU(struct blitz_forks *, blitz_hint);
EXPORT_PER_CPU_SYMBOL_GPL(blitz_hint);

/**
 * blitz_hint_lookup - the current worker, which the hint missed
 *
 * Sets the hint to it. Context: task context.
 * Return: the worker, or NULL if current is not one.
 */
struct blitz_worker *blitz_hint_lookup(void)
{
	struct blitz_worker *w;

	if (kthread_func(current) != (void *)blitz_worker_fn)
		return NULL;
	w = kthread_data(current);
	this_cpu_write(blitz_hint, &w->forks);
	return w;
}

/*
 * The worker is exiting: no hint may name it once its pool frees it,
 * after a grace period (blitz_free_pool()). A CPU's hint that names
 * another worker stays.
 */
void blitz_hint_clear(struct blitz_worker *w)
{
	int cpu;

	for_each_possible_cpu(cpu)
		cmpxchg(per_cpu_ptr(&blitz_hint, cpu), &w->forks, NULL);
}

int blitz_worker_fn(void *arg)
{
	unsigned int state = TASK_IDLE | TASK_FREEZABLE;
	struct blitz_worker *w = arg;

	this_cpu_write(blitz_hint, &w->forks);
	blitz_cm_start(w);
	if (w->pool->flags & BLITZ_POOL_FREEZABLE)
		set_freezable();
	/* A spare runs jobs only once put on duty, as often as it is. */
	while (!w->spare || blitz_spare_wait(w)) {
		blitz_run_jobs(w);
		if (blitz_latch_probe(&w->stop))
			break;
	}
	blitz_cm_stop(w);
	blitz_hint_clear(w);
	/*
	 * Exit only once kthread_stop() asks: it reads our task's flags, as
	 * do_exit() writes them (KCSAN reported the pair). Its own window
	 * stays, from its setting of the stop bit to its kthread_unpark(), as
	 * for every kthread that polls kthread_should_stop(). Frozen here, as
	 * a freeze may come while the stopper waits for a frozen sibling; but
	 * not a reaped spare: the manager stops it holding manage_lock, which
	 * a suspend's CPU offlining takes after the freeze (cm.c). It left
	 * the freezer's reach as it was reaped (PF_NOFREEZE, set in
	 * blitz_spare_wait()), and sleeps where a freezer that looked at it
	 * before the flag cannot freeze it either.
	 */
	if (READ_ONCE(w->reap))
		state = TASK_IDLE;
	set_current_state(state);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(state);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}
