// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for what a waiting worker may run: the join-wait rule (a
 * joiner runs only work that descends from its own join, never a job
 * unrelated to it on top of its caller's stack), the stack every job
 * starts with, and calls across pools, which a waiting worker's spare
 * runs (cm.c).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/wait_bit.h>

#include "../blitz_kmod/blitz.h"
#include "test_stack.h"

/* === The join-wait rule === */

/*
 * A joiner, and whether it is inside its join: a job that runs on the
 * joiner's task while it is records that as a breach of the rule.
 */
struct joiner {
	struct task_struct *task;
	bool in_join;
	struct completion b_started, stranger_queued, done;
	struct blitz_job stranger;
	bool stranger_ran, stranger_on_joiner;
	struct blitz_pool *pool;
	bool submit_in_a;
};

static void stranger_func(struct blitz_job *job)
{
	struct joiner *j = container_of(job, struct joiner, stranger);

	WRITE_ONCE(j->stranger_on_joiner,
		   current == j->task && READ_ONCE(j->in_join));
	WRITE_ONCE(j->stranger_ran, true);
	wake_up_var(&j->stranger_ran);
}

static void joiner_a(void *arg)
{
	struct joiner *j = arg;

	if (j->submit_in_a) {
		/* From a worker: onto its own deque, above b. */
		WARN_ON(blitz_submit(j->pool, &j->stranger));
		return;
	}
	/* Only a thief can start b while a waits: b is stolen. */
	wait_for_completion(&j->b_started);
}

static void joiner_b(void *arg)
{
	struct joiner *j = arg;

	if (j->submit_in_a)
		return;
	/* a and the test both wait for this. */
	complete_all(&j->b_started);
	/*
	 * Hold the thief while the stranger is queued: the joining worker
	 * is then the only one free. A stranger run by it while it waits
	 * breaks the rule; give it 200 ms to do so.
	 */
	wait_for_completion(&j->stranger_queued);
	wait_var_event_timeout(&j->stranger_ran, READ_ONCE(j->stranger_ran),
			       msecs_to_jiffies(200));
}

static void joiner_call(void *arg)
{
	struct joiner *j = arg;

	j->task = current;
	WRITE_ONCE(j->in_join, true);
	blitz_join(joiner_a, j, joiner_b, j);
	WRITE_ONCE(j->in_join, false);
}

static int joiner_thread(void *arg)
{
	struct joiner *j = arg;

	WARN_ON(blitz_call(j->pool, joiner_call, j));
	complete(&j->done);
	return 0;
}

/*
 * A job injected while a worker waits for its stolen b is unrelated to
 * that join: the waiting worker must not run it (its caller might hold a
 * mutex the job takes).
 */
static void wait_test_no_stranger(struct kunit *test)
{
	struct joiner j = { .stranger = BLITZ_JOB_INIT(stranger_func) };
	struct task_struct *t;

	if (num_possible_cpus() < 2)
		kunit_skip(test, "a stolen join needs two CPUs");
	init_completion(&j.b_started);
	init_completion(&j.stranger_queued);
	init_completion(&j.done);
	j.pool = blitz_pool_create("kunit-stranger", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(j.pool));
	t = kthread_run(joiner_thread, &j, "kunit-joiner");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));

	wait_for_completion(&j.b_started);
	KUNIT_EXPECT_EQ(test, blitz_submit(j.pool, &j.stranger), 0);
	complete(&j.stranger_queued);
	wait_for_completion(&j.done);
	wait_var_event(&j.stranger_ran, READ_ONCE(j.stranger_ran));
	KUNIT_EXPECT_FALSE(test, j.stranger_on_joiner);
	blitz_pool_destroy(j.pool);
}

/*
 * A job that a submits goes on the worker's deque above b. The joiner
 * must not run it inline on its way down to b either.
 */
static void wait_test_a_submits(struct kunit *test)
{
	struct joiner j = {
		.stranger = BLITZ_JOB_INIT(stranger_func),
		.submit_in_a = true,
	};

	init_completion(&j.done);
	j.pool = blitz_pool_create("kunit-a-submits", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(j.pool));
	KUNIT_EXPECT_EQ(test, blitz_call(j.pool, joiner_call, &j), 0);
	wait_var_event(&j.stranger_ran, READ_ONCE(j.stranger_ran));
	KUNIT_EXPECT_FALSE(test, j.stranger_on_joiner);
	blitz_pool_destroy(j.pool);
}

/* === Every job starts with half the stack === */

#define WAIT_TEST_JOBS	64

struct deep;

