// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for blitz_sort(): against sort() on random, sorted,
 * reversed and all-equal input, 0 to 10^5 elements of 4, 8 and 24 bytes,
 * and 10^6 elements of 4 bytes; and the stack its partitions take.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "../blitz_kmod/blitz.h"
#include "test_stack.h"

/* A 24-byte element: a key and a payload that must travel with it. */
struct rec {
	u64 key, check, pad;
};

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static int cmp_rec(const void *a, const void *b)
{
	return cmp_u64(&((const struct rec *)a)->key,
		       &((const struct rec *)b)->key);
}

static void swap_rec(void *a, void *b, int size)
{
	swap(*(struct rec *)a, *(struct rec *)b);
}

enum order { RANDOM, SORTED, REVERSED, EQUAL, NR_ORDERS };

static u64 key_of(enum order o, size_t i, size_t n)
{
	switch (o) {
	case RANDOM:
		return get_random_u32_below(n / 2 + 1);
	case SORTED:
		return i;
	case REVERSED:
		return n - i;
	default:
		return 7;
	}
}

static void fill(void *a, size_t n, size_t size, enum order o)
{
	size_t i;

	for (i = 0; i < n; i++) {
		u64 k = key_of(o, i, n);

		if (size == 4)
			((u32 *)a)[i] = k;
		else if (size == 8)
			((u64 *)a)[i] = k;
		else
			((struct rec *)a)[i] = (struct rec){ k, k * 3 + 1, i };
	}
}

/* Under KCSAN, whose checks make sort() slow, the largest is 20000. */
static const size_t sort_sizes[] = {
	0, 1, 2, 3, 255, 256, 1000, 1023, 1024, 1025, 4097,
	IS_ENABLED(CONFIG_KCSAN) ? 20000 : 100000,
};

/* blitz_sort() leaves what sort() leaves: the same keys, in order. */
static void sort_check(struct kunit *test, size_t size, cmp_func_t cmp,
		       swap_func_t swp)
{
	size_t max = sort_sizes[ARRAY_SIZE(sort_sizes) - 1], i, n;
	void *a = vmalloc(max * size), *b = vmalloc(max * size);
	enum order o;
	int s;

	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	for (s = 0; s < ARRAY_SIZE(sort_sizes); s++) {
		n = sort_sizes[s];
		for (o = 0; o < NR_ORDERS; o++) {
			fill(a, n, size, o);
			memcpy(b, a, n * size);
			blitz_sort(a, n, size, cmp, swp);
			sort(b, n, size, cmp, swp);
			for (i = 0; i < n; i++)
				if (cmp(a + i * size, b + i * size))
					break;
			KUNIT_EXPECT_EQ_MSG(test, i, n, "size %zu n %zu order %d",
					    size, n, o);
			if (size != sizeof(struct rec))
				continue;
			for (i = 0; i < n; i++) {
				struct rec *r = a + i * size;

				if (r->check != r->key * 3 + 1)
					break;
			}
			KUNIT_EXPECT_EQ(test, i, n);
		}
	}
	vfree(a);
	vfree(b);
}

static void sort_test_u32(struct kunit *test)
{
	sort_check(test, 4, cmp_u32, NULL);
}

/*
 * 10^6 elements, the size of the benchmark, one case per order. Under
 * KCSAN, which slows every access, 2^16: the same splits down to the
 * same leaves, four levels fewer, and a sixteenth of the time. Each case
 * must end within the hung-task timeout (kunit/.kunitconfig, 120 s): the
 * KUnit executor waits for it uninterruptibly. So the result is checked
 * without sort(): in order, and holding each key exactly as often as the
 * input did (every key of fill() is at most n).
 */
#ifdef CONFIG_KCSAN
#define SORT_LARGE (64 * 1024)
#else
#define SORT_LARGE 1000000
#endif

static const enum order large_orders[] = { RANDOM, SORTED, REVERSED, EQUAL };

