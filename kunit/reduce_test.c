// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for blitz_parallel_reduce(): an associative operation that
 * is not commutative gives the sequential result at every grain, and the
 * errors.
 */
#include <kunit/test.h>

#include "../blitz_kmod/blitz.h"

#define HASH_MOD	1000000007ULL
#define HASH_BASE	131ULL

/*
 * A polynomial hash of the index sequence: h(xy) = h(x) * B^len(y) + h(y).
 * Associative, and not commutative: ranges combined out of order, or an
 * index folded twice or not at all, change it.
 */
struct hash {
	u64 h, pow;	/* pow = B^len */
	unsigned long calls, longest;
};

static void hash_init(void *acc, void *arg)
{
	*(struct hash *)acc = (struct hash){ 0, 1, 0, 0 };
}

static void hash_fn(unsigned long lo, unsigned long hi, void *acc, void *arg)
{
	struct hash *a = acc;

	a->longest = max(a->longest, hi - lo);
	for (; lo < hi; lo++) {
		a->h = (a->h * HASH_BASE + lo + 1) % HASH_MOD;
		a->pow = a->pow * HASH_BASE % HASH_MOD;
	}
	a->calls++;
}

static void hash_combine(void *acc, const void *right, void *arg)
{
	struct hash *a = acc;
	const struct hash *r = right;

	a->h = (a->h * r->pow + r->h) % HASH_MOD;
	a->pow = a->pow * r->pow % HASH_MOD;
	a->calls += r->calls;
	a->longest = max(a->longest, r->longest);
}

struct reduce_case {
	unsigned long n, grain;
	struct hash want, got;
	int ret;
};

static void reduce_run(void *arg)
{
	struct reduce_case *c = arg;

	c->ret = blitz_parallel_reduce(0, c->n, c->grain, &c->got,
				       sizeof(c->got), hash_init, hash_fn,
				       hash_combine, NULL);
}

static const unsigned long reduce_sizes[] = { 0, 1, 2, 3, 17, 1000, 100003 };
static const unsigned long reduce_grains[] = { 0, 1, 7, 1000, 1000000 };

/*
 * Every size at every grain, from outside (the default pool) and from
 * a job of a pool with one worker per CPU, where idle workers ask for
 * halves: the sequential hash each time.
 */
static void reduce_test_noncommutative(struct kunit *test)
{
	struct blitz_pool *pool = blitz_pool_create("kunit-reduce", 0);
	struct reduce_case c;
	int i, j;

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	for (i = 0; i < ARRAY_SIZE(reduce_sizes); i++) {
		for (j = 0; j < ARRAY_SIZE(reduce_grains); j++) {
			c = (struct reduce_case){ reduce_sizes[i],
						  reduce_grains[j] };
			hash_init(&c.want, NULL);
			if (c.n)
				hash_fn(0, c.n, &c.want, NULL);
			reduce_run(&c);
			KUNIT_EXPECT_EQ(test, c.ret, 0);
			KUNIT_EXPECT_EQ(test, c.got.h, c.want.h);
			KUNIT_EXPECT_EQ(test, c.got.pow, c.want.pow);
			c.got.h = 0;
			KUNIT_EXPECT_EQ(test, blitz_call(pool, reduce_run, &c), 0);
			KUNIT_EXPECT_EQ(test, c.ret, 0);
			KUNIT_EXPECT_EQ(test, c.got.h, c.want.h);
			/* Grain > 0: ranges no longer than the grain. */
			if (c.grain)
				KUNIT_EXPECT_LE(test, c.got.longest, c.grain);
		}
	}
	blitz_pool_destroy(pool);
}

/* blitz_parallel_reduce() on [@start, @end) into @h with the hash's functions. */
static int reduce_hash(unsigned long start, unsigned long end, void *h,
		       size_t size, bool init, bool fn, bool combine)
{
	return blitz_parallel_reduce(start, end, 0, h, size,
				     init ? hash_init : NULL,
				     fn ? hash_fn : NULL,
				     combine ? hash_combine : NULL, NULL);
}

static void reduce_test_errors(struct kunit *test)
{
	u8 big[BLITZ_REDUCE_MAX + 1];
	struct hash h = { 5, 5, 5, 5 };

	KUNIT_EXPECT_EQ(test, reduce_hash(2, 1, &h, sizeof(h), 1, 1, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reduce_hash(0, 1, NULL, sizeof(h), 1, 1, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reduce_hash(0, 1, &h, sizeof(h), 0, 1, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reduce_hash(0, 1, &h, sizeof(h), 1, 0, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reduce_hash(0, 1, &h, sizeof(h), 1, 1, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reduce_hash(0, 1, big, sizeof(big), 1, 1, 1),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, reduce_hash(0, 1, &h, 0, 1, 1, 1), -EINVAL);
	/* Untouched by the errors. */
	KUNIT_EXPECT_EQ(test, h.h, 5ULL);
	/* Empty: set up, no fn. */
	KUNIT_EXPECT_EQ(test, reduce_hash(3, 3, &h, sizeof(h), 1, 1, 1), 0);
	KUNIT_EXPECT_EQ(test, h.h, 0ULL);
	KUNIT_EXPECT_EQ(test, h.calls, 0UL);
}

static struct kunit_case reduce_test_cases[] = {
	KUNIT_CASE(reduce_test_noncommutative),
	KUNIT_CASE(reduce_test_errors),
	{}
};

static struct kunit_suite reduce_test_suite = {
	.name = "blitz_reduce",
	.test_cases = reduce_test_cases,
};

kunit_test_suite(reduce_test_suite);
