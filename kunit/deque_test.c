// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the Chase-Lev deque: single-threaded semantics, then one
 * owner pushing and popping against N thieves, every item counted.
 */
#include <kunit/test.h>
#include <linux/random.h>
#include <linux/vmalloc.h>

#include "../blitz_kmod/deque.h"
#include "test_threads.h"

static void deque_test_lifo_fifo(struct kunit *test)
{
	struct blitz_job jobs[4];
	struct blitz_deque *dq;
	int i;

	dq = kunit_kzalloc(test, sizeof(*dq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dq);
	blitz_deque_init(dq);

	KUNIT_EXPECT_TRUE(test, blitz_deque_empty(dq));
	KUNIT_EXPECT_NULL(test, blitz_deque_pop(dq));
	KUNIT_EXPECT_NULL(test, blitz_deque_steal(dq));

	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_TRUE(test, blitz_deque_push(dq, &jobs[i]));
	KUNIT_EXPECT_FALSE(test, blitz_deque_empty(dq));

	/* Thieves take the oldest, the owner the newest. */
	KUNIT_EXPECT_PTR_EQ(test, blitz_deque_steal(dq), &jobs[0]);
	KUNIT_EXPECT_PTR_EQ(test, blitz_deque_pop(dq), &jobs[3]);
	KUNIT_EXPECT_PTR_EQ(test, blitz_deque_steal(dq), &jobs[1]);
	KUNIT_EXPECT_PTR_EQ(test, blitz_deque_pop(dq), &jobs[2]);
	KUNIT_EXPECT_NULL(test, blitz_deque_pop(dq));
	KUNIT_EXPECT_NULL(test, blitz_deque_steal(dq));
	KUNIT_EXPECT_TRUE(test, blitz_deque_empty(dq));
}

static void deque_test_full(struct kunit *test)
{
	struct blitz_deque *dq;
	struct blitz_job job;
	int i;

	dq = kunit_kzalloc(test, sizeof(*dq), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dq);
	blitz_deque_init(dq);

	for (i = 0; i < BLITZ_DEQUE_SLOTS; i++)
		KUNIT_ASSERT_TRUE(test, blitz_deque_push(dq, &job));
	KUNIT_EXPECT_FALSE(test, blitz_deque_push(dq, &job));

	/* A steal frees a slot; a pop frees one too. */
	KUNIT_EXPECT_PTR_EQ(test, blitz_deque_steal(dq), &job);
	KUNIT_EXPECT_TRUE(test, blitz_deque_push(dq, &job));
	KUNIT_EXPECT_FALSE(test, blitz_deque_push(dq, &job));
	KUNIT_EXPECT_PTR_EQ(test, blitz_deque_pop(dq), &job);
	KUNIT_EXPECT_TRUE(test, blitz_deque_push(dq, &job));
}

/*
 * A list pushed at once: the owner pops it in list order, thieves steal
 * from its end; across the end of the ring, and after single pushes.
 */
static void deque_test_push_list(struct kunit *test)
{
	const int nr = 32;
	struct blitz_job *jobs, *before;
	struct blitz_deque *dq;
	struct llist_node *list;
	int round, i;

	dq = kunit_kzalloc(test, sizeof(*dq), GFP_KERNEL);
	jobs = kunit_kcalloc(test, nr, sizeof(*jobs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dq);
	KUNIT_ASSERT_NOT_NULL(test, jobs);
	blitz_deque_init(dq);

	/* Start 10 short of the ring's end; then wrap around it. */
	for (i = 0; i < BLITZ_DEQUE_SLOTS - 10; i++) {
		KUNIT_ASSERT_TRUE(test, blitz_deque_push(dq, &jobs[0]));
		KUNIT_ASSERT_PTR_EQ(test, blitz_deque_pop(dq), &jobs[0]);
	}
	for (round = 0; round < 3; round++) {
		list = NULL;
		for (i = nr; i-- > 0; ) {
			jobs[i].node.next = list;
			list = &jobs[i].node;
		}
		before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, before);
		/* A job pushed before the list is stolen before it. */
		KUNIT_ASSERT_TRUE(test, blitz_deque_push(dq, before));
		blitz_deque_push_list(dq, list, nr);
		KUNIT_EXPECT_PTR_EQ(test, blitz_deque_steal(dq), before);
		KUNIT_EXPECT_PTR_EQ(test, blitz_deque_steal(dq), &jobs[nr - 1]);
		KUNIT_EXPECT_PTR_EQ(test, blitz_deque_steal(dq), &jobs[nr - 2]);
		for (i = 0; i < nr - 2; i++)
			KUNIT_EXPECT_PTR_EQ(test, blitz_deque_pop(dq), &jobs[i]);
		KUNIT_EXPECT_NULL(test, blitz_deque_pop(dq));
		KUNIT_EXPECT_TRUE(test, blitz_deque_empty(dq));
	}
}

/* Indices run far past the ring size: every slot is reused many times. */
static void deque_test_wrap(struct kunit *test)
{
	const int nr = 8 * BLITZ_DEQUE_SLOTS;
	struct blitz_job *jobs, *job, *last = NULL;
	struct blitz_deque *dq;
	int i;

	dq = kunit_kzalloc(test, sizeof(*dq), GFP_KERNEL);
	jobs = kunit_kcalloc(test, nr, sizeof(*jobs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dq);
	KUNIT_ASSERT_NOT_NULL(test, jobs);
	blitz_deque_init(dq);

	/* Keep a few jobs queued so steal and pop meet in the middle. */
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_TRUE(test, blitz_deque_push(dq, &jobs[i]));
	for (i = 3; i < nr; i++) {
		KUNIT_ASSERT_TRUE(test, blitz_deque_push(dq, &jobs[i]));
		if (i % 2) {
			KUNIT_ASSERT_PTR_EQ(test, blitz_deque_pop(dq), &jobs[i]);
		} else {
			/* FIFO: each steal is newer than the last one. */
			job = blitz_deque_steal(dq);
			KUNIT_ASSERT_NOT_NULL(test, job);
			KUNIT_ASSERT_TRUE(test, !last || job > last);
			last = job;
		}
	}
	KUNIT_EXPECT_EQ(test, dq->bottom - dq->top, 3L);
	KUNIT_EXPECT_GT(test, dq->top, 3L * BLITZ_DEQUE_SLOTS);
}

/* === Owner against thieves === */

#define STRESS_ITEMS	65536

struct deque_stress {
	struct blitz_deque *dq;
	struct blitz_job *items;
	atomic_t *hits;
	struct blitz_test_threads threads;
	/* Thieves spin without stealing while set: lets the ring fill. */
	bool hold;
	bool owner_done;
	unsigned long overflows;
	atomic_long_t stolen;
	atomic_long_t aborts;
};

static void deque_stress_consume(struct deque_stress *s, struct blitz_job *job)
{
	atomic_inc(&s->hits[job - s->items]);
}

static int deque_stress_thief(void *arg)
{
	struct deque_stress *s = arg;
	struct blitz_job *job;
	long aborts = 0;

	blitz_test_start_line(&s->threads);
	for (;;) {
		if (READ_ONCE(s->hold)) {
			blitz_test_relax();
			continue;
		}
		job = blitz_deque_steal(s->dq);
		if (job == BLITZ_DEQUE_ABORT) {
			aborts++;
		} else if (job) {
			deque_stress_consume(s, job);
			atomic_long_inc(&s->stolen);
			continue;
		} else if (smp_load_acquire(&s->owner_done)) {	/* see owner */
			break;
		}
		blitz_test_relax();
	}
	atomic_long_add(aborts, &s->aborts);
	return 0;
}

/*
 * The owner pushes every item, popping a few now and then. Every fourth
 * burst the thieves are held back until the ring is full, then let go while
 * the owner keeps pushing: pushes fail (overflow) concurrently with steals,
 * and an item that does not fit is consumed by the owner itself, as the
 * executor runs a job inline when its deque is full. After such a burst the
 * owner waits for a steal, so that even one CPU (UML) sees steals racing
 * the owner's pops and a refilled ring.
 */
static void deque_stress_owner(struct deque_stress *s)
{
	struct blitz_job *job;
	int i = 0, burst = 0, n;
	long stolen;

	blitz_test_start_line(&s->threads);
	while (i < STRESS_ITEMS) {
		bool hold = (burst++ % 4) == 0;

		stolen = atomic_long_read(&s->stolen);
		WRITE_ONCE(s->hold, hold);
		for (n = 0; i < STRESS_ITEMS && n < 2 * BLITZ_DEQUE_SLOTS;
		     n++, i++) {
			if (!blitz_deque_push(s->dq, &s->items[i])) {
				s->overflows++;
				deque_stress_consume(s, &s->items[i]);
				WRITE_ONCE(s->hold, false);
			}
		}
		WRITE_ONCE(s->hold, false);
		while (hold && atomic_long_read(&s->stolen) == stolen)
			blitz_test_relax();
		for (n = get_random_u32_below(8); n > 0; n--) {
			job = blitz_deque_pop(s->dq);
			if (job)
				deque_stress_consume(s, job);
		}
		cond_resched();
	}
	while ((job = blitz_deque_pop(s->dq)))
		deque_stress_consume(s, job);
	/* Pairs with smp_load_acquire() in deque_stress_thief(). */
	smp_store_release(&s->owner_done, true);
}

static void deque_test_stress(struct kunit *test)
{
	const int *thieves = test->param_value;
	void *args[BLITZ_TEST_MAX_THREADS];
	struct deque_stress *s;
	int i, bad = 0;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->dq = kunit_kzalloc(test, sizeof(*s->dq), GFP_KERNEL);
	s->items = kunit_kcalloc(test, STRESS_ITEMS, sizeof(*s->items),
				 GFP_KERNEL);
	s->hits = kunit_kcalloc(test, STRESS_ITEMS, sizeof(*s->hits),
				GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->dq);
	KUNIT_ASSERT_NOT_NULL(test, s->items);
	KUNIT_ASSERT_NOT_NULL(test, s->hits);
	blitz_deque_init(s->dq);

	for (i = 0; i < *thieves; i++)
		args[i] = s;
	KUNIT_ASSERT_EQ(test, blitz_test_threads_run(&s->threads, *thieves,
						     deque_stress_thief, args),
			0);
	deque_stress_owner(s);
	KUNIT_EXPECT_EQ(test, blitz_test_threads_join(&s->threads), 0);

	for (i = 0; i < STRESS_ITEMS; i++)
		if (atomic_read(&s->hits[i]) != 1)
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "items not consumed exactly once");
	KUNIT_EXPECT_GT(test, s->overflows, 0UL);
	KUNIT_EXPECT_GT(test, atomic_long_read(&s->stolen), 0L);
	kunit_info(test, "stolen=%ld aborts=%ld overflows=%lu",
		   atomic_long_read(&s->stolen), atomic_long_read(&s->aborts),
		   s->overflows);
}

KUNIT_ARRAY_PARAM(deque_thieves, blitz_test_thread_counts,
		  blitz_test_thread_count_desc);

static struct kunit_case deque_test_cases[] = {
	KUNIT_CASE(deque_test_lifo_fifo),
	KUNIT_CASE(deque_test_full),
	KUNIT_CASE(deque_test_wrap),
	KUNIT_CASE(deque_test_push_list),
	KUNIT_CASE_PARAM(deque_test_stress, deque_thieves_gen_params),
	{}
};

static struct kunit_suite deque_test_suite = {
	.name = "blitz_deque",
	.test_cases = deque_test_cases,
};

kunit_test_suite(deque_test_suite);
