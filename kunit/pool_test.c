// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the executor: error codes, pool lifecycle, and the sleep
 * protocol under a lost-wake-up stress: many rounds in which every worker
 * falls asleep and one job alone must wake one of them.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>

#include "../blitz_kmod/blitz.h"

static void pool_test_errors(struct kunit *test)
{
	struct blitz_job job = BLITZ_JOB_INIT(NULL);
	struct blitz_pool *pool;

	KUNIT_EXPECT_EQ(test, blitz_submit(NULL, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, blitz_submit(NULL, &job), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create(NULL, 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create("", 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create("a/b", 1)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create("x",
							num_possible_cpus() + 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create("default", 1)),
			-EEXIST);

	pool = blitz_pool_create("kunit-errors", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create("kunit-errors", 1)),
			-EEXIST);
	blitz_pool_destroy(pool);
	/* The name is free again. */
	pool = blitz_pool_create("kunit-errors", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	blitz_pool_destroy(pool);
}

struct pool_test_job {
	struct blitz_job job;
	atomic_t *runs;
	struct completion *done;
};

static void pool_test_func(struct blitz_job *job)
{
	struct pool_test_job *j = container_of(job, struct pool_test_job, job);

	atomic_inc(j->runs);
	if (j->done)
		complete(j->done);
}

/* Jobs still queued when destroy begins all run before it returns. */
static void pool_test_destroy_drains(struct kunit *test)
{
	struct pool_test_job *jobs;
	struct blitz_pool *pool;
	atomic_t runs;
	int i, round;

	jobs = kunit_kcalloc(test, 1000, sizeof(*jobs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, jobs);
	for (round = 0; round < 5; round++) {
		atomic_set(&runs, 0);
		pool = blitz_pool_create("kunit-drain",
					 round % num_possible_cpus() + 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
		for (i = 0; i < 1000; i++) {
			blitz_job_init(&jobs[i].job, pool_test_func);
			jobs[i].runs = &runs;
			KUNIT_EXPECT_EQ(test, blitz_submit(pool, &jobs[i].job), 0);
		}
		blitz_pool_destroy(pool);
		KUNIT_EXPECT_EQ(test, atomic_read(&runs), 1000);
	}
}

/* Wait, polling the counter word, until every worker of @pool sleeps. */
static bool pool_test_all_asleep(struct blitz_pool *pool)
{
	unsigned long deadline = jiffies + 5 * HZ;

	while (blitz_sleeping(blitz_counters_load(&pool->counters)) !=
	       pool->nr_workers) {
		if (time_after(jiffies, deadline))
			return false;
		usleep_range(50, 100);
	}
	return true;
}

#define WAKE_ROUNDS	200

static void pool_test_lost_wakeup(struct kunit *test)
{
	struct pool_test_job j = { .job = BLITZ_JOB_INIT(pool_test_func) };
	struct completion done;
	struct blitz_pool *pool;
	atomic_t runs;
	int round, lost = 0;

	pool = blitz_pool_create("kunit-wake", 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	atomic_set(&runs, 0);
	j.runs = &runs;
	j.done = &done;
	for (round = 0; round < WAKE_ROUNDS; round++) {
		if (!pool_test_all_asleep(pool)) {
			KUNIT_FAIL(test, "workers not all asleep in round %d",
				   round);
			break;
		}
		init_completion(&done);
		KUNIT_ASSERT_EQ(test, blitz_submit(pool, &j.job), 0);
		/* A lost wake-up shows as a timeout, not as a hang. */
		if (!wait_for_completion_timeout(&done, 10 * HZ)) {
			lost++;
			break;
		}
	}
	blitz_pool_destroy(pool);
	KUNIT_EXPECT_EQ(test, lost, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&runs), round);
	kunit_info(test, "rounds=%d", round);
}

static struct kunit_case pool_test_cases[] = {
	KUNIT_CASE(pool_test_errors),
	KUNIT_CASE(pool_test_destroy_drains),
	KUNIT_CASE_SLOW(pool_test_lost_wakeup),
	{}
};

static struct kunit_suite pool_test_suite = {
	.name = "blitz_pool",
	.test_cases = pool_test_cases,
};

kunit_test_suite(pool_test_suite);
