// SPDX-License-Identifier: GPL-2.0
/*
 * Job groups: blitz_group_submit(), blitz_group_wait() and
 * blitz_group_cancel().
 *
 * A group counts its jobs: blitz_group_submit() adds one once the job is
 * its caller's to queue (pool.c, __blitz_submit()), and the worker that
 * ran or skipped it takes it away, after the function returned
 * (blitz_group_done()). A job of the group submits more before it
 * returns, so the count cannot reach zero while any is left. The waiter
 * sleeps on the count's address with wait_var_event(); the last worker
 * wakes it with wake_up_var(), which takes the address as a key and does
 * not touch the group: the waiter may return, and the group go, the
 * moment the count reaches zero.
 *
 * A waiter that is a worker of the group's pool first runs, itself, the
 * jobs of the group on its own deque, and on its injection list when the
 * deque overflowed: the ones it submitted, and those submitted by them.
 * So a job can wait for jobs it submitted, even in a pool of one worker.
 * It runs nothing else (the join-wait rule): other jobs it finds above
 * them go to its injection list, and join frames of its own are held
 * aside and pushed back, in order, when it is done.
 *
 * Cancelling sets a bit that the worker checks before it calls a job's
 * function: jobs not yet started are skipped, but still counted out.
 */
#include <linux/lockdep.h>
#include <linux/wait_bit.h>

#include "blitz.h"
#include "promote.h"
#include "sleep.h"

#ifdef CONFIG_LOCKDEP
/* The lock class of the groups that BLITZ_GROUP_INIT() initialises. */
struct blitz_group_class blitz_group_static_class = {
	.name = "BLITZ_GROUP_INIT",
};
EXPORT_SYMBOL_NS_GPL(blitz_group_static_class, BLITZ_NS);
#endif

/*
 * Lockdep sees a job of a group run as a recursive read of the group's
 * map, and a wait for the group as a write, as for flush_work(): a wait
 * under a lock that a job of the group takes is reported. Groups nest: a
 * job of one group may wait for another, of the same class when the code
 * recurses (one call site of blitz_group_init()). That is no deadlock,
 * the waiter runs the jobs it submitted, so each level of group jobs on
 * a worker's stack is a subclass of its own, as nested inode locks are.
 * A job that waits for its own group waits for itself: that is checked
 * on the group's map itself, whatever the level.
 */
static inline unsigned int blitz_group_subclass(struct blitz_worker *w)
{
	return w ? min_t(unsigned int, w->groups,
			 MAX_LOCKDEP_SUBCLASSES - 1) : 0;
}

/* @w, the current worker, starts a job of @group. */
void blitz_group_job_start(struct blitz_worker *w, struct blitz_group *group)
{
	lock_acquire_shared_recursive(&group->lockdep_map,
				      blitz_group_subclass(w), 0, NULL,
				      _RET_IP_);
	w->groups++;
}

void blitz_group_job_end(struct blitz_worker *w, struct blitz_group *group)
{
	w->groups--;
	lock_map_release(&group->lockdep_map);
}

/**
 * __blitz_group_init - initialise a &struct blitz_group
 * @group: the group
 * @pool: the pool its jobs run in, or NULL for the default pool
 * @name: its lock class's name, for lockdep
 * @key: its lock class, for lockdep
 *
 * Use blitz_group_init(), which gives each call site a lock class.
 *
 * Context: any.
 */
void __blitz_group_init(struct blitz_group *group, struct blitz_pool *pool,
			const char *name, struct lock_class_key *key)
{
	group->pool = pool;
	atomic_long_set(&group->pending, 0);
	group->flags = 0;
	group->name = name;
	lockdep_init_map(&group->lockdep_map, group->name, key, 0);
}
EXPORT_SYMBOL_NS_GPL(__blitz_group_init, BLITZ_NS);

/**
 * blitz_group_submit - queue a job on a group's pool, counted in the group
 * @group: the group
 * @job: the job
 *
 * As blitz_submit() on the group's pool; blitz_group_wait() then waits for
 * the job too. A job of the group may submit more jobs into it. From a
 * worker of the pool, in task context, the job goes on that worker's own
 * deque even when the worker runs on another CPU than its own (a full
 * deque overflows to the worker's own injection list), where the worker's
 * blitz_group_wait() finds it.
 *
 * Context: any, as blitz_submit(). Never sleeps, never allocates.
 * Return: 0 when queued; -EINVAL for a NULL @group, @job or function;
 * -ECANCELED once the group was cancelled, until a blitz_group_wait()
 * returns; otherwise as blitz_submit().
 */
int blitz_group_submit(struct blitz_group *group, struct blitz_job *job)
{
	if (!group || !job || !job->func)
		return -EINVAL;
	if (test_bit(BLITZ_GROUP_CANCELLED, &group->flags))
		return -ECANCELED;
	return blitz_submit_group(group->pool, job, group);
}
EXPORT_SYMBOL_NS_GPL(blitz_group_submit, BLITZ_NS);

/**
 * blitz_group_cancel - call off a group's jobs that have not started
 * @group: the group
 *
 * Jobs of @group not yet started are skipped: their function is never
 * called, but they still leave the queues and count as done for
 * blitz_group_wait(). Jobs already running finish. blitz_group_submit()
 * fails with -ECANCELED until blitz_group_wait() has returned.
 *
 * Context: any.
 */
void blitz_group_cancel(struct blitz_group *group)
{
	/* Pairs with test_bit() in blitz_execute(): no barrier needed. */
	set_bit(BLITZ_GROUP_CANCELLED, &group->flags);
}
EXPORT_SYMBOL_NS_GPL(blitz_group_cancel, BLITZ_NS);

