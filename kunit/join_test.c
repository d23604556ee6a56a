// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for fork-join: blitz_join(), blitz_parallel_for() and
 * blitz_call(), against plain recursion and index by index.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/minmax.h>

#include "../blitz_kmod/blitz.h"
#include "../selftests/fib.h"
#include "test_race.h"
#include "test_stack.h"

/* === fib through a join at every node (selftests/fib.h) === */

static void join_test_fib(struct kunit *test)
{
	struct fib f = { 20 };
	struct blitz_pool *pool;

	/* From outside: the default pool. */
	blitz_join(fib_join, &f, fib_join, &(struct fib){ 1 });
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(20));

	/* In a pool of one worker every b is popped back. */
	pool = blitz_pool_create("kunit-fib", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	f.result = 0;
	KUNIT_EXPECT_EQ(test, blitz_call(pool, fib_join, &f), 0);
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(20));
	blitz_pool_destroy(pool);
}

/* === Where b runs === */

struct where {
	struct blitz_worker *a_worker, *b_worker;
	struct completion b_started, release;
	bool hold_a, hold_b;
};

static void where_a(void *arg)
{
	struct where *wh = arg;

	wh->a_worker = blitz_current_worker();
	/* Only a thief can start b while a waits. */
	if (wh->hold_a)
		wait_for_completion(&wh->b_started);
}

static void where_b(void *arg)
{
	struct where *wh = arg;

	wh->b_worker = blitz_current_worker();
	/* a and the test may both wait for this. */
	complete_all(&wh->b_started);
	if (wh->hold_b)
		wait_for_completion(&wh->release);
}

static void where_join(void *arg)
{
	blitz_join(where_a, arg, where_b, arg);
}

static void join_test_popped_back(struct kunit *test)
{
	struct where wh = {};
	struct blitz_pool *pool;

	init_completion(&wh.b_started);
	pool = blitz_pool_create("kunit-pop", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, blitz_call(pool, where_join, &wh), 0);
	KUNIT_EXPECT_NOT_NULL(test, wh.a_worker);
	KUNIT_EXPECT_PTR_EQ(test, wh.a_worker, wh.b_worker);
	blitz_pool_destroy(pool);
}

/* Workers of @pool counted asleep in its counter word. */
static unsigned int join_test_sleeping(struct blitz_pool *pool)
{
	return blitz_sleeping(blitz_counters_load(&pool->counters));
}

struct where_job {
	struct blitz_job job;
	struct where *wh;
	struct completion done;
};

static void where_job_func(struct blitz_job *job)
{
	struct where_job *j = container_of(job, struct where_job, job);

	where_join(j->wh);
	complete(&j->done);
}

/* A joiner asleep on its latch: its sleeps counter moved. */
static bool join_test_joiner_slept(struct where *wh, u64 *sleeps)
{
	struct blitz_worker *w = READ_ONCE(wh->a_worker);

	return w && READ_ONCE(w->stats[BLITZ_STAT_SLEEPS]) > sleeps[w->index];
}

/*
 * a waits for b to start, so b must be stolen; b then blocks, and the
 * joining worker, with nothing else to run, must go to sleep (not spin)
 * until the thief finishes b and wakes it. It sleeps on b's latch, outside
 * the sleep protocol's count: it is busy, not idle.
 */
