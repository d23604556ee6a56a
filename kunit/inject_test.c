// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the injection queue: FIFO order across batches and
 * backlogs, then producers in task and hard interrupt context against N
 * takers, every item counted; both with the queue's bit in a queued
 * bitmap, which must be set whenever the queue holds items.
 */
#include <kunit/test.h>
#include <linux/hrtimer.h>
#include <linux/random.h>

#include "../blitz_kmod/inject.h"
#include "test_threads.h"

struct inject_item {
	struct llist_node node;
	unsigned int producer;
};

static struct inject_item *inject_item(struct llist_node *node)
{
	return llist_entry(node, struct inject_item, node);
}

/* Add as blitz_inject() does: the add that found the list empty marks it. */
static void inject_add(struct blitz_inject *q, unsigned long *queued,
		       struct inject_item *item)
{
	if (blitz_inject_add(q, &item->node))
		blitz_inject_mark(queued, 0);
}

static void inject_add_range(struct blitz_inject *q, unsigned long *queued,
			     struct inject_item *items, unsigned int from,
			     unsigned int to)
{
	for (; from < to; from++)
		inject_add(q, queued, &items[from]);
}

/*
 * Take batches of up to @max from @q until @nr items came, checking that
 * they come in order, from @next on; returns the next expected.
 */
static unsigned int inject_take_in_order(struct kunit *test,
					 struct blitz_inject *q,
					 unsigned long *queued,
					 struct inject_item *items,
					 unsigned int next, unsigned int nr,
					 unsigned int max)
{
	struct llist_node *batch, *pos;
	unsigned int n, taken;
	bool back;

	while (nr) {
		KUNIT_ASSERT_TRUE(test, test_bit(0, queued));
		batch = blitz_inject_take(q, min(max, nr), &taken, queued, 0,
					  &back);
		KUNIT_ASSERT_NOT_NULL(test, batch);
		n = 0;
		for (pos = batch; pos; pos = pos->next, n++, nr--) {
			KUNIT_ASSERT_GT(test, nr, 0U);
			KUNIT_ASSERT_PTR_EQ(test, inject_item(pos), &items[next]);
			next++;
		}
		KUNIT_EXPECT_LE(test, n, max);
		KUNIT_EXPECT_EQ(test, n, taken);
		/* Put back: the rest, moved out to be reversed. */
		if (back)
			KUNIT_EXPECT_FALSE(test, blitz_inject_empty(q));
		/* The bit is clear exactly when the queue is empty. */
		KUNIT_EXPECT_NE(test, test_bit(0, queued),
				blitz_inject_empty(q));
	}
	return next;
}

#define FIFO_ITEMS	1000

