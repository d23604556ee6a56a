// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the core latch: every transition, then a waiter falling
 * asleep while setters race to set the latch; no wake-up may be lost and
 * exactly one setter may be told to wake.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/random.h>
#include <linux/wait_bit.h>

#include "../blitz_kmod/latch.h"
#include "test_threads.h"

static int latch_state(struct blitz_latch *latch)
{
	return atomic_read(&latch->state);
}

static void latch_test_transitions(struct kunit *test)
{
	struct blitz_latch latch;

	blitz_latch_init(&latch);
	KUNIT_EXPECT_FALSE(test, blitz_latch_probe(&latch));
	KUNIT_EXPECT_FALSE(test, blitz_latch_fall_asleep(&latch));
	KUNIT_EXPECT_TRUE(test, blitz_latch_get_sleepy(&latch));
	KUNIT_EXPECT_FALSE(test, blitz_latch_get_sleepy(&latch));
	KUNIT_EXPECT_TRUE(test, blitz_latch_fall_asleep(&latch));
	KUNIT_EXPECT_EQ(test, latch_state(&latch), BLITZ_LATCH_SLEEPING);
	blitz_latch_wake_up(&latch);
	KUNIT_EXPECT_EQ(test, latch_state(&latch), BLITZ_LATCH_UNSET);

	/* Setting an awake or sleepy waiter needs no wake-up. */
	KUNIT_EXPECT_FALSE(test, blitz_latch_set(&latch));
	KUNIT_EXPECT_TRUE(test, blitz_latch_probe(&latch));
	blitz_latch_init(&latch);
	KUNIT_EXPECT_TRUE(test, blitz_latch_get_sleepy(&latch));
	KUNIT_EXPECT_FALSE(test, blitz_latch_set(&latch));
	KUNIT_EXPECT_FALSE(test, blitz_latch_fall_asleep(&latch));

	/* Setting a sleeper does; SET is final. */
	blitz_latch_init(&latch);
	KUNIT_EXPECT_TRUE(test, blitz_latch_get_sleepy(&latch));
	KUNIT_EXPECT_TRUE(test, blitz_latch_fall_asleep(&latch));
	KUNIT_EXPECT_TRUE(test, blitz_latch_set(&latch));
	KUNIT_EXPECT_FALSE(test, blitz_latch_set(&latch));
	blitz_latch_wake_up(&latch);
	KUNIT_EXPECT_TRUE(test, blitz_latch_probe(&latch));
	KUNIT_EXPECT_FALSE(test, blitz_latch_get_sleepy(&latch));
}

/* === A waiter against racing setters === */

#define LATCH_ROUNDS	2000

struct latch_round {
	struct blitz_latch latch;
	struct completion wake;
	atomic_t wakers;
	bool slept;
};

struct latch_race {
	struct latch_round *rounds;
	struct blitz_test_threads threads;
	int round;	/* the round the waiter has reached */
	bool lost;
};

/* Up to ~2 us, so that the waiter and the setters overlap. */
static void latch_race_jitter(void)
{
	ndelay(get_random_u32_below(2000));
}

static int latch_race_setter(void *arg)
{
	struct latch_race *r = arg;
	struct latch_round *rd;
	int i;

	blitz_test_start_line(&r->threads);
	for (i = 0; i < LATCH_ROUNDS; i++) {
		rd = &r->rounds[i];
		/* Pairs with smp_store_release() in latch_race_waiter(). */
		wait_var_event(&r->round, smp_load_acquire(&r->round) >= i);
		latch_race_jitter();
		if (blitz_latch_set(&rd->latch)) {
			atomic_inc(&rd->wakers);
			complete(&rd->wake);
		}
	}
	return 0;
}

/* The waiter side of the sleep protocol, one latch per round. */
static void latch_race_waiter(struct latch_race *r)
{
	struct latch_round *rd;
	int i;

	for (i = 0; i < LATCH_ROUNDS; i++) {
		rd = &r->rounds[i];
		/* Pairs with smp_load_acquire() in latch_race_setter(). */
		smp_store_release(&r->round, i);
		wake_up_var(&r->round);
		latch_race_jitter();
		if (!blitz_latch_get_sleepy(&rd->latch))
			continue;
		latch_race_jitter();
		if (!blitz_latch_fall_asleep(&rd->latch))
			continue;
		rd->slept = true;
		/* A lost wake-up shows as a timeout, not as a hang. */
		if (!wait_for_completion_timeout(&rd->wake, 10 * HZ)) {
			r->lost = true;
			break;
		}
		blitz_latch_wake_up(&rd->latch);
	}
	/* Releases any setter still waiting for a round. */
	smp_store_release(&r->round, LATCH_ROUNDS);
	wake_up_var(&r->round);
}

static void latch_test_race(struct kunit *test)
{
	const int *nr = test->param_value;
	void *args[BLITZ_TEST_MAX_THREADS];
	struct latch_race *r;
	int i, slept = 0, bad = 0;

	r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r);
	r->rounds = kunit_kcalloc(test, LATCH_ROUNDS, sizeof(*r->rounds),
				  GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, r->rounds);
	for (i = 0; i < LATCH_ROUNDS; i++) {
		blitz_latch_init(&r->rounds[i].latch);
		init_completion(&r->rounds[i].wake);
	}
	r->round = -1;
	for (i = 0; i < *nr; i++)
		args[i] = r;
	KUNIT_ASSERT_EQ(test, blitz_test_threads_run(&r->threads, *nr,
						     latch_race_setter, args),
			0);
	blitz_test_start_line(&r->threads);
	latch_race_waiter(r);
	KUNIT_EXPECT_EQ(test, blitz_test_threads_join(&r->threads), 0);

	KUNIT_EXPECT_FALSE_MSG(test, r->lost, "a wake-up was lost");
	for (i = 0; i < LATCH_ROUNDS; i++) {
		struct latch_round *rd = &r->rounds[i];

		slept += rd->slept;
		/* Exactly one setter wakes a sleeper, none wakes the awake. */
		if (atomic_read(&rd->wakers) != rd->slept ||
		    !blitz_latch_probe(&rd->latch))
			bad++;
	}
	KUNIT_EXPECT_EQ(test, bad, 0);
	kunit_info(test, "rounds=%d slept=%d", LATCH_ROUNDS, slept);
}

KUNIT_ARRAY_PARAM(latch_setters, blitz_test_thread_counts,
		  blitz_test_thread_count_desc);

static struct kunit_case latch_test_cases[] = {
	KUNIT_CASE(latch_test_transitions),
	KUNIT_CASE_PARAM(latch_test_race, latch_setters_gen_params),
	{}
};

static struct kunit_suite latch_test_suite = {
	.name = "blitz_latch",
	.test_cases = latch_test_cases,
};

kunit_test_suite(latch_test_suite);
