// SPDX-License-Identifier: GPL-2.0
/*
 * Fork-join: blitz_join(), blitz_parallel_for() and blitz_call().
 *
 * A join frame lives on the joining worker's stack. A fork records it as
 * latent (share.c): b runs inline after a unless the frame was promoted
 * meanwhile. Then the worker pops it back, or, if a thief took b, waits
 * for b's latch: it runs only frames that descend from b, stolen from
 * the thief (leapfrogging), and otherwise sleeps, and a spare worker
 * takes its CPU (cm.c). Jobs that a submitted are moved to the injection
 * list on the way down to b. A call into another pool is a job of that
 * pool, waited for the same way. Documentation/blitz/design.rst, "The
 * join-wait rule", has the argument.
 */
#include <linux/sched/task.h>

#include "blitz.h"

/* Stack a waiting worker needs left to run a job: the job's and ours. */
#define BLITZ_RUN_STACK		(BLITZ_JOB_STACK + 1024)
/* Looks at the thief's deque before a waiting joiner sleeps. */
#define BLITZ_JOIN_SPINS	64

/**
 * blitz_join_stolen - b, run by a thief
 * @job: the promoted frame's job
 *
 * The thief is a worker of the pool, whatever took the frame.
 */
void blitz_join_stolen(struct blitz_job *job)
{
	struct blitz_join_frame *f = container_of(job, struct blitz_join_frame,
						  job);
	struct blitz_worker *w = blitz_current_worker();
	struct blitz_join_frame *serving = w->serving;
	/*
	 * The frame is gone once the latch is set: read the owner first. The
	 * owner is a worker of this pool, and the pool is not freed before
	 * this worker stops, so the task outlives the wake-up below.
	 */
	struct task_struct *owner = f->owner;

	/* What we promote from here on descends from b. */
	f->thief_base = blitz_deque_bottom(&w->deque);
	/*
	 * Serving before the joiner can see us and ask: a request of its
	 * that finds our cooldown on is renewed at its end only for a
	 * worker that serves (blitz_share_wanted()).
	 */
	WRITE_ONCE(w->serving, f);
	/*
	 * Publish where b's descendants start before ourselves. Pairs with
	 * smp_load_acquire() of the thief in blitz_join_wait().
	 * (litmus/join-thief-publish.litmus)
	 */
	smp_store_release(&f->thief, w);
	trace_blitz_join_stolen(w->pool->name, w->index, f->fn);
	f->fn(f->arg);
	WRITE_ONCE(w->serving, serving);
	blitz_race_window(BLITZ_RACE_JOIN_DONE);
	if (blitz_latch_set(&f->latch))
		wake_up_process(owner);
}

/*
 * Whether a waiting joiner that may leapfrog should not sleep: the thief
 * has a frame of b's for it. The thief's kick pairs with the fully
 * ordered blitz_latch_get_sleepy() before this look
 * (litmus/share-kick-joiner.litmus).
 */
static bool blitz_join_ready(void *arg)
{
	struct blitz_join_frame *f = arg;
	/* Pairs with smp_store_release() in blitz_join_stolen(). */
	struct blitz_worker *thief = smp_load_acquire(&f->thief);

	return thief && blitz_deque_has_frame(&thief->deque, f->thief_base);
}

/*
 * Steal from @thief a frame that descends from @f's b: one pushed at or
 * above the thief's bottom when b started (below are no frames, only
 * jobs submitted before), and pushed before b finished. Once b has
 * finished, the thief may push frames of its next work there, which its
 * own join may be waiting for while its a() sleeps: those are any idle
 * worker's to take, ours too once our join is over, never ours now (we
 * would run unrelated work on top of our caller's stack). The steal reads
 * b's latch after the slot and takes no frame once it is set.
 */
static struct blitz_job *blitz_leapfrog(struct blitz_worker *w,
					struct blitz_join_frame *f,
					struct blitz_worker *thief)
{
	struct blitz_job *job;