struct deep_job {
	struct blitz_job job;
	struct deep *d;
};

struct deep {
	struct blitz_pool *pool;
	struct deep_job jobs[WAIT_TEST_JOBS];
	unsigned int nr_jobs, depth;
	atomic_t ran;
	unsigned long min_left, submit_left;
};

static void deep_job_func(struct blitz_job *job)
{
	struct deep *d = container_of(job, struct deep_job, job)->d;
	unsigned long left = blitz_test_stack_left();
	unsigned long old = READ_ONCE(d->min_left);

	while (left < old && !try_cmpxchg(&d->min_left, &old, left))
		;
	atomic_inc(&d->ran);
	wake_up_var(&d->ran);
}

static void deep_nop(void *arg)
{
}

static void deep_submit(struct deep *d)
{
	d->submit_left = blitz_test_stack_left();
	WARN_ON(blitz_submit(d->pool, &d->jobs[d->nr_jobs++].job));
}

/*
 * A chain of nested joins that, every 8 levels and at the deepest, submits
 * a job: it goes on the worker's deque above the join's b. How deep the
 * chain goes depends on the frames' size (KCSAN makes them large); the
 * last job is submitted where the stack ran out, whatever the depth.
 */
static void deep_level(void *arg)
{
	struct deep *d = arg;

	if (blitz_test_stack_left() < THREAD_SIZE / 4 + 2048 ||
	    d->nr_jobs == WAIT_TEST_JOBS - 1) {
		deep_submit(d);
		return;
	}
	if (!(d->depth++ % 8))
		deep_submit(d);
	blitz_join(deep_level, d, deep_nop, NULL);
}

/* However it is run, a job starts with at least THREAD_SIZE / 2 left. */
static void wait_test_stack(struct kunit *test)
{
	struct deep *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, d);
	for (i = 0; i < WAIT_TEST_JOBS; i++) {
		blitz_job_init(&d->jobs[i].job, deep_job_func);
		d->jobs[i].d = d;
	}
	d->min_left = ULONG_MAX;
	d->pool = blitz_pool_create("kunit-deep", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(d->pool));
	KUNIT_EXPECT_EQ(test, blitz_call(d->pool, deep_level, d), 0);
	blitz_pool_destroy(d->pool);
	/* Deep enough to matter: the last job was submitted below half. */
	KUNIT_EXPECT_LT(test, d->submit_left, (unsigned long)THREAD_SIZE / 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&d->ran), d->nr_jobs);
	KUNIT_EXPECT_GE(test, d->min_left, (unsigned long)THREAD_SIZE / 2);
	kunit_info(test,
		   "depth=%u jobs=%u last submitted at %lu, min stack left=%lu of %lu",
		   d->depth, d->nr_jobs, d->submit_left, d->min_left,
		   (unsigned long)THREAD_SIZE);
}

/* === Calls across pools === */

#define CROSS_DEPTH	6

struct cross {
	struct blitz_pool *pool[2];
	int depth;
	struct completion done;
};

/* Call into the other pool, CROSS_DEPTH times, ending in the first. */
static void cross_step(void *arg)
{
	struct cross *c = arg;
	int d = c->depth++;

	if (d < CROSS_DEPTH)
		WARN_ON(blitz_call(c->pool[d % 2], cross_step, c));
}

static int cross_thread(void *arg)
{
	struct cross *c = arg;

	cross_step(c);
	complete(&c->done);
	return 0;
}

/*
 * A worker of pool A in blitz_call(B, f) blocks, and a spare of A runs
 * what f calls back into A: with one worker per pool, A -> B -> A -> ...
 * completes.
 */
static void wait_test_cross_pool(struct kunit *test)
{
	/* Not test-managed: on a deadlock the stuck calls keep using it. */
	struct cross *c = kzalloc(sizeof(*c), GFP_KERNEL);
	struct task_struct *t;

	KUNIT_ASSERT_NOT_NULL(test, c);
	init_completion(&c->done);
	c->pool[0] = blitz_pool_create("kunit-cross-a", 1);
	c->pool[1] = blitz_pool_create("kunit-cross-b", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->pool[0]));
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->pool[1]));
	t = kthread_run(cross_thread, c, "kunit-cross");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	if (!wait_for_completion_timeout(&c->done, 20 * HZ)) {
		KUNIT_FAIL(test, "calls across pools deadlocked at depth %d",
			   READ_ONCE(c->depth));
		return;
	}
	KUNIT_EXPECT_EQ(test, c->depth, CROSS_DEPTH + 1);
	blitz_pool_destroy(c->pool[0]);
	blitz_pool_destroy(c->pool[1]);
	kfree(c);
}

