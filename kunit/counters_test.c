// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the packed sleep counters: field arithmetic, JEC parity
 * and wrap, and every operation racing from many threads.
 */
#include <kunit/test.h>

#include "../blitz_kmod/counters.h"
#include "test_threads.h"

static u64 counters_word(u32 jec, unsigned int inactive, unsigned int sleeping)
{
	return (u64)jec << 32 | (u64)inactive << 16 | sleeping;
}

static void counters_test_fields(struct kunit *test)
{
	struct blitz_counters ctr;
	u64 c;

	blitz_counters_init(&ctr);
	c = blitz_counters_load(&ctr);
	KUNIT_EXPECT_EQ(test, blitz_sleeping(c), 0U);
	KUNIT_EXPECT_EQ(test, blitz_inactive(c), 0U);
	KUNIT_EXPECT_EQ(test, blitz_jec(c), 0U);

	blitz_add_inactive(&ctr);
	blitz_add_inactive(&ctr);
	blitz_add_inactive(&ctr);
	c = blitz_counters_load(&ctr);
	KUNIT_EXPECT_EQ(test, blitz_inactive(c), 3U);

	/* A stale snapshot cannot register a sleeper. */
	KUNIT_EXPECT_FALSE(test, blitz_try_add_sleeping(&ctr, 0));
	KUNIT_EXPECT_TRUE(test, blitz_try_add_sleeping(&ctr, c));
	c = blitz_counters_load(&ctr);
	KUNIT_EXPECT_EQ(test, blitz_sleeping(c), 1U);
	KUNIT_EXPECT_TRUE(test, blitz_try_add_sleeping(&ctr, c));
	KUNIT_EXPECT_TRUE(test, blitz_try_add_sleeping(&ctr, c + 1));

	/* Three inactive, all asleep: none awake and idle. */
	c = blitz_counters_load(&ctr);
	KUNIT_EXPECT_EQ(test, blitz_awake_idle(c), 0U);
	/* A waker subtracts a sleeper: it is awake and idle. */
	blitz_sub_sleeping(&ctr);
	KUNIT_EXPECT_EQ(test, blitz_awake_idle(blitz_counters_load(&ctr)), 1U);
	/* It stops looking: the word as left, none awake and idle. */
	c = blitz_sub_inactive(&ctr);
	KUNIT_EXPECT_EQ(test, c, blitz_counters_load(&ctr));
	KUNIT_EXPECT_EQ(test, blitz_inactive(c), 2U);
	KUNIT_EXPECT_EQ(test, blitz_sleeping(c), 2U);
	KUNIT_EXPECT_EQ(test, blitz_awake_idle(c), 0U);
	blitz_sub_sleeping(&ctr);
	blitz_sub_sleeping(&ctr);
	KUNIT_EXPECT_EQ(test, blitz_awake_idle(blitz_counters_load(&ctr)), 2U);
	blitz_sub_inactive(&ctr);
	c = blitz_sub_inactive(&ctr);
	KUNIT_EXPECT_EQ(test, c, 0ULL);
	KUNIT_EXPECT_EQ(test, blitz_counters_load(&ctr), 0ULL);
}

static void counters_test_jec(struct kunit *test)
{
	struct blitz_counters ctr;
	u64 c;

	blitz_counters_init(&ctr);
	/* Starts sleepy: an announcement changes nothing, a post does. */
	KUNIT_EXPECT_FALSE(test, blitz_increment_jec_if(&ctr, false, &c));
	KUNIT_EXPECT_EQ(test, c, 0ULL);
	KUNIT_EXPECT_TRUE(test, blitz_increment_jec_if(&ctr, true, &c));
	KUNIT_EXPECT_EQ(test, blitz_jec(c), 1U);
	KUNIT_EXPECT_EQ(test, blitz_increment_jec_if_sleepy(&ctr), c);
	KUNIT_EXPECT_EQ(test, blitz_jec(blitz_increment_jec_if_active(&ctr)),
			2U);
	KUNIT_EXPECT_EQ(test, blitz_jec(blitz_increment_jec_if_active(&ctr)),
			2U);

	/* A JEC change makes a sleeper's snapshot stale. */
	c = blitz_counters_load(&ctr);
	blitz_increment_jec_if_sleepy(&ctr);
	KUNIT_EXPECT_FALSE(test, blitz_try_add_sleeping(&ctr, c));
}