	blitz_race_window(BLITZ_RACE_LEAPFROG);
	do {
		job = blitz_deque_steal_frame(&thief->deque, f->thief_base,
					      &f->latch);
	} while (job == BLITZ_DEQUE_ABORT);
	if (!job)
		return NULL;
	blitz_stat_inc(w, BLITZ_STAT_STOLEN);
	trace_blitz_steal(w->pool->name, w->index, thief->index, job);
	return job;
}

/*
 * Wait for a stolen b, running only b's descendants meanwhile. Short of
 * stack, steal none, and do not stay awake for them either: sleep until
 * b is done.
 */
static void blitz_join_wait(struct blitz_worker *w, struct blitz_join_frame *f)
{
	bool leapfrog = !blitz_stack_below(BLITZ_RUN_STACK);
	struct blitz_worker *thief;
	struct blitz_job *job;
	unsigned int spins = 0;

	while (!blitz_latch_probe(&f->latch)) {
		/*
		 * Pairs with smp_store_release() in blitz_join_stolen().
		 * (litmus/join-thief-publish.litmus)
		 */
		thief = smp_load_acquire(&f->thief);
		job = NULL;
		if (thief && leapfrog)
			job = blitz_leapfrog(w, f, thief);
		if (job) {
			blitz_execute(w, job);
			spins = 0;
			continue;
		}
		/* b's latent frames are the thief's: ask for one. */
		if (thief)
			blitz_ask(w, thief);
		if (spins < BLITZ_JOIN_SPINS) {
			spins++;
			cpu_relax();
			cond_resched();
		} else {
			blitz_latch_sleep(w, &f->latch,
					  leapfrog ? blitz_join_ready : NULL,
					  f, TASK_IDLE);
			spins = 0;
		}
	}
}

/*
 * The join's frame @f, open at @i, was promoted: pop it back, moving the
 * jobs a submitted above it to the injection list, or wait for its thief.
 */
static void blitz_join_promoted(struct blitz_worker *w,
				struct blitz_join_frame *f, unsigned int i)
{
	struct blitz_job *job;

	/* Frames i and up are joined: none is latent (P1). */
	WRITE_ONCE(w->forks.published, i);
	blitz_race_window(BLITZ_RACE_JOIN_POP);
	/* Above our frame, only what a submitted (P3). */
	while ((job = blitz_deque_pop(&w->deque))) {
		if (job == &f->job) {
			f->fn(f->arg);
			return;
		}
		blitz_requeue(w, job);
	}
	blitz_join_wait(w, f);
}

/**
 * __blitz_join_promoted - blitz_join(), when its frame was promoted
 * @forks: the current worker's
 * @f: the join's frame
 * @i: where @f was open on the worker's latent stack
 *
 * Context: the worker, in task context, at the join.
 */
void __blitz_join_promoted(struct blitz_forks *forks,
			   struct blitz_join_frame *f, unsigned int i)
{
	blitz_join_promoted(container_of(forks, struct blitz_worker, forks),
			    f, i);
}
EXPORT_SYMBOL_NS_GPL(__blitz_join_promoted, BLITZ_NS);

struct blitz_join_args {
	void (*a)(void *arg);
	void *a_arg;
	void (*b)(void *arg);
	void *b_arg;
};

static void blitz_join_in_pool(void *arg)
{
	struct blitz_join_args *j = arg;

	blitz_join(j->a, j->a_arg, j->b, j->b_arg);
}

/**
 * __blitz_join_slow - blitz_join(), outside a worker or too deep
 * @a: the first function
 * @a_arg: its argument
 * @b: the second function
 * @b_arg: its argument
 *
 * Outside a worker, the join runs in the default pool while the caller
 * sleeps. A worker the per-CPU hint missed joins as inline, once it has
 * set the hint again. A worker with every latent slot taken runs @a, then
 * @b: its older frames give other workers enough to take.
 *
 * Context: process context or a blitz job; may sleep.
 */
