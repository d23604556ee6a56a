// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_parallel_reduce(): loop.c's lazy binary splitting loop with
 * accumulators, combined left to right, as Rayon's fold and reduce.
 * Documentation/blitz/design.rst, "Reduce and sort".
 */
#include "blitz.h"

struct blitz_reduce {
	struct blitz_loop loop;
	void (*init)(void *acc, void *arg);
	void (*fn)(unsigned long lo, unsigned long hi, void *acc, void *arg);
	void (*combine)(void *acc, const void *right, void *arg);
	void *arg;
};

static struct blitz_reduce *to_reduce(struct blitz_loop *loop)
{
	return container_of(loop, struct blitz_reduce, loop);
}

static void blitz_reduce_body(struct blitz_loop *loop, unsigned long lo,
			      unsigned long hi, void *acc)
{
	struct blitz_reduce *r = to_reduce(loop);

	r->fn(lo, hi, acc, r->arg);
}

static void blitz_reduce_init(struct blitz_loop *loop, void *acc)
{
	struct blitz_reduce *r = to_reduce(loop);

	r->init(acc, r->arg);
}

static void blitz_reduce_combine(struct blitz_loop *loop, void *acc,
				 const void *right)
{
	struct blitz_reduce *r = to_reduce(loop);

	r->combine(acc, right, r->arg);
}

/**
 * blitz_parallel_reduce - fold an interval, in parallel, into one result
 * @start: first index
 * @end: one past the last index
 * @grain: the longest range @fn is given, or 0 to choose, as in
 *	   blitz_parallel_for()
 * @result: @size bytes: the accumulator of the whole interval
 * @size: the size of an accumulator, 1 to BLITZ_REDUCE_MAX (128) bytes
 * @init: sets up an accumulator (@result first) as the empty fold
 * @fn: folds [lo, hi) into the accumulator acc
 * @combine: folds @right, the fold of the ranges just after @acc's, into @acc
 * @arg: passed to @init, @fn and @combine
 *
 * Runs as blitz_parallel_for(); a range given away gets an accumulator of its
 * own, set up by @init, on a worker's stack (u64-aligned). Accumulators are
 * combined left to right, so an associative operation gives the sequential
 * fold of [@start, @end) into @result, commutative or not. @fn and @combine
 * may run at once on different accumulators.
 *
 * Context: process context or a blitz job; may sleep.
 * Return: 0; -EINVAL for @start > @end, a NULL @result, @init, @fn or
 * @combine, or @size 0 or above BLITZ_REDUCE_MAX (then nothing is called);
 * -ESHUTDOWN when called from outside while the default pool is being
 * destroyed (then only @init was called, on @result). @start == @end sets
 * up @result and returns 0 without calling @fn.
 */
int blitz_parallel_reduce(unsigned long start, unsigned long end,
			  unsigned long grain, void *result, size_t size,
			  void (*init)(void *acc, void *arg),
			  void (*fn)(unsigned long lo, unsigned long hi,
				     void *acc, void *arg),
			  void (*combine)(void *acc, const void *right, void *arg),
			  void *arg)
{
	struct blitz_reduce r = {
		.loop = {
			.body = blitz_reduce_body,
			.init = blitz_reduce_init,
			.combine = blitz_reduce_combine,
			.chunk = grain,
		},
		.init = init,
		.fn = fn,
		.combine = combine,
		.arg = arg,
	};

	might_sleep();
	if (start > end || !result || !init || !fn || !combine || !size ||
	    size > BLITZ_REDUCE_MAX)
		return -EINVAL;
	init(result, arg);
	if (start == end)
		return 0;
	return blitz_loop(&r.loop, start, end, result);
}
EXPORT_SYMBOL_NS_GPL(blitz_parallel_reduce, BLITZ_NS);
