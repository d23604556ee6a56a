// SPDX-License-Identifier: GPL-2.0
/*
 * Fork-join: blitz_join(), blitz_parallel_for() and blitz_call().
 *
 * A join frame lives on the joining worker's stack: pushing it costs no
 * allocation. The worker pushes b, runs a inline, then pops: usually b is
 * still there and runs inline too. If a thief took b, the worker runs what
 * it can find (jobs a left on its deque, then other work) while it waits
 * for b's latch, and sleeps through the sleep protocol when there is
 * nothing to run; the thief that finishes b sets the latch and wakes it.
 *
 * Outside a worker, a join or loop runs inside blitz_call() on the default
 * pool: the caller sleeps on a completion until it is done.
 *
 * Stack: each join level adds a frame, and a worker waiting for a stolen b
 * runs other jobs on top of its stack. So joins check how much stack is
 * left: below BLITZ_STACK_RESERVE they warn once and run b inline, and a
 * worker with less than BLITZ_HELP_RESERVE left does not take other jobs
 * while it waits for b: it just sleeps until the thief is done.
 */
#include <linux/completion.h>
#include <linux/sched/task_stack.h>
#include <linux/wait_bit.h>

#include "blitz.h"

/* Stack kept free for the jobs themselves; see Documentation/blitz. */
#define BLITZ_STACK_RESERVE	(THREAD_SIZE / 4)
/* Stack a waiting worker needs left to run a job it did not start. */
#define BLITZ_HELP_RESERVE	(THREAD_SIZE / 2)

struct blitz_join_frame {
	struct blitz_job job;
	struct blitz_latch latch;
	struct blitz_worker *owner;
	void (*fn)(void *arg);
	void *arg;
};

/* b, run by a thief. */
static void blitz_join_stolen(struct blitz_job *job)
{
	struct blitz_join_frame *f = container_of(job, struct blitz_join_frame,
						  job);
	/* The frame is gone once the latch is set: read the owner first. */
	struct blitz_worker *owner = f->owner;

	f->fn(f->arg);
	blitz_race_window(BLITZ_RACE_JOIN_DONE);
	if (blitz_latch_set(&f->latch))
		blitz_wake_worker(owner);
	/*
	 * For an owner short of stack, waiting in blitz_join_wait_deep().
	 * Only the address is used: no access to the frame. The fully
	 * ordered set above is the barrier wake_up_var() needs.
	 */
	wake_up_var(&f->latch);
}

/* The stack grows down on every architecture blitz builds for. */
static bool blitz_stack_below(unsigned long reserve)
{
	unsigned long sp = (unsigned long)__builtin_frame_address(0);

	return sp - (unsigned long)task_stack_page(current) < reserve;
}

/*
 * Wait for a stolen b without running anything else here. The latch stays
 * UNSET for the thief, so set() wakes nobody through the sleep protocol,
 * and this worker stays counted as active: it takes no jobs meanwhile.
 */
static void blitz_join_wait_deep(struct blitz_join_frame *f)
{
	___wait_var_event(&f->latch, blitz_latch_probe(&f->latch), TASK_IDLE,
			  0, 0, schedule());
}

static void blitz_join_worker(struct blitz_worker *w,
			      void (*a)(void *arg), void *a_arg,
			      void (*b)(void *arg), void *b_arg)
{
	struct blitz_join_frame f = {
		.job = BLITZ_JOB_INIT(blitz_join_stolen),
		.owner = w,
		.fn = b,
		.arg = b_arg,
	};
	struct blitz_job *job;
	bool was_empty;

	blitz_latch_init(&f.latch);
	was_empty = blitz_deque_empty(&w->deque);
	if (WARN_ONCE(blitz_stack_below(BLITZ_STACK_RESERVE),
		      "blitz: joins nested too deep, running them inline\n") ||
	    !blitz_deque_push(&w->deque, &f.job)) {
		/* A full deque: thieves are far behind anyway. */
		a(a_arg);
		b(b_arg);
		return;
	}
	blitz_new_jobs(w->pool, 1, was_empty, w->index + 1);

	a(a_arg);
	blitz_race_window(BLITZ_RACE_JOIN_POP);

	/* Jobs a submitted sit above b: run them until b or nothing. */
	while ((job = blitz_deque_pop(&w->deque))) {
		if (job == &f.job) {
			b(b_arg);
			return;
		}
		blitz_execute(w, job);
	}
	/* Stolen: help elsewhere, or sleep, until the thief is done. */
	if (blitz_stack_below(BLITZ_HELP_RESERVE))
		blitz_join_wait_deep(&f);
	else
		blitz_wait_until(w, &f.latch);
}

struct blitz_join_args {
	void (*a)(void *arg);
	void *a_arg;
	void (*b)(void *arg);
	void *b_arg;
};

static void blitz_join_in_pool(void *arg)
{
	struct blitz_join_args *j = arg;

	blitz_join_worker(blitz_current_worker(), j->a, j->a_arg,
			  j->b, j->b_arg);
}

/**
 * blitz_join - run two functions, possibly in parallel
 * @a: the first function, run by the caller
 * @a_arg: its argument
 * @b: the second function, offered to other workers
 * @b_arg: its argument
 *
 * Returns when both @a and @b have returned. Inside a worker, @b goes on
 * the worker's deque where idle workers may steal it, @a runs inline, and
 * @b runs inline too if nobody took it; while a stolen @b runs elsewhere,
 * the caller runs other jobs, or sleeps. Outside a worker, the whole join
 * runs in the default pool and the caller sleeps until it is done. Joins
 * nest; when the stack runs low they run inline with a warning.
 *
 * Context: process context or a blitz job; may sleep.
 */