/*
 * Calls that no call chain links: jobs of A call into B while jobs of B
 * call into A, with every worker of both pools in such a call at once.
 * Each call then calls back into its caller's pool. Spares of both pools
 * run them all.
 */
#define UNLINKED_JOBS	8

struct unlinked;

struct unlinked_job {
	struct blitz_job job;
	struct unlinked *u;
	int from;
	atomic_t calls, backs;
	bool wrong_pool;
};

struct unlinked {
	struct blitz_pool *pool[2];
	unsigned int busy;
	atomic_t started, calls_started, left;
	bool not_held;
	struct unlinked_job jobs[2][UNLINKED_JOBS];
	struct completion done;
};

static void unlinked_check(struct unlinked_job *j, int pool)
{
	struct blitz_worker *w = blitz_current_worker();

	if (!w || w->pool != j->u->pool[pool])
		WRITE_ONCE(j->wrong_pool, true);
}

/* Back in the caller's pool, from the call: to the waiting caller. */
static void unlinked_back(void *arg)
{
	struct unlinked_job *j = arg;

	unlinked_check(j, j->from);
	atomic_inc(&j->backs);
}

/* Hold every worker until all have a job (first), or a call (then). */
static void unlinked_hold(struct unlinked *u, atomic_t *count)
{
	atomic_inc(count);
	wake_up_var(count);
	if (!wait_var_event_timeout(count, atomic_read(count) >= u->busy,
				    10 * HZ))
		WRITE_ONCE(u->not_held, true);
}

static void unlinked_call(void *arg)
{
	struct unlinked_job *j = arg;

	unlinked_check(j, !j->from);
	atomic_inc(&j->calls);
	/* Every worker of both pools in a call at once, then call back. */
	unlinked_hold(j->u, &j->u->calls_started);
	WARN_ON(blitz_call(j->u->pool[j->from], unlinked_back, j));
}

static void unlinked_func(struct blitz_job *job)
{
	struct unlinked_job *j = container_of(job, struct unlinked_job, job);
	struct unlinked *u = j->u;

	unlinked_hold(u, &u->started);
	WARN_ON(blitz_call(u->pool[!j->from], unlinked_call, j));
	if (atomic_dec_and_test(&u->left))
		complete(&u->done);
}

static void wait_test_cross_unlinked(struct kunit *test)
{
	static const unsigned int workers[] = { 1, 2 };
	struct unlinked *u;
	unsigned int n, i, k;
	int p;

	for (n = 0; n < ARRAY_SIZE(workers); n++) {
		/* Pools of two workers need two possible CPUs. */
		if (workers[n] > num_possible_cpus()) {
			kunit_info(test, "not run with %u workers per pool: %u CPU(s)",
				   workers[n], num_possible_cpus());
			break;
		}
		/* Not test-managed: on a deadlock the stuck calls use it. */
		u = kzalloc(sizeof(*u), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, u);
		init_completion(&u->done);
		u->busy = 2 * workers[n];
		atomic_set(&u->left, 2 * UNLINKED_JOBS);
		u->pool[0] = blitz_pool_create("kunit-unlinked-a", workers[n]);
		u->pool[1] = blitz_pool_create("kunit-unlinked-b", workers[n]);
		KUNIT_ASSERT_FALSE(test, IS_ERR(u->pool[0]));
		KUNIT_ASSERT_FALSE(test, IS_ERR(u->pool[1]));
		for (i = 0; i < UNLINKED_JOBS; i++) {
			for (p = 0; p < 2; p++) {
				struct unlinked_job *j = &u->jobs[p][i];

				blitz_job_init(&j->job, unlinked_func);
				j->u = u;
				j->from = p;
				KUNIT_EXPECT_EQ(test,
						blitz_submit(u->pool[p], &j->job),
						0);
			}
		}
		if (!wait_for_completion_timeout(&u->done, 30 * HZ)) {
			KUNIT_FAIL(test,
				   "%u worker(s) per pool: unlinked calls deadlocked, %d of %d jobs left",
				   workers[n], atomic_read(&u->left),
				   2 * UNLINKED_JOBS);
			return;
		}
		/* Every worker of both pools had a job, then a call, at once. */
		KUNIT_EXPECT_FALSE(test, u->not_held);
		for (p = 0; p < 2; p++) {
			for (k = 0; k < UNLINKED_JOBS; k++) {
				KUNIT_EXPECT_EQ(test,
						atomic_read(&u->jobs[p][k].calls),
						1);
				KUNIT_EXPECT_EQ(test,
						atomic_read(&u->jobs[p][k].backs),
						1);
				KUNIT_EXPECT_FALSE(test,
						   u->jobs[p][k].wrong_pool);
			}
		}
		blitz_pool_destroy(u->pool[0]);
		blitz_pool_destroy(u->pool[1]);
		kfree(u);
	}
}