void __blitz_join_slow(void (*a)(void *arg), void *a_arg,
		       void (*b)(void *arg), void *b_arg)
{
	struct blitz_join_args j = { a, a_arg, b, b_arg };
	struct blitz_worker *w = blitz_current_worker();

	might_sleep();
	if (!w) {
		WARN_ON_ONCE(blitz_call(NULL, blitz_join_in_pool, &j));
	} else if (w->forks.depth < BLITZ_LATENT_MAX) {
		__blitz_join(&w->forks, a, a_arg, b, b_arg);
	} else {
		a(a_arg);
		b(b_arg);
	}
}
EXPORT_SYMBOL_NS_GPL(__blitz_join_slow, BLITZ_NS);

/* === Parallel loops === */

/*
 * Lazy binary splitting: a loop runs its range chunk by chunk, and only
 * when asked for work does it give away the upper half of what is left,
 * as a promoted frame (Tzannes, Caragea, Barua and Vishkin, PPoPP 2010,
 * with "asked" for "the local deque is empty"). A chunk boundary is a
 * fork point: no frame newer than the loop's is open there. While a chunk
 * runs, the upper half of what is left after it is a latent frame, which
 * a request promotes as it would a join's b: at a fork in the body, or
 * from the CPU while the body is blocked or preempted.
 *
 * A loop with an accumulator (blitz_parallel_reduce()) folds its chunks
 * into it in order; a half given away gets a fresh one, folded into the
 * lower half's once both are done: left to right, whatever ran where.
 */
struct blitz_loop_half {
	struct blitz_join_frame f;
	struct blitz_loop *loop;
	unsigned long lo, hi;
	u64 acc[BLITZ_REDUCE_MAX / sizeof(u64)];
};

/* A half given away, run by a thief or popped back: into a fresh acc. */
static void blitz_loop_half_run(void *arg)
{
	struct blitz_loop_half *h = arg;

	if (h->loop->init)
		h->loop->init(h->loop, h->acc);
	blitz_loop_run(blitz_current_worker(), h->loop, h->lo, h->hi, h->acc);
}

/*
 * Asked for work with nothing older latent: promote the upper half of
 * [@lo, @hi) (at least two indices) and run the lower into @acc.
 */
static noinline void blitz_loop_split(struct blitz_worker *w,
				      struct blitz_loop *loop,
				      unsigned long lo, unsigned long hi,
				      void *acc)
{
	struct blitz_loop_half h = {
		.f = { .fn = blitz_loop_half_run, .arg = &h },
		.loop = loop,
		.lo = lo + (hi - lo) / 2,
		.hi = hi,
	};
	unsigned int i = w->forks.depth;

	__blitz_fork(&w->forks, &h.f, i);
	/* Frames below i are promoted: h.f is latent[published]. */
	blitz_promote(w);
	blitz_loop_run(w, loop, lo, h.lo, acc);
	if (__blitz_unfork(&w->forks, i)) {
		/* The deque was full: it stayed latent. */
		blitz_loop_run(w, loop, h.lo, hi, acc);
		return;
	}
	blitz_join_promoted(w, &h.f, i);
	if (loop->init)
		loop->combine(loop, acc, h.acc);
}

/*
 * Run the body on [@lo, @next), with the upper half of what is left after
 * it, [@next, @hi), open as a latent frame: a body that blocks or is
 * preempted, or forks, can have it promoted, as a join's b, and another
 * worker runs it meanwhile. Without it, a body that waits for another
 * index of its loop (a lock, a call back into its pool's caller) waited
 * for itself. Returns whether the rest was given away, and is done.
 */