/* The JEC wraps without a carry into the thread counts (Rayon #797). */
static void counters_test_jec_wrap(struct kunit *test)
{
	struct blitz_counters ctr;
	u64 c;

	atomic64_set(&ctr.word, counters_word(U32_MAX, 5, 2));
	c = blitz_increment_jec_if_active(&ctr);
	KUNIT_EXPECT_EQ(test, c, counters_word(0, 5, 2));
	KUNIT_EXPECT_EQ(test, blitz_counters_load(&ctr), c);
	KUNIT_EXPECT_TRUE(test, blitz_jec_is_sleepy(blitz_jec(c)));
}

/* === Racing threads === */

#define RACE_ROUNDS	20000
#define RACE_JEC_START	(U32_MAX - 1000)

struct counters_race {
	struct blitz_counters ctr;
	struct blitz_test_threads threads;
	atomic_long_t increments;
};

/*
 * Each thread goes through the life of a worker many times: inactive,
 * asleep, woken, active, while toggling the JEC. The fields of the word
 * are never all zero while threads race, so a carry or borrow between
 * fields would show in the final totals.
 */
static int counters_race_thread(void *arg)
{
	struct counters_race *r = arg;
	long increments = 0;
	u64 c;
	int i;

	blitz_test_start_line(&r->threads);
	for (i = 0; i < RACE_ROUNDS; i++) {
		blitz_add_inactive(&r->ctr);
		if (blitz_increment_jec_if(&r->ctr, false, &c))
			increments++;
		do {
			c = blitz_counters_load(&r->ctr);
		} while (!blitz_try_add_sleeping(&r->ctr, c));
		if (blitz_increment_jec_if(&r->ctr, true, &c))
			increments++;
		blitz_sub_sleeping(&r->ctr);
		blitz_sub_inactive(&r->ctr);
		if (!(i % 256))
			cond_resched();
	}
	atomic_long_add(increments, &r->increments);
	return 0;
}

static void counters_test_race(struct kunit *test)
{
	const int *nr = test->param_value;
	void *args[BLITZ_TEST_MAX_THREADS];
	struct counters_race *r;
	u64 c;
	int i;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	atomic64_set(&r->ctr.word, counters_word(RACE_JEC_START, 0, 0));
	for (i = 0; i < *nr; i++)
		args[i] = r;
	KUNIT_ASSERT_EQ(test, blitz_test_threads_run(&r->threads, *nr,
						     counters_race_thread, args),
			0);
	blitz_test_start_line(&r->threads);
	KUNIT_EXPECT_EQ(test, blitz_test_threads_join(&r->threads), 0);

	c = blitz_counters_load(&r->ctr);
	KUNIT_EXPECT_EQ(test, blitz_sleeping(c), 0U);
	KUNIT_EXPECT_EQ(test, blitz_inactive(c), 0U);
	KUNIT_EXPECT_EQ(test, blitz_jec(c),
			(u32)(RACE_JEC_START + atomic_long_read(&r->increments)));
	kunit_info(test, "jec increments=%ld",
		   atomic_long_read(&r->increments));
}

KUNIT_ARRAY_PARAM(counters_threads, blitz_test_thread_counts,
		  blitz_test_thread_count_desc);

static struct kunit_case counters_test_cases[] = {
	KUNIT_CASE(counters_test_fields),
	KUNIT_CASE(counters_test_jec),
	KUNIT_CASE(counters_test_jec_wrap),
	KUNIT_CASE_PARAM(counters_test_race, counters_threads_gen_params),
	{}
};

static struct kunit_suite counters_test_suite = {
	.name = "blitz_counters",
	.test_cases = counters_test_cases,
};

kunit_test_suite(counters_test_suite);