void blitz_join(void (*a)(void *arg), void *a_arg,
		void (*b)(void *arg), void *b_arg)
{
	struct blitz_worker *w = blitz_current_worker();
	struct blitz_join_args j = { a, a_arg, b, b_arg };

	might_sleep();
	if (w)
		blitz_join_worker(w, a, a_arg, b, b_arg);
	else
		WARN_ON_ONCE(blitz_call(NULL, blitz_join_in_pool, &j));
}
EXPORT_SYMBOL_GPL(blitz_join);

/* === Parallel loops === */

struct blitz_for {
	void (*fn)(unsigned long lo, unsigned long hi, void *arg);
	void *arg;
	unsigned long grain;
};

struct blitz_range {
	struct blitz_for *loop;
	unsigned long lo, hi;
};

static void blitz_for_range(void *arg)
{
	struct blitz_range *r = arg;
	struct blitz_range left, right;
	unsigned long mid;

	if (r->hi - r->lo <= r->loop->grain) {
		r->loop->fn(r->lo, r->hi, r->loop->arg);
		return;
	}
	mid = r->lo + (r->hi - r->lo) / 2;
	left = (struct blitz_range){ r->loop, r->lo, mid };
	right = (struct blitz_range){ r->loop, mid, r->hi };
	blitz_join_worker(blitz_current_worker(), blitz_for_range, &left,
			  blitz_for_range, &right);
}

/*
 * grain 0: about four ranges per worker, enough for thieves to balance
 * uneven ranges without paying a join per element.
 */
static unsigned long blitz_auto_grain(unsigned long n, struct blitz_pool *pool)
{
	return max(n / (4UL * pool->nr_workers), 1UL);
}

static void blitz_for_in_pool(void *arg)
{
	struct blitz_range *r = arg;
	struct blitz_for *loop = r->loop;

	if (!loop->grain)
		loop->grain = blitz_auto_grain(r->hi - r->lo,
					       blitz_current_worker()->pool);
	blitz_for_range(r);
}

/**
 * blitz_parallel_for - call a function on ranges covering an interval
 * @start: first index
 * @end: one past the last index
 * @grain: the longest range @fn is given, or 0 to choose: about four
 *	   ranges per worker of the pool
 * @fn: called as fn(lo, hi, @arg) on non-empty, non-overlapping ranges
 *	that together cover [@start, @end) exactly once, in parallel
 * @arg: passed to @fn
 *
 * Splits [@start, @end) in halves over blitz_join() down to @grain. Inside
 * a worker, the loop runs in that worker's pool; outside, in the default
 * pool while the caller sleeps. Recursion depth is log2 of the number of
 * ranges.
 *
 * Context: process context or a blitz job; may sleep.
 * Return: 0; -EINVAL for @start > @end or a NULL @fn (then @fn is never
 * called); -ESHUTDOWN when called from outside while the default pool is
 * being destroyed. @start == @end returns 0 without calling @fn.
 */
int blitz_parallel_for(unsigned long start, unsigned long end,
		       unsigned long grain,
		       void (*fn)(unsigned long lo, unsigned long hi, void *arg),
		       void *arg)
{
	struct blitz_for loop = { fn, arg, grain };
	struct blitz_range r = { &loop, start, end };
	struct blitz_worker *w = blitz_current_worker();

	might_sleep();
	if (start > end || !fn)
		return -EINVAL;
	if (start == end)
		return 0;
	if (!w)
		return blitz_call(NULL, blitz_for_in_pool, &r);
	blitz_for_in_pool(&r);
	return 0;
}
EXPORT_SYMBOL_GPL(blitz_parallel_for);

/* === Calls into a pool === */

struct blitz_call_frame {
	struct blitz_job job;
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static void blitz_call_func(struct blitz_job *job)
{
	struct blitz_call_frame *f = container_of(job, struct blitz_call_frame,
						  job);

	f->fn(f->arg);
	complete(&f->done);
}

/**
 * blitz_call - run a function on a worker of a pool and wait for it
 * @pool: the pool, or NULL for the default pool
 * @fn: the function
 * @arg: its argument
 *
 * blitz_join() and blitz_parallel_for() called by @fn use @pool. Called
 * from a worker of @pool, @fn simply runs inline.
 *
 * Context: process context or a blitz job; sleeps until @fn returns.
 * Return: 0 once @fn has returned; -EINVAL for a NULL @fn; -ESHUTDOWN
 * when @pool is being destroyed (then @fn is not called).
 */
int blitz_call(struct blitz_pool *pool, void (*fn)(void *arg), void *arg)
{
	struct blitz_call_frame f = {
		.job = BLITZ_JOB_INIT(blitz_call_func),
		.fn = fn,
		.arg = arg,
	};
	struct blitz_worker *w = blitz_current_worker();
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
	init_completion(&f.done);
	ret = blitz_submit(pool, &f.job);
	if (ret)
		return ret;
	wait_for_completion(&f.done);
	return 0;
}
EXPORT_SYMBOL_GPL(blitz_call);