static void large_order_desc(const enum order *o, char *desc)
{
	static const char * const names[] = {
		[RANDOM] = "random", [SORTED] = "sorted",
		[REVERSED] = "reversed", [EQUAL] = "equal",
	};

	strscpy(desc, names[*o], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(large_order, large_orders, large_order_desc);

/* @n keys of @o, at most @n each, and how often each occurs. */
static u32 *large_fill(size_t n, enum order o, u32 **count)
{
	u32 *a = vmalloc(array_size(n, sizeof(*a)));
	size_t i;

	*count = vzalloc(array_size(n + 1, sizeof(**count)));
	if (!a || !*count) {
		vfree(a);
		vfree(*count);
		return NULL;
	}
	fill(a, n, sizeof(*a), o);
	for (i = 0; i < n; i++)
		(*count)[a[i]]++;
	return a;
}

/* @a is in order and holds the keys that @count counted; frees both. */
static void large_check(struct kunit *test, u32 *a, u32 *count, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (a[i] > n || !count[a[i]] || (i && a[i - 1] > a[i]))
			break;
		count[a[i]]--;
	}
	KUNIT_EXPECT_EQ_MSG(test, i, n, "out of order or not the input's keys");
	vfree(a);
	vfree(count);
}

static void sort_test_u32_large(struct kunit *test)
{
	const enum order *o = test->param_value;
	u32 *count, *a = large_fill(SORT_LARGE, *o, &count);

	KUNIT_ASSERT_NOT_NULL(test, a);
	blitz_sort(a, SORT_LARGE, sizeof(*a), cmp_u32, NULL);
	large_check(test, a, count, SORT_LARGE);
}

/* === The stack a sort's partitions take === */

#define SORT_DEEP	(256 * 1024)
/* Stack left over BLITZ_SPLIT_STACK at the start: a few levels of splits. */
#define SORT_DEEP_MARGIN	1536

struct deep_sort {
	struct blitz_job job;
	u32 *a;
	struct completion done;
};

/*
 * The task whose stack is watched, the least it had left in cmp, and the
 * most joins it had open there, over those open when the sort began.
 */
static struct task_struct *deep_sort_task;
static unsigned long deep_sort_min_left;
static unsigned int deep_sort_base, deep_sort_joins;

static int cmp_u32_deep(const void *a, const void *b)
{
	if (current == deep_sort_task) {
		deep_sort_min_left = min(deep_sort_min_left,
					 blitz_test_stack_left());
		deep_sort_joins = max(deep_sort_joins,
				      blitz_current_worker()->forks.depth -
				      deep_sort_base);
	}
	return cmp_u32(a, b);
}

static void deep_sort_run(void *arg)
{
	struct deep_sort *d = arg;

	deep_sort_base = blitz_current_worker()->forks.depth;
	blitz_sort(d->a, SORT_DEEP, sizeof(u32), cmp_u32_deep, NULL);
}

static void deep_sort_job(struct blitz_job *job)
{
	struct deep_sort *d = container_of(job, struct deep_sort, job);

	deep_sort_task = current;
	blitz_test_stack_descend(BLITZ_SPLIT_STACK + SORT_DEEP_MARGIN,
				 deep_sort_run, d);
	complete(&d->done);
}

/*
 * Random keys split about evenly: 10 levels of partitions down to the
 * leaves, 200 bytes of stack or more each, on the worker that runs every
 * first half. Started with SORT_DEEP_MARGIN bytes more than
 * BLITZ_SPLIT_STACK left, in a job of the default pool, the sort splits
 * a few levels deep, stops splitting at BLITZ_SPLIT_STACK and sorts the
 * rest with sort(): cmp may have one level less than that, and the frames
 * of sort(). Unbounded, it overflowed the stack in UML and in the x86_64
 * KUnit kernel. The test asserts that the sort split (cmp ran under one
 * of its joins) and that it went on below the limit, in sort(): started
 * with 512 bytes of margin, UML's larger frames used them up before the
 * first split, and the test passed without testing anything.
 */
static void sort_test_stack(struct kunit *test)
{
	struct deep_sort d = { .job = BLITZ_JOB_INIT(deep_sort_job) };
	u32 *count;
	int ret;

	d.a = large_fill(SORT_DEEP, RANDOM, &count);
	KUNIT_ASSERT_NOT_NULL(test, d.a);
	init_completion(&d.done);
	deep_sort_min_left = ULONG_MAX;
	deep_sort_joins = 0;
	ret = blitz_submit(NULL, &d.job);
	KUNIT_EXPECT_EQ(test, ret, 0);
	if (!ret)
		wait_for_completion(&d.done);
	deep_sort_task = NULL;
	large_check(test, d.a, count, SORT_DEEP);
	kunit_info(test, "cmp had %lu bytes left at least, under %u joins",
		   deep_sort_min_left, deep_sort_joins);
	KUNIT_EXPECT_GE(test, deep_sort_min_left,
			(unsigned long)(BLITZ_SPLIT_STACK - THREAD_SIZE / 16));
	/* It split, and ran short: the case tested. */
	KUNIT_EXPECT_GE(test, deep_sort_joins, 1U);
	KUNIT_EXPECT_LT(test, deep_sort_min_left,
			(unsigned long)BLITZ_SPLIT_STACK);
}

static void sort_test_u64(struct kunit *test)
{
	sort_check(test, 8, cmp_u64, NULL);
}

static void sort_test_rec(struct kunit *test)
{
	sort_check(test, sizeof(struct rec), cmp_rec, NULL);
	sort_check(test, sizeof(struct rec), cmp_rec, swap_rec);
}

static struct kunit_case sort_test_cases[] = {
	KUNIT_CASE_SLOW(sort_test_u32),
	KUNIT_CASE_PARAM_ATTR(sort_test_u32_large, large_order_gen_params,
			      { .speed = KUNIT_SPEED_SLOW }),
	KUNIT_CASE(sort_test_u64),
	KUNIT_CASE_SLOW(sort_test_stack),
	KUNIT_CASE(sort_test_rec),
	{}
};

static struct kunit_suite sort_test_suite = {
	.name = "blitz_sort",
	.test_cases = sort_test_cases,
};

kunit_test_suite(sort_test_suite);