static noinline bool blitz_loop_step(struct blitz_worker *w,
				     struct blitz_loop *loop,
				     unsigned long lo, unsigned long next,
				     unsigned long hi, void *acc)
{
	/* Not zeroed: the rest is written when the frame is promoted. */
	struct blitz_loop_half h __uninitialized;
	unsigned int i = w->forks.depth;

	h.f.fn = blitz_loop_half_run;
	h.f.arg = &h;
	h.loop = loop;
	h.lo = next + (hi - next) / 2;
	h.hi = hi;
	__blitz_fork(&w->forks, &h.f, i);
	loop->body(loop, lo, next, acc);
	if (__blitz_unfork(&w->forks, i))
		return false;
	/*
	 * Promoted: open it again, promoted (published is above i, so our
	 * CPU leaves it alone), and run the lower half before the join, as
	 * a split does. Joined first, the lower half would run after the
	 * upper, and a body that waits for a lower index would wait for
	 * ever.
	 */
	if (next < h.lo) {
		__blitz_fork(&w->forks, &h.f, i);
		blitz_loop_run(w, loop, next, h.lo, acc);
		WRITE_ONCE(w->forks.depth, i);
	}
	blitz_join_promoted(w, &h.f, i);
	if (loop->init)
		loop->combine(loop, acc, h.acc);
	return true;
}

/**
 * blitz_loop_run - run a loop's range, splitting it when asked
 * @w: the current worker
 * @loop: the loop
 * @lo: first index
 * @hi: one past the last, above @lo
 * @acc: the accumulator the range folds into, if @loop has one
 *
 * A range longer than a chunk is run in ranges that start at one index
 * and double up to the chunk, and that are never more than half of what
 * is left, so they shrink again to one index at the end. A request is
 * heard at the next boundary: early in the run, about as long after the
 * start as it came; late, after at most half of what is left. When
 * every range was a whole chunk, the first request of a loop started on
 * a cold worker, one share interval in, waited for the first chunk to
 * end, and a worker that ran out of work near the end waited for the
 * other's last chunk: the halves ended up to a chunk apart. It costs a
 * run about twice log2(chunk) more calls of the body. A range of at most
 * a chunk is one call. Each range but the last runs with the upper half
 * of what is left open as a latent frame (blitz_loop_step()), if the
 * worker has the stack and a free slot for it.
 *
 * Context: a worker, in task context, with no latent frame newer than the
 * loop's.
 */
void blitz_loop_run(struct blitz_worker *w, struct blitz_loop *loop,
		    unsigned long lo, unsigned long hi, void *acc)
{
	unsigned long chunk = loop->chunk;
	unsigned long step = hi - lo > chunk ? 1 : chunk;
	/* The same at every boundary: same depth, same stack. */
	bool room = w->forks.depth < BLITZ_LATENT_MAX &&
		    !blitz_stack_below(BLITZ_SPLIT_STACK);

	while (hi - lo > step) {
		if (unlikely(__blitz_fork_asked(&w->forks)) &&
		    blitz_loop_slow(w) && room) {
			blitz_loop_split(w, loop, lo, hi, acc);
			return;
		}
		if (!room)
			loop->body(loop, lo, lo + step, acc);
		else if (blitz_loop_step(w, loop, lo, lo + step, hi, acc))
			return;
		lo += step;
		step = step < chunk / 2 ? 2 * step : chunk;
		step = min(step, max((hi - lo) / 2, 1UL));
	}
	loop->body(loop, lo, hi, acc);
}

struct blitz_loop_call {
	struct blitz_loop *loop;
	unsigned long start, end;
	void *acc;
};

/*
 * grain 0: chunks of about 1/32 of a worker's share. A boundary costs a
 * few loads and stores (a fork and an unfork); the shorter ranges at the
 * start and end of a run (blitz_loop_run()) keep the chunk from bounding
 * the imbalance.
 */
static void blitz_loop_in_pool(void *arg)
{
	struct blitz_loop_call *c = arg;
	struct blitz_worker *w = blitz_current_worker();

	if (!c->loop->chunk)
		c->loop->chunk = max((c->end - c->start) /
				     (32UL * w->pool->nr_workers), 1UL);
	blitz_loop_run(w, c->loop, c->start, c->end, c->acc);
}