static void join_test_stolen_sleeps(struct kunit *test)
{
	struct where wh = { .hold_a = true, .hold_b = true };
	struct where_job j = { .job = BLITZ_JOB_INIT(where_job_func), .wh = &wh };
	unsigned long deadline = jiffies + 10 * HZ;
	struct blitz_pool *pool;
	u64 sleeps[2];
	int i;

	if (num_possible_cpus() < 2)
		kunit_skip(test, "a stolen join needs two CPUs");
	init_completion(&wh.b_started);
	init_completion(&wh.release);
	init_completion(&j.done);
	pool = blitz_pool_create("kunit-steal", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	for (i = 0; i < 2; i++)
		sleeps[i] = READ_ONCE(pool->workers[i]->stats[BLITZ_STAT_SLEEPS]);

	KUNIT_ASSERT_EQ(test, blitz_submit(pool, &j.job), 0);
	wait_for_completion(&wh.b_started);
	/* The thief is blocked in b: the joiner goes to sleep. */
	while (!join_test_joiner_slept(&wh, sleeps) &&
	       time_before(jiffies, deadline))
		usleep_range(100, 200);
	KUNIT_EXPECT_TRUE(test, join_test_joiner_slept(&wh, sleeps));
	/* Not in the sleep protocol, where a spare of its CPU may be. */
	if (wh.a_worker)
		KUNIT_EXPECT_FALSE(test, test_bit(wh.a_worker->index,
						  pool->sleepers));
	complete(&wh.release);
	wait_for_completion(&j.done);

	KUNIT_EXPECT_NOT_NULL(test, wh.a_worker);
	KUNIT_EXPECT_NOT_NULL(test, wh.b_worker);
	KUNIT_EXPECT_PTR_NE(test, wh.a_worker, wh.b_worker);
	if (wh.a_worker)
		KUNIT_EXPECT_GT(test, READ_ONCE(wh.a_worker->stats[BLITZ_STAT_SLEEPS]),
				sleeps[wh.a_worker->index]);
	blitz_pool_destroy(pool);
}

/* === A joiner short of stack === */

struct shallow {
	struct blitz_job job;
	struct completion b_started, release, done;
	struct blitz_worker *a_worker, *b_worker;
	unsigned long left;
};

static void shallow_inner_a(void *arg)
{
	wait_for_completion(&((struct shallow *)arg)->release);
}

static void shallow_inner_b(void *arg)
{
}

/* The thief blocks in a join of its own, whose b its CPU promotes. */
static void shallow_b(void *arg)
{
	struct shallow *s = arg;

	s->b_worker = blitz_current_worker();
	/* a and the test both wait for this. */
	complete_all(&s->b_started);
	blitz_join(shallow_inner_a, s, shallow_inner_b, s);
}

static void shallow_a(void *arg)
{
	struct shallow *s = arg;

	s->a_worker = blitz_current_worker();
	wait_for_completion(&s->b_started);
}

static void shallow_join(void *arg)
{
	struct shallow *s = arg;

	s->left = blitz_test_stack_left();
	blitz_join(shallow_a, s, shallow_b, s);
}

/* CPU time @w has used, in ns. */
static u64 shallow_runtime(struct blitz_worker *w)
{
	/* The scheduler updates it as @w runs: a sample is all we need. */
	return data_race(READ_ONCE(w->task->se.sum_exec_runtime));
}

static void shallow_job(struct blitz_job *job)
{
	struct shallow *s = container_of(job, struct shallow, job);

	/* Join with a job's stack and at most 768 bytes left. */
	blitz_test_stack_descend(BLITZ_JOB_STACK + 768, shallow_join, s);
	complete(&s->done);
}

/*
 * A joiner with too little stack to run a job waits for its stolen b
 * and steals nothing. b blocks, and the thief's CPU promotes the frame of
 * b's own join: a frame the joiner may not take, so it must sleep, not
 * spin for it. It spun before: 200 ms of CPU in 200 ms.
 */
static void join_test_short_stack_sleeps(struct kunit *test)
{
	struct shallow s = { .job = BLITZ_JOB_INIT(shallow_job) };
	unsigned long deadline = jiffies + 10 * HZ;
	struct blitz_pool *pool;
	u64 ran;

	if (num_online_cpus() < 2)
		kunit_skip(test, "a stolen join needs two CPUs");
	init_completion(&s.b_started);
	init_completion(&s.release);
	init_completion(&s.done);
	pool = blitz_pool_create("kunit-shallow", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_ASSERT_EQ(test, blitz_submit(pool, &s.job), 0);
	wait_for_completion(&s.b_started);
	/* The joiner asks the thief, blocked: its CPU promotes for it. */
	while (!READ_ONCE(s.b_worker->stats[BLITZ_STAT_PROMOTED]) &&
	       time_before(jiffies, deadline))
		msleep(20);
	KUNIT_EXPECT_GT(test, READ_ONCE(s.b_worker->stats[BLITZ_STAT_PROMOTED]),
			0ULL);
	ran = shallow_runtime(s.a_worker);
	msleep(200);
	ran = shallow_runtime(s.a_worker) - ran;
	complete(&s.release);
	wait_for_completion(&s.done);

	KUNIT_EXPECT_LT(test, s.left, (unsigned long)BLITZ_JOB_STACK + 1024);
	KUNIT_EXPECT_PTR_NE(test, s.a_worker, s.b_worker);
	KUNIT_EXPECT_LT_MSG(test, ran, 50ULL * NSEC_PER_MSEC,
			    "the joiner ran %llu us of 200 ms", ran / 1000);
	blitz_pool_destroy(pool);
}

/* === A frame its thief pushed after b returned === */

struct late {
	struct blitz_pool *pool;
	struct blitz_job job, next;
	struct completion b_started, b2_ran, done, next_done;
	struct blitz_worker *a_worker, *b_worker, *b2_worker, *next_worker;
	bool asked, b2_late;
};

static void late_a(void *arg)
{
	struct late *l = arg;

	l->a_worker = blitz_current_worker();
	wait_for_completion(&l->b_started);
}

/*
 * The thief's b: it submits the job the thief runs next, then returns
 * once the joiner, waiting, has asked it for work; the request stays for
 * the next job's fork.
 */
static void late_b(void *arg)
{
	struct late *l = arg;
	struct blitz_worker *w = blitz_current_worker();
	unsigned long deadline = jiffies + 10 * HZ;

	l->b_worker = w;
	complete(&l->b_started);
	WARN_ON(blitz_submit(l->pool, &l->next));
	while (READ_ONCE(w->forks.share) != BLITZ_SHARE_ASK &&
	       time_before(jiffies, deadline))
		usleep_range(100, 200);
	l->asked = READ_ONCE(w->forks.share) == BLITZ_SHARE_ASK;
}

/* a2 sleeps until b2 has run; the API allows it. */
static void late_a2(void *arg)
{
	struct late *l = arg;

	l->b2_late = !wait_for_completion_timeout(&l->b2_ran, 5 * HZ);
}

static void late_b2(void *arg)
{
	struct late *l = arg;

	l->b2_worker = blitz_current_worker();
	complete(&l->b2_ran);
}

/* The request makes the fork promote b2 at once. */
static void late_next(struct blitz_job *job)
{
	struct late *l = container_of(job, struct late, next);

	l->next_worker = blitz_current_worker();
	blitz_join(late_a2, l, late_b2, l);
	complete(&l->next_done);
}

static void late_job(struct blitz_job *job)
{
	struct late *l = container_of(job, struct late, job);

	blitz_join(late_a, l, late_b, l);
	complete(&l->done);
}

/*
 * A joiner delayed after it saw its latch unset (the leapfrog race
 * window, long and at every pass) finds on the thief's deque b2, a frame
 * the thief promoted after b returned, for a join of its next job, whose
 * a2 sleeps until b2 has run. That frame is not the joiner's: it must
 * leave it for any worker to steal (itself, once its join is over). A
 * joiner that took it, found the latch set, and gave the frame back to
 * the thief, asleep in a2, had b2 run only when a2 gave up, 5 s later.
 */
static void join_test_late_frame(struct kunit *test)
{
	struct late *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct blitz_test_race race;
	int round;

	KUNIT_ASSERT_NOT_NULL(test, l);
	if (num_online_cpus() < 2)
		kunit_skip(test, "a stolen join needs two CPUs");
	blitz_test_race_open(&race, BIT(BLITZ_RACE_LEAPFROG), 1, 50000);
	for (round = 0; round < 10; round++) {
		memset(l, 0, sizeof(*l));
		blitz_job_init(&l->job, late_job);
		blitz_job_init(&l->next, late_next);
		init_completion(&l->b_started);
		init_completion(&l->b2_ran);
		init_completion(&l->done);
		init_completion(&l->next_done);
		l->pool = blitz_pool_create("kunit-late", 2);
		KUNIT_ASSERT_FALSE(test, IS_ERR(l->pool));
		KUNIT_ASSERT_EQ(test, blitz_submit(l->pool, &l->job), 0);
		wait_for_completion(&l->done);
		wait_for_completion(&l->next_done);
		blitz_pool_destroy(l->pool);

		KUNIT_EXPECT_TRUE(test, l->asked);
		KUNIT_EXPECT_PTR_NE(test, l->a_worker, l->b_worker);
		KUNIT_EXPECT_FALSE_MSG(test, l->b2_late,
				       "round %d: b2 ran 5 s late, on %s", round,
				       l->b2_worker == l->b_worker ?
				       "the thief" : "the joiner");
		/*
		 * a2 sleeps until b2 has run: another worker took b2 (the
		 * joiner, done, or, if a spare ran the next job while the
		 * thief slept in b, the thief).
		 */
		KUNIT_EXPECT_PTR_NE(test, l->b2_worker, l->next_worker);
		if (l->b2_late)
			break;
	}
	blitz_test_race_close(&race);
}

/* === Nesting and joins inside submitted jobs === */

struct fib_job {
	struct blitz_job job;
	struct fib f;
	struct completion done;
};

static void fib_job_func(struct blitz_job *job)
{
	struct fib_job *j = container_of(job, struct fib_job, job);

	fib_join(&j->f);
	complete(&j->done);
}

static void join_test_in_job(struct kunit *test)
{
	struct fib_job j = { .job = BLITZ_JOB_INIT(fib_job_func), .f = { 18 } };

	init_completion(&j.done);
	KUNIT_ASSERT_EQ(test, blitz_submit(NULL, &j.job), 0);
	wait_for_completion(&j.done);
	KUNIT_EXPECT_EQ(test, j.f.result, fib_plain(18));
}

/* Many joins in a row, with the JEC about to wrap (Rayon #797). */
static void join_test_many(struct kunit *test)
{
	struct blitz_pool *pool;
	struct fib f = { 25 };
	unsigned int interval = blitz_share_interval_us;

	pool = blitz_pool_create("kunit-many", 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	/* An even offset keeps the JEC's parity; the carry is dropped. */
	atomic64_add((u64)(U32_MAX - 1001) << 32, &pool->counters.word);
	/*
	 * fib(25) makes 242784 joins; with no cooldown, every request of
	 * an idle worker promotes a frame, and each promotion is a post.
	 */
	blitz_share_interval_us = 0;
	KUNIT_EXPECT_EQ(test, blitz_call(pool, fib_join, &f), 0);
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(25));
	f.n = 25;
	KUNIT_EXPECT_EQ(test, blitz_call(pool, fib_join, &f), 0);
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(25));
	blitz_share_interval_us = interval;
	kunit_info(test, "jec=%u", blitz_jec(blitz_counters_load(&pool->counters)));
	blitz_pool_destroy(pool);
}

/* === Beyond BLITZ_LATENT_MAX open frames === */

struct full {
	unsigned int depth_inner, depth_after;
	int a_runs, b_runs, inner_a, inner_b;
};

static void full_inner_a(void *arg)
{
	struct full *s = arg;

	s->inner_a++;
	s->depth_inner = blitz_current_worker()->forks.depth;
}

static void full_inner_b(void *arg)
{
	((struct full *)arg)->inner_b++;
}

/* Joins with every latent slot taken: a, then b, inline (out of line). */
static void full_a(void *arg)
{
	struct full *s = arg;

	s->a_runs++;
	blitz_join(full_inner_a, s, full_inner_b, s);
}

static void full_b(void *arg)
{
	((struct full *)arg)->b_runs++;
}

/*
 * A kernel stack holds fewer than BLITZ_LATENT_MAX nested joins of any
 * real function: pretend the frames below ours are open and promoted
 * (nothing latent, so nothing reads their slots), in a pool of one
 * worker, where nothing is promoted on a switch.
 */
static void full_stack(void *arg)
{
	struct blitz_forks *forks = &blitz_current_worker()->forks;
	unsigned int depth = forks->depth, published = forks->published;

	WRITE_ONCE(forks->depth, BLITZ_LATENT_MAX - 1);
	WRITE_ONCE(forks->published, BLITZ_LATENT_MAX - 1);
	blitz_join(full_a, arg, full_b, arg);
	((struct full *)arg)->depth_after = forks->depth;
	WRITE_ONCE(forks->published, published);
	WRITE_ONCE(forks->depth, depth);
}

static void join_test_full_stack(struct kunit *test)
{
	struct blitz_pool *pool = blitz_pool_create("kunit-full", 1);
	struct full s = {};

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, blitz_call(pool, full_stack, &s), 0);
	blitz_pool_destroy(pool);
	/* The last slot was taken by the outer join, not by the inner one. */
	KUNIT_EXPECT_EQ(test, s.depth_inner, BLITZ_LATENT_MAX);
	KUNIT_EXPECT_EQ(test, s.depth_after, BLITZ_LATENT_MAX - 1);
	KUNIT_EXPECT_EQ(test, s.a_runs, 1);
	KUNIT_EXPECT_EQ(test, s.b_runs, 1);
	KUNIT_EXPECT_EQ(test, s.inner_a, 1);
	KUNIT_EXPECT_EQ(test, s.inner_b, 1);
}