/*
 * A call that waits in a join, whose stolen half calls back into the
 * other pool, whose worker is in the same state. Two workers per pool: a
 * blocker holds the second worker of each until the first pool's call
 * has started, then lets it steal that call's b.
 */
struct taken;

struct taken_job {
	struct blitz_job job;
	struct taken *t;
	int pool;
	struct completion b_started;
};

struct taken {
	struct blitz_pool *pool[2];
	struct taken_job jobs[2], blockers[2];
	atomic_t started, calls, backs, left;
	struct completion release, done;
	bool not_held, wrong_pool;
};

static void taken_wait(struct taken *t, struct completion *c)
{
	if (!wait_for_completion_timeout(c, 20 * HZ))
		WRITE_ONCE(t->not_held, true);
}

/* On a worker of @arg's pool, the caller's. */
static void taken_back(void *arg)
{
	struct taken_job *j = arg;
	struct blitz_worker *w = blitz_current_worker();

	if (!w || w->pool != j->t->pool[j->pool])
		WRITE_ONCE(j->t->wrong_pool, true);
	atomic_inc(&j->t->backs);
}

static void taken_a(void *arg)
{
	struct taken_job *j = arg;

	/* Only a thief can start b while we wait: b is stolen. */
	taken_wait(j->t, &j->b_started);
}

static void taken_b(void *arg)
{
	struct taken_job *j = arg;

	complete(&j->b_started);
	/* Back into the caller's pool, whose worker is in a join too. */
	WARN_ON(blitz_call(j->t->pool[j->pool], taken_back, j));
}

/* Made by job @arg of the other pool. */
static void taken_call(void *arg)
{
	struct taken_job *j = arg;

	if (atomic_inc_return(&j->t->calls) == 2)
		complete_all(&j->t->release);
	blitz_join(taken_a, j, taken_b, j);
}

static void taken_blocker(struct blitz_job *job)
{
	struct taken_job *j = container_of(job, struct taken_job, job);

	atomic_inc(&j->t->started);
	wake_up_var(&j->t->started);
	taken_wait(j->t, &j->t->release);
}

static void taken_func(struct blitz_job *job)
{
	struct taken_job *j = container_of(job, struct taken_job, job);
	struct taken *t = j->t;

	/* Both workers of both pools busy: the blockers and us. */
	atomic_inc(&t->started);
	wake_up_var(&t->started);
	if (!wait_var_event_timeout(&t->started,
				    atomic_read(&t->started) >= 4, 10 * HZ))
		WRITE_ONCE(t->not_held, true);
	WARN_ON(blitz_call(t->pool[!j->pool], taken_call, j));
	if (atomic_dec_and_test(&t->left))
		complete(&t->done);
}

static void wait_test_cross_taken_join(struct kunit *test)
{
	/* Not test-managed: on a deadlock the stuck calls use it. */
	struct taken *t;
	int p;

	if (num_possible_cpus() < 2)
		kunit_skip(test, "pools of two workers need two CPUs");
	t = kzalloc(sizeof(*t), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t);
	init_completion(&t->release);
	init_completion(&t->done);
	atomic_set(&t->left, 2);
	t->pool[0] = blitz_pool_create("kunit-taken-a", 2);
	t->pool[1] = blitz_pool_create("kunit-taken-b", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->pool[0]));
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->pool[1]));
	for (p = 0; p < 2; p++) {
		t->blockers[p].t = t;
		t->jobs[p].t = t;
		t->jobs[p].pool = p;
		init_completion(&t->jobs[p].b_started);
		blitz_job_init(&t->blockers[p].job, taken_blocker);
		blitz_job_init(&t->jobs[p].job, taken_func);
		KUNIT_EXPECT_EQ(test, blitz_submit(t->pool[p],
						   &t->blockers[p].job), 0);
		KUNIT_EXPECT_EQ(test, blitz_submit(t->pool[p],
						   &t->jobs[p].job), 0);
	}
	if (!wait_for_completion_timeout(&t->done, 60 * HZ)) {
		KUNIT_FAIL(test,
			   "taken calls deadlocked: %d of 2 jobs left, %d calls, %d backs",
			   atomic_read(&t->left), atomic_read(&t->calls),
			   atomic_read(&t->backs));
		return;
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&t->calls), 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->backs), 2);
	KUNIT_EXPECT_FALSE(test, t->not_held);
	KUNIT_EXPECT_FALSE(test, t->wrong_pool);
	blitz_pool_destroy(t->pool[0]);
	blitz_pool_destroy(t->pool[1]);
	kfree(t);
}

