// SPDX-License-Identifier: GPL-2.0
/*
 * Parallel loops, blitz_parallel_for()'s and blitz_parallel_reduce()'s:
 * lazy binary splitting (Tzannes et al., PPoPP 2010), "asked for work"
 * standing for "the local deque is empty". A reduction folds the halves
 * left to right, whatever ran where. Documentation/blitz/design.rst,
 * "Parallel loops".
 */
#include "blitz.h"

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
 * Run the body on [@lo, @next) with the upper half of [@next, @hi) open
 * as a latent frame, so a body that blocks or waits for a later index
 * has it run elsewhere. Returns whether the rest was given away, and done.
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
	 * Promoted: reopen it (published is above i) and run the lower half
	 * before the join, or a body waiting for a lower index would hang.
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

/*
 * Run [@lo, @hi) into @acc, on worker @w, with no latent frame newer than
 * the loop's. Ranges double from one index up to the chunk, never over
 * half of what is left, so a request is heard soon at the start and end.
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

/* grain 0: chunks of about 1/32 of a worker's share. */
static void blitz_loop_in_pool(void *arg)
{
	struct blitz_loop_call *c = arg;
	struct blitz_worker *w = blitz_current_worker();

	if (!c->loop->chunk)
		c->loop->chunk = max((c->end - c->start) /
				     (32UL * w->pool->nr_workers), 1UL);
	blitz_loop_run(w, c->loop, c->start, c->end, c->acc);
}

/*
 * Run @loop over [@start, @end) into @acc: in the caller's pool, or, from
 * outside, in the default pool while the caller sleeps. Returns 0, or
 * -ESHUTDOWN from outside while the default pool is being destroyed.
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
 * The caller runs [@start, @end) in ranges, in order, and gives the upper
 * half of what is left to each worker that asks for work between two
 * ranges (lazy binary splitting). While a range runs, that upper half is
 * offered as a join's b is: @fn may block, even until a later index has
 * run. Ranges grow from one index up to @grain, and an interval of at
 * most @grain is one call. With less than a quarter of its stack left, a
 * worker splits no further. Inside a worker, the loop runs in that
 * worker's pool; outside, in the default pool while the caller sleeps.
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