/* === Parallel loops === */

struct cover {
	atomic_t *hits;
	unsigned long start, end, grain;
	atomic_t bad;
};

static void cover_fn(unsigned long lo, unsigned long hi, void *arg)
{
	struct cover *c = arg;
	unsigned long i;

	if (lo >= hi || lo < c->start || hi > c->end ||
	    (c->grain && hi - lo > c->grain))
		atomic_inc(&c->bad);
	for (i = lo; i < hi && i < c->end; i++)
		atomic_inc(&c->hits[i - c->start]);
}

static const unsigned long cover_sizes[] = { 0, 1, 2, 3, 17, 1000, 100003 };
static const unsigned long cover_grains[] = { 0, 1, 7, 1000000 };

static void join_test_parallel_for(struct kunit *test)
{
	struct cover c;
	int s, g, err;
	unsigned long i;

	c.hits = kunit_kcalloc(test, 100003, sizeof(*c.hits), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c.hits);
	for (s = 0; s < ARRAY_SIZE(cover_sizes); s++) {
		for (g = 0; g < ARRAY_SIZE(cover_grains); g++) {
			c.start = 5;
			c.end = 5 + cover_sizes[s];
			c.grain = cover_grains[g];
			atomic_set(&c.bad, 0);
			memset(c.hits, 0, sizeof(*c.hits) * cover_sizes[s]);
			KUNIT_EXPECT_EQ(test, blitz_parallel_for(c.start, c.end,
								 c.grain,
								 cover_fn, &c),
					0);
			err = atomic_read(&c.bad);
			for (i = 0; i < cover_sizes[s]; i++)
				if (atomic_read(&c.hits[i]) != 1)
					err++;
			KUNIT_EXPECT_EQ_MSG(test, err, 0, "size %lu grain %lu",
					    cover_sizes[s], c.grain);
		}
	}
}