/*
 * Two calls back that wait for each other, made at once by the two
 * branches of a join in the function a worker of A waits on: both must
 * run at once, on A's other worker or on spares. A waiter that ran the
 * calls back made for it as a list of its own left the second behind the
 * first, which gave up after 5 s.
 */
struct pair;

struct pair_side {
	struct pair *p;
	int i;
};

struct pair {
	struct blitz_pool *pool[2];
	struct blitz_job job;
	struct pair_side side[2];
	struct completion in[2], b_started, done;
	bool alone, not_stolen, wrong_pool;
};

/* A call back into A: meets the other, or gives up after 5 s. */
static void pair_back(void *arg)
{
	struct pair_side *s = arg;
	struct blitz_worker *w = blitz_current_worker();

	if (!w || w->pool != s->p->pool[0])
		WRITE_ONCE(s->p->wrong_pool, true);
	complete(&s->p->in[s->i]);
	if (!wait_for_completion_timeout(&s->p->in[!s->i], 5 * HZ))
		WRITE_ONCE(s->p->alone, true);
}

static void pair_a(void *arg)
{
	struct pair *p = arg;

	/* Only a thief can start b while we wait: b is stolen. */
	if (!wait_for_completion_timeout(&p->b_started, 10 * HZ))
		WRITE_ONCE(p->not_stolen, true);
	WARN_ON(blitz_call(p->pool[0], pair_back, &p->side[0]));
}

static void pair_b(void *arg)
{
	struct pair *p = arg;

	complete(&p->b_started);
	WARN_ON(blitz_call(p->pool[0], pair_back, &p->side[1]));
}

/* In B, on behalf of A's waiting worker. */
static void pair_call(void *arg)
{
	blitz_join(pair_a, arg, pair_b, arg);
}

static void pair_func(struct blitz_job *job)
{
	struct pair *p = container_of(job, struct pair, job);

	WARN_ON(blitz_call(p->pool[1], pair_call, p));
	complete(&p->done);
}

static void wait_test_backs_pair(struct kunit *test)
{
	struct pair *p;
	int round, i;

	if (num_possible_cpus() < 2)
		kunit_skip(test, "pools of two workers need two CPUs");
	p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	p->pool[0] = blitz_pool_create("kunit-pair-a", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->pool[0]));
	p->pool[1] = blitz_pool_create("kunit-pair-b", 2);
	if (IS_ERR(p->pool[1])) {
		blitz_pool_destroy(p->pool[0]);
		KUNIT_FAIL(test, "pool B: %ld", PTR_ERR(p->pool[1]));
		return;
	}
	for (round = 0; round < 10; round++) {
		blitz_job_init(&p->job, pair_func);
		for (i = 0; i < 2; i++) {
			p->side[i] = (struct pair_side){ p, i };
			init_completion(&p->in[i]);
		}
		init_completion(&p->b_started);
		init_completion(&p->done);
		if (blitz_submit(p->pool[0], &p->job)) {
			KUNIT_FAIL(test, "round %d: submit failed", round);
			break;
		}
		wait_for_completion(&p->done);
		KUNIT_EXPECT_FALSE_MSG(test, p->alone,
				       "round %d: a call back waited 5 s for the other",
				       round);
		KUNIT_EXPECT_FALSE(test, p->not_stolen);
		KUNIT_EXPECT_FALSE(test, p->wrong_pool);
		if (p->alone || p->not_stolen || p->wrong_pool)
			break;
	}
	blitz_pool_destroy(p->pool[0]);
	blitz_pool_destroy(p->pool[1]);
}

static struct kunit_case wait_test_cases[] = {
	KUNIT_CASE(wait_test_no_stranger),
	KUNIT_CASE(wait_test_a_submits),
	KUNIT_CASE(wait_test_stack),
	KUNIT_CASE(wait_test_cross_pool),
	KUNIT_CASE(wait_test_cross_unlinked),
	KUNIT_CASE(wait_test_cross_taken_join),
	KUNIT_CASE(wait_test_backs_pair),
	{}
};

static struct kunit_suite wait_test_suite = {
	.name = "blitz_wait",
	.test_cases = wait_test_cases,
};

kunit_test_suite(wait_test_suite);
