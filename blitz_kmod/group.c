// SPDX-License-Identifier: GPL-2.0
/*
 * Job groups, as Rayon's scope or TBB's task_group: a count of pending jobs
 * that blitz_group_wait() sleeps on, after running the group's jobs on its
 * own worker (the join-wait rule). Documentation/blitz/design.rst, "Groups".
 */
#include <linux/lockdep.h>
#include <linux/wait_bit.h>

#include "blitz.h"
#include "promote.h"
#include "sleep.h"

#ifdef CONFIG_LOCKDEP
struct blitz_group_class blitz_group_static_class = {
	.name = "BLITZ_GROUP_INIT",
};
EXPORT_SYMBOL_NS_GPL(blitz_group_static_class, BLITZ_NS);
#endif

/* A lockdep subclass per level of group jobs on @w: groups of a class nest. */
static inline unsigned int blitz_group_subclass(struct blitz_worker *w)
{
	return w ? min_t(unsigned int, w->groups,
			 MAX_LOCKDEP_SUBCLASSES - 1) : 0;
}

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
 * As blitz_submit() on the group's pool (from a worker of the pool, on that
 * worker's own queues); blitz_group_wait() waits for it too.
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
 * Jobs not yet started are skipped but count as done; running ones finish.
 * blitz_group_submit() fails until blitz_group_wait() returns.
 *
 * Context: any.
 */
void blitz_group_cancel(struct blitz_group *group)
{
	/* Pairs with __blitz_execute(); no mb: litmus/group-cancel.litmus */
	set_bit(BLITZ_GROUP_CANCELLED, &group->flags);
}
EXPORT_SYMBOL_NS_GPL(blitz_group_cancel, BLITZ_NS);

/*
 * Our last access to @group. The fully ordered decrement, as wake_up_var()
 * needs, pairs with the waiter's acquire (litmus/group-cancel.litmus).
 */
void blitz_group_done(struct blitz_group *group)
{
	if (atomic_long_dec_and_test(&group->pending))
		wake_up_var(&group->pending);
}

struct blitz_held {
	struct llist_node *first;
};

/*
 * Run @group's jobs on @w's deque and requeue others. Our join frames are held
 * aside, then pushed back oldest first and posted again: meanwhile, sleepers
 * and the joiner of the b we run could not see them.
 */
static void blitz_group_help(struct blitz_worker *w, struct blitz_group *group)
{
	struct blitz_held held = { NULL };
	struct llist_node *node, *next;
	unsigned int published;
	struct blitz_job *job;
	bool frame;

	/* A promotion now would push a newer frame below a held, older one. */
	published = blitz_segment_open(w);
	while ((job = blitz_deque_pop_slot(&w->deque, &frame))) {
		if (frame) {
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
 * Run @group's jobs on @w's queues until none is left. The jobs the filter put
 * back were hidden from a sleeper's last look: the post's smp_mb() pairs with
 * the sleeper's before it (litmus/inject-filter-post.litmus).
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
 * Returns once every job submitted to @group (by its jobs too, before the
 * last one ends) has run or was skipped; the jobs are then their owners' (to
 * free), the group reusable. On a worker of the group's pool, the caller
 * first runs the group's jobs queued on its own worker, and no other job: in
 * a pool of one worker, it can wait only for jobs it, or the jobs it runs,
 * submitted. A job of the group must not wait for it; lockdep reports that,
 * and a wait under a lock that a job of the group takes, as for flush_work().
 *
 * Context: process context or a blitz job; sleeps.
 * Return: 0, or -ECANCELED if the group was cancelled (which ends here).
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
	/* Pairs with blitz_group_done() (litmus/group-cancel.litmus). */
	wait_var_event(&group->pending,
		       !atomic_long_read_acquire(&group->pending));
	return test_and_clear_bit(BLITZ_GROUP_CANCELLED, &group->flags) ?
	       -ECANCELED : 0;
}
EXPORT_SYMBOL_NS_GPL(blitz_group_wait, BLITZ_NS);