/* === The stack a loop's splits take === */

#define DEEP_LOOP_N	256

struct deep_loop {
	struct blitz_worker *w;
	unsigned int hits[DEEP_LOOP_N];
	unsigned long min_left;
	unsigned int max_depth;
};

/* Each call asks again: the next chunk boundary splits, if it may. */
static void deep_loop_body(unsigned long lo, unsigned long hi, void *arg)
{
	struct deep_loop *d = arg;

	d->min_left = min(d->min_left, blitz_test_stack_left());
	d->max_depth = max(d->max_depth, d->w->forks.depth);
	while (lo < hi)
		d->hits[lo++]++;
	WRITE_ONCE(d->w->forks.share, BLITZ_SHARE_ASK);
}

static void deep_loop_run(void *arg)
{
	struct deep_loop *d = arg;

	d->w = blitz_current_worker();
	WARN_ON(blitz_parallel_for(0, DEEP_LOOP_N, 1, deep_loop_body, d));
}

static void deep_loop(void *arg)
{
	blitz_test_stack_descend(BLITZ_SPLIT_STACK + 1024, deep_loop_run, arg);
}

/*
 * A loop asked for work at every chunk boundary splits at each: 8 splits
 * deep for 256 indices, 400 bytes of stack or more each. Started with
 * 1 KiB more than BLITZ_SPLIT_STACK left, it splits once or twice, then
 * runs the rest alone: the body may have one split less than that, and
 * its own frames. Unbounded, it ran 7 splits deep with 1152 bytes left in
 * UML (32 KiB stacks), and the x86_64 KUnit kernel hit the stack's guard
 * page. One worker: its own frames come back to it.
 */