/**
 * blitz_group_done - a job of @group ran or was skipped
 * @group: the group
 *
 * The last access to @group: once the count is zero, the waiter may
 * return and the group be gone. The decrement is fully ordered, so the
 * waiter sees what the job wrote; wake_up_var() needs no more
 * (include/linux/wait_bit.h).
 */
void blitz_group_done(struct blitz_group *group)
{
	if (atomic_long_dec_and_test(&group->pending))
		wake_up_var(&group->pending);
}

/* Join frames taken off the deque while helping, oldest first. */
struct blitz_held {
	struct llist_node *first;
};

/*
 * Run the jobs of @group on @w's deque, newest first, with the jobs they
 * submit; move other jobs to the injection list, and hold our own join
 * frames aside, to be pushed back once the deque is empty: a frame
 * promoted after a job of the group was submitted sits above it. Frames
 * pushed back are posted again: while we held them, nobody could see
 * them, and a worker that their promotion's post counted on may have
 * gone to sleep, or the joiner of the b we run stopped looking at us.
 */
static void blitz_group_help(struct blitz_worker *w, struct blitz_group *group)
{
	struct blitz_held held = { NULL };
	struct llist_node *node, *next;
	unsigned int published;
	struct blitz_job *job;
	bool frame;

	/*
	 * Our latent frames stay latent while frames are held: a promotion
	 * would push a newer frame below an older one.
	 */
	published = blitz_segment_open(w);
	while ((job = blitz_deque_pop_slot(&w->deque, &frame))) {
		if (frame) {
			/* Newest first: the oldest ends up at the head. */
			job->node.next = held.first;
			held.first = &job->node;
		} else if (job->group == group) {
			blitz_execute(w, job);
		} else {
			blitz_requeue(w, job);
		}
	}
	llist_for_each_safe(node, next, held.first) {
		job = llist_entry(node, struct blitz_job, node);
		preempt_disable();
		WARN_ON_ONCE(!blitz_deque_push_frame(&w->deque, job));
		preempt_enable();
	}
	if (held.first)
		blitz_post_frames(w);
	blitz_segment_close(w, published);
}

static bool blitz_group_match(struct llist_node *node, void *group)
{
	return llist_entry(node, struct blitz_job, node)->group == group;
}

/*
 * Run the jobs of @group that @w can reach without running another: on
 * its deque, and, if the deque overflowed, on its injection list. Until
 * neither has any, since those jobs submit more.
 *
 * Filtering the queue moves it out and puts the other jobs back. Between
 * the two, a worker's last look before sleeping sees none (inject.h),
 * and we will not run those jobs: post them again. The post's smp_mb()
 * orders the backlog after the move before the sleepers bitmap; it pairs
 * with the sleeper's barrier before its last look
 * (litmus/inject-filter-post.litmus).
 */
static void blitz_group_run_own(struct blitz_worker *w,
				struct blitz_group *group)
{
	struct llist_node *list;
	struct blitz_job *job, *next;

	do {
		blitz_group_help(w, group);
		list = blitz_inject_take_if(&w->inject, blitz_group_match,
					    group, UINT_MAX, w->pool->queued,
					    w->index);
		if (!blitz_inject_empty(&w->inject))
			blitz_new_jobs(w->pool, w->index + 1);
		llist_for_each_entry_safe(job, next, list, node)
			blitz_execute(w, job);
	} while (list);
}

/**
 * blitz_group_wait - wait until every job of a group has run or was skipped
 * @group: the group
 *
 * Returns once every job submitted to @group, also by its jobs, has run
 * (its function returned) or was skipped by blitz_group_cancel(). Each job
 * is then its owner's again, and may be freed; the group may be used
 * again, cancelled or not. Jobs submitted while this waits are waited
 * for if they are submitted before the last one ends.
 *
 * From a job of the group's pool, the caller first runs the jobs of
 * @group queued on its own worker (its deque, and its injection list
 * when the deque overflowed), those it submitted among them, so that it
 * can wait for jobs it submitted even in a pool of one worker; it runs
 * no other job. It then sleeps while other workers run
 * the rest: in a pool of one worker, it can wait only for jobs it, or
 * the jobs it runs, submitted. A job of the group must not wait for the
 * group: it would wait for itself. Lockdep reports that, and a wait under
 * a lock that a job of the group takes, as for flush_work().
 *
 * Context: process context or a blitz job; sleeps.
 * Return: 0; -ECANCELED if the group was cancelled (its cancellation
 * ends here).
 */
int blitz_group_wait(struct blitz_group *group)
{
	struct blitz_pool *pool = group->pool ?: blitz_default_pool;
	struct blitz_worker *w = blitz_current_worker();

	might_sleep();
	lockdep_assert(!lock_is_held(&group->lockdep_map));
	lock_acquire_exclusive(&group->lockdep_map, blitz_group_subclass(w), 0,
			       NULL, _THIS_IP_);
	lock_map_release(&group->lockdep_map);
	if (w && w->pool == pool)
		blitz_group_run_own(w, group);
	/* Acquire: what the jobs wrote before their fully ordered done. */
	wait_var_event(&group->pending,
		       !atomic_long_read_acquire(&group->pending));
	return test_and_clear_bit(BLITZ_GROUP_CANCELLED, &group->flags) ?
	       -ECANCELED : 0;
}
EXPORT_SYMBOL_NS_GPL(blitz_group_wait, BLITZ_NS);