static void inject_test_fifo(struct kunit *test)
{
	struct inject_item *items;
	struct blitz_inject *q;
	unsigned int next, added, taken;
	unsigned long queued = 0;
	bool back;

	q = kunit_kzalloc(test, sizeof(*q), GFP_KERNEL);
	items = kunit_kcalloc(test, FIFO_ITEMS, sizeof(*items), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_ASSERT_NOT_NULL(test, items);
	blitz_inject_init(q);

	KUNIT_EXPECT_TRUE(test, blitz_inject_empty(q));
	KUNIT_EXPECT_NULL(test,
			  blitz_inject_take(q, 32, &taken, &queued, 0, &back));
	KUNIT_EXPECT_EQ(test, taken, 0U);
	inject_add(q, &queued, &items[0]);
	KUNIT_EXPECT_FALSE(test, blitz_inject_empty(q));
	KUNIT_EXPECT_TRUE(test, test_bit(0, &queued));
	inject_add(q, &queued, &items[1]);
	KUNIT_EXPECT_FALSE(test, blitz_inject_empty(q));

	/* One at a time; then a backlog with newer items queued behind it. */
	next = inject_take_in_order(test, q, &queued, items, 0, 1, 1);
	inject_add_range(q, &queued, items, 2, 100);
	next = inject_take_in_order(test, q, &queued, items, next, 7, 7);
	KUNIT_EXPECT_FALSE(test, blitz_inject_empty(q));
	inject_add_range(q, &queued, items, 100, 200);
	next = inject_take_in_order(test, q, &queued, items, next, 192, 32);
	KUNIT_EXPECT_TRUE(test, blitz_inject_empty(q));

	/* Overload: 40 come for every 32 that go; none is overtaken. */
	for (added = 200; added < FIFO_ITEMS; added += 40) {
		inject_add_range(q, &queued, items, added, added + 40);
		next = inject_take_in_order(test, q, &queued, items, next, 32,
					    32);
	}
	next = inject_take_in_order(test, q, &queued, items, next,
				    FIFO_ITEMS - next, 32);
	KUNIT_EXPECT_EQ(test, next, FIFO_ITEMS);
	KUNIT_EXPECT_TRUE(test, blitz_inject_empty(q));
	KUNIT_EXPECT_NULL(test,
			  blitz_inject_take(q, 32, &taken, &queued, 0, &back));
	KUNIT_EXPECT_EQ(test, taken, 0U);

	/* A bit left set on an empty queue is cleared by the next take. */
	set_bit(0, &queued);
	KUNIT_EXPECT_NULL(test,
			  blitz_inject_take(q, 32, &taken, &queued, 0, &back));
	KUNIT_EXPECT_FALSE(test, test_bit(0, &queued));
}

/* === Producers in task and hardirq context against N takers === */

#define STRESS_TASK_ITEMS	20000	/* each of the two task producers */
#define STRESS_IRQ_ITEMS	4000	/* the hrtimer's */
#define STRESS_IRQ_BURST	8	/* added per expiry */
#define STRESS_PRODUCERS	3	/* the test, a kthread, the hrtimer */
#define STRESS_ITEMS		(2 * STRESS_TASK_ITEMS + STRESS_IRQ_ITEMS)

struct inject_stress {
	struct blitz_inject q;
	unsigned long queued;
	struct inject_item *items;
	atomic_t *hits;
	struct blitz_test_threads producer, takers;
	struct hrtimer timer;
	unsigned int irq_next;		/* the hrtimer's own */
	bool irq_done;
	bool producers_done;
	bool one_taker;
	atomic_long_t taken;
	atomic_t order_errors;
	atomic_t count_errors;	/* batches whose count was wrong */
	atomic_t hint_errors;	/* items found with the queue's bit clear */
};

/*
 * Every 64 items, give the takers a moment to empty the queue, so that
 * takes that empty it, and clear its bit, race the other producers'
 * first adds. A moment only: with its bit lost, the queue stays full.
 */
static void inject_stress_produce(struct inject_stress *s, unsigned int from,
				  unsigned int to)
{
	unsigned int i;

	for (; from < to; from++) {
		inject_add(&s->q, &s->queued, &s->items[from]);
		if (from % 64)
			continue;
		for (i = 0; i < 64 && !blitz_inject_empty(&s->q); i++)
			blitz_test_relax();
	}
}

static enum hrtimer_restart inject_stress_irq(struct hrtimer *t)
{
	struct inject_stress *s = container_of(t, struct inject_stress, timer);
	unsigned int end = min(s->irq_next + STRESS_IRQ_BURST,
			       (unsigned int)STRESS_ITEMS);

	for (; s->irq_next < end; s->irq_next++)
		inject_add(&s->q, &s->queued, &s->items[s->irq_next]);
	if (s->irq_next == STRESS_ITEMS) {
		/* Pairs with smp_load_acquire() in the test. */
		smp_store_release(&s->irq_done, true);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(20 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static int inject_stress_producer(void *arg)
{
	struct inject_stress *s = arg;

	blitz_test_start_line(&s->producer);
	inject_stress_produce(s, STRESS_TASK_ITEMS, 2 * STRESS_TASK_ITEMS);
	return 0;
}

/*
 * Whether the producers are done and the queue is empty. With the
 * producers done, and under the lock, where no taker is between clearing
 * the bit and looking at the list again, a queue holding items has its
 * bit set: if not, count an error, and set it, to take the items.
 */
static bool inject_stress_over(struct inject_stress *s)
{
	bool empty;

	/* Pairs with smp_store_release() in the test. */
	if (!smp_load_acquire(&s->producers_done))
		return false;
	raw_spin_lock(&s->q.lock);
	empty = blitz_inject_empty(&s->q);
	if (!empty && !test_bit(0, &s->queued)) {
		atomic_inc(&s->hint_errors);
		set_bit(0, &s->queued);
	}
	raw_spin_unlock(&s->q.lock);
	return empty;
}

/*
 * Take random batches, only while the queue's bit is set, as a worker
 * does, until the producers are done and the queue is empty. Within a
 * batch each producer's items must come in the order they were added;
 * with one taker, across batches too.
 */
static int inject_stress_taker(void *arg)
{
	unsigned int last[STRESS_PRODUCERS] = { 0 }, p, i, taken, n;
	bool seen[STRESS_PRODUCERS] = { false }, back;
	struct inject_stress *s = arg;
	struct llist_node *batch, *pos;

	blitz_test_start_line(&s->takers);
	for (;;) {
		batch = NULL;
		if (test_bit(0, &s->queued))
			batch = blitz_inject_take(&s->q,
						  1 + get_random_u32_below(32),
						  &taken, &s->queued, 0, &back);
		if (!batch) {
			if (inject_stress_over(s))
				break;
			blitz_test_relax();
			continue;
		}
		if (!s->one_taker)
			memset(seen, 0, sizeof(seen));
		for (pos = batch, n = 0; pos; pos = pos->next, n++) {
			i = inject_item(pos) - s->items;
			p = inject_item(pos)->producer;
			if (seen[p] && i <= last[p])
				atomic_inc(&s->order_errors);
			seen[p] = true;
			last[p] = i;
			atomic_inc(&s->hits[i]);
			atomic_long_inc(&s->taken);
		}
		if (n != taken)
			atomic_inc(&s->count_errors);
	}
	return 0;
}

static void inject_test_stress(struct kunit *test)
{
	const int *takers = test->param_value;
	void *args[BLITZ_TEST_MAX_THREADS];
	struct inject_stress *s;
	int i, bad = 0;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->items = kunit_kcalloc(test, STRESS_ITEMS, sizeof(*s->items),
				 GFP_KERNEL);
	s->hits = kunit_kcalloc(test, STRESS_ITEMS, sizeof(*s->hits),
				GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s->items);
	KUNIT_ASSERT_NOT_NULL(test, s->hits);
	blitz_inject_init(&s->q);
	for (i = 0; i < STRESS_ITEMS; i++)
		s->items[i].producer = i / STRESS_TASK_ITEMS;
	s->irq_next = 2 * STRESS_TASK_ITEMS;
	s->one_taker = *takers == 1;

	for (i = 0; i < *takers; i++)
		args[i] = s;
	KUNIT_ASSERT_EQ(test, blitz_test_threads_run(&s->takers, *takers,
						     inject_stress_taker, args),
			0);
	KUNIT_ASSERT_EQ(test, blitz_test_threads_run(&s->producer, 1,
						     inject_stress_producer,
						     args),
			0);
	hrtimer_init(&s->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	s->timer.function = inject_stress_irq;
	blitz_test_start_line(&s->producer);
	blitz_test_start_line(&s->takers);
	hrtimer_start(&s->timer, ns_to_ktime(20 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	inject_stress_produce(s, 0, STRESS_TASK_ITEMS);
	KUNIT_EXPECT_EQ(test, blitz_test_threads_join(&s->producer), 0);
	while (!smp_load_acquire(&s->irq_done))	/* see inject_stress_irq() */
		blitz_test_relax();
	/* Pairs with smp_load_acquire() in inject_stress_taker(). */
	smp_store_release(&s->producers_done, true);
	KUNIT_EXPECT_EQ(test, blitz_test_threads_join(&s->takers), 0);
	hrtimer_cancel(&s->timer);

	for (i = 0; i < STRESS_ITEMS; i++)
		if (atomic_read(&s->hits[i]) != 1)
			bad++;
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "items not taken exactly once");
	KUNIT_EXPECT_EQ(test, atomic_long_read(&s->taken), (long)STRESS_ITEMS);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->order_errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->count_errors), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&s->hint_errors), 0);
	KUNIT_EXPECT_TRUE(test, blitz_inject_empty(&s->q));
}

KUNIT_ARRAY_PARAM(inject_takers, blitz_test_thread_counts,
		  blitz_test_thread_count_desc);

static struct kunit_case inject_test_cases[] = {
	KUNIT_CASE(inject_test_fifo),
	KUNIT_CASE_PARAM(inject_test_stress, inject_takers_gen_params),
	{}
};

static struct kunit_suite inject_test_suite = {
	.name = "blitz_inject",
	.test_cases = inject_test_cases,
};

kunit_test_suite(inject_test_suite);