static void join_test_loop_stack(struct kunit *test)
{
	struct deep_loop *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	unsigned int interval = blitz_share_interval_us;
	struct blitz_pool *pool;
	int i, wrong = 0;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->min_left = ULONG_MAX;
	pool = blitz_pool_create("kunit-deep-loop", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	/* No cooldown: every request is acted on. */
	blitz_share_interval_us = 0;
	KUNIT_EXPECT_EQ(test, blitz_call(pool, deep_loop, d), 0);
	blitz_share_interval_us = interval;
	blitz_pool_destroy(pool);

	for (i = 0; i < DEEP_LOOP_N; i++)
		wrong += d->hits[i] != 1;
	KUNIT_EXPECT_EQ(test, wrong, 0);
	kunit_info(test, "split %u deep; fn had %lu bytes left at least",
		   d->max_depth, d->min_left);
	KUNIT_EXPECT_GT(test, d->max_depth, 0U);
	KUNIT_EXPECT_GE(test, d->min_left,
			(unsigned long)(BLITZ_SPLIT_STACK - THREAD_SIZE / 16));
}

/*
 * A loop body that waits for another index of its loop: the first index
 * waits for the last to start. The body blocks with the rest of the
 * range latent, and its CPU promotes the rest for the other worker, as
 * it promotes a blocked a()'s b. Before the rest was a latent frame, a
 * loop gave work away only between two bodies, and the first waited for
 * itself (5 s, then gave up). Through blitz_parallel_for() and, with an
 * accumulator that checks the ranges fold left to right, through
 * blitz_parallel_reduce().
 */
#define LOOP_WAIT_N	8

struct loop_wait {
	struct completion last;
	atomic_t hits[LOOP_WAIT_N];
	bool gave_up, reduce;
	int ret;
};

/* Indices folded, as a range: first and last, -1 when empty. */
struct loop_span {
	long first, last;
	bool in_order;
};

static void loop_wait_index(struct loop_wait *l, unsigned long i)
{
	atomic_inc(&l->hits[i]);
	if (i == 0 && !wait_for_completion_timeout(&l->last, 5 * HZ))
		WRITE_ONCE(l->gave_up, true);
	if (i == LOOP_WAIT_N - 1)
		complete(&l->last);
}

static void loop_wait_for(unsigned long lo, unsigned long hi, void *arg)
{
	for (; lo < hi; lo++)
		loop_wait_index(arg, lo);
}

static void loop_span_init(void *acc, void *arg)
{
	*(struct loop_span *)acc = (struct loop_span){ -1, -1, true };
}

static void loop_wait_fold(unsigned long lo, unsigned long hi, void *acc,
			   void *arg)
{
	struct loop_span *sp = acc;

	for (; lo < hi; lo++) {
		loop_wait_index(arg, lo);
		if (sp->first < 0)
			sp->first = lo;
		else if (lo != sp->last + 1)
			sp->in_order = false;
		sp->last = lo;
	}
}

static void loop_span_combine(void *acc, const void *right, void *arg)
{
	struct loop_span *sp = acc;
	const struct loop_span *r = right;

	if (r->first < 0)
		return;
	if (sp->first < 0) {
		*sp = *r;
		return;
	}
	sp->in_order &= r->in_order && r->first == sp->last + 1;
	sp->last = r->last;
}

static void loop_wait_run(void *arg)
{
	struct loop_wait *l = arg;
	struct loop_span sp;

	if (!l->reduce) {
		l->ret = blitz_parallel_for(0, LOOP_WAIT_N, 1, loop_wait_for, l);
		return;
	}
	l->ret = blitz_parallel_reduce(0, LOOP_WAIT_N, 1, &sp, sizeof(sp),
				       loop_span_init, loop_wait_fold,
				       loop_span_combine, l);
	if (sp.first != 0 || sp.last != LOOP_WAIT_N - 1 || !sp.in_order)
		l->ret = -ERANGE;
}

static void join_test_loop_waits(struct kunit *test)
{
	struct loop_wait *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct blitz_pool *pool;
	int i, wrong;

	KUNIT_ASSERT_NOT_NULL(test, l);
	if (num_possible_cpus() < 2)
		kunit_skip(test, "a pool of two workers needs two CPUs");
	pool = blitz_pool_create("kunit-loop-wait", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	for (l->reduce = false; ; l->reduce = true) {
		init_completion(&l->last);
		for (i = 0; i < LOOP_WAIT_N; i++)
			atomic_set(&l->hits[i], 0);
		l->gave_up = false;
		KUNIT_EXPECT_EQ(test, blitz_call(pool, loop_wait_run, l), 0);
		KUNIT_EXPECT_EQ_MSG(test, l->ret, 0, "reduce %d", l->reduce);
		KUNIT_EXPECT_FALSE_MSG(test, l->gave_up,
				       "reduce %d: the first index waited 5 s for the last",
				       l->reduce);
		for (i = 0, wrong = 0; i < LOOP_WAIT_N; i++)
			wrong += atomic_read(&l->hits[i]) != 1;
		KUNIT_EXPECT_EQ(test, wrong, 0);
		if (l->reduce)
			break;
	}
	blitz_pool_destroy(pool);
}

static void join_test_errors(struct kunit *test)
{
	struct cover c = {};

	KUNIT_EXPECT_EQ(test, blitz_parallel_for(2, 1, 0, cover_fn, &c),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, blitz_parallel_for(0, 10, 0, NULL, NULL),
			-EINVAL);
	/* start == end: fn is not called (it would count as bad). */
	KUNIT_EXPECT_EQ(test, blitz_parallel_for(7, 7, 0, cover_fn, NULL), 0);
	KUNIT_EXPECT_EQ(test, blitz_call(NULL, NULL, NULL), -EINVAL);
}

/* A pool left idle for a second, with its workers asleep, then destroyed. */
static void join_test_idle_destroy(struct kunit *test)
{
	struct blitz_pool *pool = blitz_pool_create("kunit-idle", 0);
	struct fib f = { 10 };

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, blitz_call(pool, fib_join, &f), 0);
	ssleep(1);
	KUNIT_EXPECT_EQ(test, join_test_sleeping(pool), pool->nr_workers);
	blitz_pool_destroy(pool);
	KUNIT_EXPECT_EQ(test, f.result, fib_plain(10));
}

static struct kunit_case join_test_cases[] = {
	KUNIT_CASE(join_test_fib),
	KUNIT_CASE(join_test_popped_back),
	KUNIT_CASE(join_test_stolen_sleeps),
	KUNIT_CASE(join_test_short_stack_sleeps),
	KUNIT_CASE(join_test_late_frame),
	KUNIT_CASE(join_test_in_job),
	KUNIT_CASE_SLOW(join_test_many),
	KUNIT_CASE(join_test_full_stack),
	KUNIT_CASE(join_test_parallel_for),
	KUNIT_CASE(join_test_loop_stack),
	KUNIT_CASE(join_test_loop_waits),
	KUNIT_CASE(join_test_errors),
	KUNIT_CASE(join_test_idle_destroy),
	{}
};

static struct kunit_suite join_test_suite = {
	.name = "blitz_join",
	.test_cases = join_test_cases,
};

kunit_test_suite(join_test_suite);