/**
 * blitz_loop - run a loop over [@start, @end), in parallel
 * @loop: the loop; a chunk of 0 is chosen on the worker that starts it
 * @start: first index
 * @end: one past the last, above @start
 * @acc: the accumulator of the whole range, if @loop has one
 *
 * Inside a worker, in that worker's pool; outside, in the default pool,
 * while the caller sleeps.
 *
 * Context: process context or a blitz job; may sleep.
 * Return: 0, or -ESHUTDOWN when called from outside while the default
 * pool is being destroyed (nothing ran).
 */
int blitz_loop(struct blitz_loop *loop, unsigned long start,
	       unsigned long end, void *acc)
{
	struct blitz_loop_call c = { loop, start, end, acc };

	if (!blitz_current_worker())
		return blitz_call(NULL, blitz_loop_in_pool, &c);
	blitz_loop_in_pool(&c);
	return 0;
}

struct blitz_for {
	struct blitz_loop loop;
	void (*fn)(unsigned long lo, unsigned long hi, void *arg);
	void *arg;
};

static void blitz_for_body(struct blitz_loop *loop, unsigned long lo,
			   unsigned long hi, void *acc)
{
	struct blitz_for *f = container_of(loop, struct blitz_for, loop);

	f->fn(lo, hi, f->arg);
}

/**
 * blitz_parallel_for - call a function on ranges covering an interval
 * @start: first index
 * @end: one past the last index
 * @grain: the longest range @fn is given, or 0 to choose: about 1/32 of
 *	   the interval's share of each worker of the pool
 * @fn: called as fn(lo, hi, @arg) on non-empty, non-overlapping ranges
 *	that together cover [@start, @end) exactly once, in parallel
 * @arg: passed to @fn
 *
 * The caller runs [@start, @end) in ranges, in order, and, each time
 * another worker asks for work between two ranges, gives it the upper half
 * of what is left, which it may split in turn (lazy binary splitting).
 * While a range runs, the upper half of what is left is offered as a
 * join's b is: @fn may block, even until an index in that upper half has
 * run, as long as another worker of the pool is free. A range is at most
 * @grain long: the first is one index, each next one twice the last up to
 * @grain, and none is over half of what is left, so that a request is
 * heard soon at the start and at the end. An interval of at most @grain is
 * one call. A worker with less than a quarter of its stack left splits no
 * further. Inside a worker, the loop runs in that worker's pool; outside,
 * in the default pool while the caller sleeps.
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
	struct blitz_for f = {
		.loop = { .body = blitz_for_body, .chunk = grain },
		.fn = fn,
		.arg = arg,
	};

	might_sleep();
	if (start > end || !fn)
		return -EINVAL;
	if (start == end)
		return 0;
	return blitz_loop(&f.loop, start, end, NULL);
}
EXPORT_SYMBOL_NS_GPL(blitz_parallel_for, BLITZ_NS);

/* === Calls into a pool === */

/* A blitz_call() in progress, on the caller's stack. */
struct blitz_call_frame {
	struct blitz_job job;
	void (*fn)(void *arg);
	void *arg;
	struct blitz_latch done;
	struct task_struct *task;
};

/* The call's function, on a worker of the called pool. */
static void blitz_call_func(struct blitz_job *job)
{
	struct blitz_call_frame *f = container_of(job, struct blitz_call_frame,
						  job);
	/*
	 * The caller may return and exit once the latch is set, and it need
	 * not be a worker whose pool we hold: keep its task until woken.
	 */
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
 * blitz_join() and blitz_parallel_for() called by @fn use @pool. Called
 * from a worker of @pool, @fn simply runs inline. Otherwise @fn runs as
 * a job of @pool, and the caller sleeps until it returns; a worker of
 * another pool that calls runs nothing meanwhile, and a spare worker of
 * its pool takes its CPU, so calls across pools, and calls back into the
 * caller's pool, do not deadlock (within the spare bound:
 * Documentation/blitz/api.rst).
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
