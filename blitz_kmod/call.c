// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_call(): run a function on a worker of a pool and sleep until it
 * returns, as Rayon's ThreadPool::install() blocks a thread outside the pool.
 * Documentation/blitz/design.rst, "Calls".
 */
#include <linux/sched/task.h>

#include "blitz.h"

/* A blitz_call() in progress, on the caller's stack. */
struct blitz_call_frame {
	struct blitz_job job;
	void (*fn)(void *arg);
	void *arg;
	struct blitz_latch done;
	struct task_struct *task;
};

static void blitz_call_func(struct blitz_job *job)
{
	struct blitz_call_frame *f = container_of(job, struct blitz_call_frame,
						  job);
	/* The caller may exit once its latch is set: pin it for the wake-up. */
	struct task_struct *task = get_task_struct(f->task);

	f->fn(f->arg);
	if (blitz_latch_set(&f->done))
		wake_up_process(task);
	put_task_struct(task);
}

/**
 * blitz_call - run a function on a worker of a pool and wait for it
 * @pool: the pool, or NULL for the default pool
 * @fn: the function
 * @arg: its argument
 *
 * blitz_join() and blitz_parallel_for() called by @fn use @pool. From a
 * worker of @pool, @fn runs inline. Otherwise it runs as a job of @pool and
 * the caller sleeps until it returns; a calling worker of another pool runs
 * nothing meanwhile and a spare of its pool takes its CPU, so calls across
 * pools, and back into the caller's pool, do not deadlock (within the spare
 * bound: Documentation/blitz/api.rst).
 *
 * Context: process context or a blitz job; sleeps until @fn returns.
 * Return: 0 once @fn has returned; -EINVAL for a NULL @fn; -ESHUTDOWN
 * when @pool is being destroyed (then @fn is not called).
 */
int blitz_call(struct blitz_pool *pool, void (*fn)(void *arg), void *arg)
{
	struct blitz_worker *w = blitz_current_worker();
	struct blitz_call_frame f = {
		.job = BLITZ_JOB_INIT(blitz_call_func),
		.fn = fn,
		.arg = arg,
		.task = current,
	};
	int ret;

	might_sleep();
	if (!fn)
		return -EINVAL;
	if (!pool)
		pool = blitz_default_pool;
	if (w && w->pool == pool) {
		fn(arg);
		return 0;
	}
	blitz_latch_init(&f.done);
	ret = blitz_submit(pool, &f.job);
	if (ret)
		return ret;
	/* A plain task's wait shows in hung-task reports; a worker's not. */
	while (!blitz_latch_probe(&f.done))
		blitz_latch_sleep(w, &f.done, NULL, NULL,
				  w ? TASK_IDLE : TASK_UNINTERRUPTIBLE);
	return 0;
}
EXPORT_SYMBOL_NS_GPL(blitz_call, BLITZ_NS);
