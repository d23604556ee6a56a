// SPDX-License-Identifier: GPL-2.0
/*
 * blitz_sort(): sort() in parallel. A quicksort whose two sides are a
 * blitz_join(), with sort() (lib/sort.c, a heapsort) on ranges below a
 * cutoff and on any range that quicksort splits too unevenly too often
 * (an introsort's depth limit), so that no input is quadratic, and on
 * any range reached with less than BLITZ_SPLIT_STACK left.
 *
 * In place, no allocation, not stable, like sort(). The partition is
 * Hoare's, around the median of the first, middle and last elements:
 * elements equal to the pivot stop both scans and are spread over both
 * sides, so that runs of equal keys split evenly.
 */
#include <linux/log2.h>
#include <linux/sort.h>

#include "blitz.h"

/* Below this many elements, sort() does it alone. */
#define BLITZ_SORT_LEAF		256

struct blitz_sort {
	size_t size;
	cmp_func_t cmp;
	swap_func_t swap_fn;	/* the caller's, or blitz_sort_swap() */
	swap_func_t leaf_swap;	/* the caller's, for sort() */
};

struct blitz_sort_range {
	const struct blitz_sort *s;
	char *base;
	size_t num;
	unsigned int depth;	/* splits left before sort() takes over */
};

/*
 * The swap sort() would use when none is given: by u64, u32 or byte,
 * as the elements' size and alignment allow.
 */
static void blitz_sort_swap(void *a, void *b, int size)
{
	unsigned long align = (unsigned long)a | (unsigned long)b | size;
	int i;

	if (!(align & 7)) {
		u64 *x = a, *y = b;

		for (i = 0; i < size / 8; i++)
			swap(x[i], y[i]);
	} else if (!(align & 3)) {
		u32 *x = a, *y = b;

		for (i = 0; i < size / 4; i++)
			swap(x[i], y[i]);
	} else {
		u8 *x = a, *y = b;

		for (i = 0; i < size; i++)
			swap(x[i], y[i]);
	}
}

static void *blitz_sort_at(const struct blitz_sort_range *r, size_t i)
{
	return r->base + i * r->s->size;
}

static void blitz_sort_exchange(const struct blitz_sort_range *r, size_t i,
				size_t j)
{
	if (i != j)
		r->s->swap_fn(blitz_sort_at(r, i), blitz_sort_at(r, j), r->s->size);
}

static int blitz_sort_cmp(const struct blitz_sort_range *r, size_t i,
			  size_t j)
{
	return r->s->cmp(blitz_sort_at(r, i), blitz_sort_at(r, j));
}

/*
 * Partition around the median of three, moved to 0; returns where the
 * pivot ends: [0, p) holds no element above it, (p, num) none below.
 */
static size_t blitz_sort_partition(const struct blitz_sort_range *r)
{
	size_t mid = r->num / 2, last = r->num - 1, i = 0, j = r->num;

	/* Order 0, mid, last: the median lands at mid. */
	if (blitz_sort_cmp(r, mid, 0) < 0)
		blitz_sort_exchange(r, mid, 0);
	if (blitz_sort_cmp(r, last, mid) < 0) {
		blitz_sort_exchange(r, last, mid);
		if (blitz_sort_cmp(r, mid, 0) < 0)
			blitz_sort_exchange(r, mid, 0);
	}
	blitz_sort_exchange(r, 0, mid);
	for (;;) {
		while (++i < r->num && blitz_sort_cmp(r, i, 0) < 0)
			;
		/* Element 0, the pivot, stops this scan. */
		while (blitz_sort_cmp(r, --j, 0) > 0)
			;
		if (i >= j)
			break;
		blitz_sort_exchange(r, i, j);
	}
	blitz_sort_exchange(r, 0, j);
	return j;
}

static void blitz_sort_range(void *arg)
{
	struct blitz_sort_range *r = arg, left, right;
	size_t p;

	if (r->num < BLITZ_SORT_LEAF || !r->depth ||
	    blitz_stack_below(BLITZ_SPLIT_STACK)) {
		sort(r->base, r->num, r->s->size, r->s->cmp, r->s->leaf_swap);
		return;
	}
	p = blitz_sort_partition(r);
	left = (struct blitz_sort_range){ r->s, r->base, p, r->depth - 1 };
	right = (struct blitz_sort_range){
		r->s, blitz_sort_at(r, p + 1), r->num - p - 1, r->depth - 1
	};
	blitz_join(blitz_sort_range, &left, blitz_sort_range, &right);
}

/**
 * blitz_sort - sort an array, in parallel on the default pool
 * @base: the array
 * @num: its number of elements
 * @size: the size of an element
 * @cmp: compares two elements, as for sort()
 * @swap: swaps two elements, or NULL for the one sort() would use
 *
 * What sort() does, with the same arguments and result: @base sorted in
 * place by @cmp, not stably, with no allocation. Ranges are partitioned
 * in parallel on the default pool's workers, and ranges of under 256
 * elements sorted by sort(), as is any range a worker reaches with less
 * than a quarter of its stack left. It beats sort() on large arrays: for 10^6
 * u32 (Documentation/blitz, benchmarks), 1.1x-1.2x on one CPU, where
 * quicksort beats sort()'s heapsort, and about 2x on two; on arrays of
 * a few hundred elements it is sort(). @cmp and @swap may run at once
 * on different elements. If the default pool is being destroyed, sort()
 * does it all.
 *
 * Context: process context or a blitz job; may sleep.
 */
void blitz_sort(void *base, size_t num, size_t size, cmp_func_t cmp,
		swap_func_t swap)
{
	struct blitz_sort s = { size, cmp, swap ?: blitz_sort_swap, swap };
	struct blitz_sort_range r = {
		&s, base, num, num > 1 ? 2 * ilog2(num) : 0
	};
	struct blitz_worker *w = blitz_current_worker();

	might_sleep();
	if (num < BLITZ_SORT_LEAF)
		sort(base, num, size, cmp, swap);
	else if (w && w->pool == blitz_default_pool)
		blitz_sort_range(&r);
	else if (blitz_call(NULL, blitz_sort_range, &r))
		sort(base, num, size, cmp, swap);
}
EXPORT_SYMBOL_NS_GPL(blitz_sort, BLITZ_NS);
