// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for job groups: blitz_group_submit(), blitz_group_wait() and
 * blitz_group_cancel(), from every context, nested, from a job in a pool
 * of one worker, and with cancel racing submit and wait. Every job is
 * counted: each accepted one runs or is skipped exactly once.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/timer.h>

#include "../blitz_kmod/blitz.h"
#include "test_threads.h"

#define GROUP_JOBS	1000

struct gjob {
	struct blitz_job job;
	struct gtest *t;
	int depth;	/* children it submits into the group: 2 each */
};

struct gtest {
	struct blitz_group own, *group;
	struct gjob *jobs;
	atomic_t next;		/* jobs handed out */
	atomic_t *ran;		/* per job: times its function ran */
	atomic_t accepted;
	unsigned int nr;
};

static u64 group_cancelled(struct blitz_pool *pool)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < pool->nr_workers; i++)
		sum += READ_ONCE(pool->workers[i]->stats[BLITZ_STAT_CANCELLED]);
	return sum;
}

static void gjob_func(struct blitz_job *job);

/* Hand out the next job with @depth; submit it. */
static int gtest_submit(struct gtest *t, int depth)
{
	int i = atomic_inc_return(&t->next) - 1, ret;
	struct gjob *j;

	if (i >= t->nr)
		return -ENOSPC;
	j = &t->jobs[i];
	blitz_job_init(&j->job, gjob_func);
	j->t = t;
	j->depth = depth;
	ret = blitz_group_submit(t->group, &j->job);
	if (!ret)
		atomic_inc(&t->accepted);
	return ret;
}

static void gjob_func(struct blitz_job *job)
{
	struct gjob *j = container_of(job, struct gjob, job);
	struct gtest *t = j->t;

	atomic_inc(&t->ran[j - t->jobs]);
	if (j->depth) {
		gtest_submit(t, j->depth - 1);
		gtest_submit(t, j->depth - 1);
	}
}

static struct gtest *gtest_new(struct kunit *test, struct blitz_pool *pool,
			       unsigned int nr)
{
	struct gtest *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->jobs = kunit_kcalloc(test, nr, sizeof(*t->jobs), GFP_KERNEL);
	t->ran = kunit_kcalloc(test, nr, sizeof(*t->ran), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, t->jobs);
	KUNIT_ASSERT_NOT_NULL(test, t->ran);
	blitz_group_init(&t->own, pool);
	t->group = &t->own;
	t->nr = nr;
	return t;
}

/* Every job handed out and accepted ran once; none ran twice. */
static void gtest_check_ran_once(struct kunit *test, struct gtest *t)
{
	unsigned int i, ran = 0;

	for (i = 0; i < atomic_read(&t->next) && i < t->nr; i++) {
		KUNIT_EXPECT_LE(test, atomic_read(&t->ran[i]), 1);
		ran += atomic_read(&t->ran[i]);
	}
	KUNIT_EXPECT_EQ(test, ran, (unsigned int)atomic_read(&t->accepted));
}

/* === From every context === */

struct gsources {
	struct gtest *t;
	struct hrtimer hr;
	struct timer_list timer;
	atomic_t irq_left, soft_left;
	struct completion done;
};

static enum hrtimer_restart gsources_hrtimer(struct hrtimer *hr)
{
	struct gsources *g = container_of(hr, struct gsources, hr);

	gtest_submit(g->t, 0);
	if (atomic_dec_return(&g->irq_left) <= 0) {
		complete(&g->done);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(hr, ns_to_ktime(50 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void gsources_timer(struct timer_list *timer)
{
	struct gsources *g = from_timer(g, timer, timer);
	unsigned long flags;
	int i;

	/* softirq, then with interrupts off under nothing held */
	gtest_submit(g->t, 0);
	local_irq_save(flags);
	for (i = 0; i < 4; i++)
		gtest_submit(g->t, 0);
	local_irq_restore(flags);
	if (atomic_dec_return(&g->soft_left) > 0)
		mod_timer(timer, jiffies + 1);
	else
		complete(&g->done);
}

/*
 * Jobs from the test's task, from an hrtimer in hard interrupt context,
 * from a timer in softirq context and with interrupts off, and from jobs
 * of the group itself, two levels deep: wait returns once all ran.
 */
static void group_test_contexts(struct kunit *test)
{
	struct gsources *g = kunit_kzalloc(test, sizeof(*g), GFP_KERNEL);
	struct gtest *t = gtest_new(test, NULL, 4 * GROUP_JOBS);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, g);
	g->t = t;
	init_completion(&g->done);
	atomic_set(&g->irq_left, 200);
	atomic_set(&g->soft_left, 50);
	hrtimer_init(&g->hr, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	g->hr.function = gsources_hrtimer;
	timer_setup(&g->timer, gsources_timer, 0);
	hrtimer_start(&g->hr, ns_to_ktime(50 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	mod_timer(&g->timer, jiffies + 1);
	for (i = 0; i < 300; i++)
		KUNIT_EXPECT_EQ(test, gtest_submit(t, 2), 0);
	wait_for_completion(&g->done);
	wait_for_completion(&g->done);
	hrtimer_cancel(&g->hr);
	timer_shutdown_sync(&g->timer);
	KUNIT_EXPECT_EQ(test, blitz_group_wait(t->group), 0);
	/* 300 trees of 7, 200 from hardirq, 250 from softirq. */
	KUNIT_EXPECT_EQ(test, atomic_read(&t->accepted), 300 * 7 + 200 + 250);
	gtest_check_ran_once(test, t);
	/* Used again after the wait. */
	KUNIT_EXPECT_EQ(test, gtest_submit(t, 1), 0);
	KUNIT_EXPECT_EQ(test, blitz_group_wait(t->group), 0);
	gtest_check_ran_once(test, t);
}

/* A static group on the default pool; an empty group's wait. */
static struct blitz_group group_static = BLITZ_GROUP_INIT(group_static, NULL);

static void group_test_static(struct kunit *test)
{
	struct gtest *t = gtest_new(test, NULL, 64);

	KUNIT_EXPECT_EQ(test, blitz_group_wait(&group_static), 0);
	t->group = &group_static;
	KUNIT_EXPECT_EQ(test, gtest_submit(t, 4), 0);
	KUNIT_EXPECT_EQ(test, blitz_group_wait(t->group), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->accepted), 31);
	gtest_check_ran_once(test, t);
	KUNIT_EXPECT_EQ(test, blitz_group_submit(NULL, &t->jobs[0].job),
			-EINVAL);
}

static void gnop_func(struct blitz_job *job)
{
}

/* Bad jobs are refused first, also by a cancelled group. */
static void group_test_errors(struct kunit *test)
{
	struct blitz_group group = BLITZ_GROUP_INIT(group, NULL);
	struct blitz_job job = BLITZ_JOB_INIT(NULL);

	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, &job), -EINVAL);
	blitz_group_cancel(&group);
	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, NULL), -EINVAL);
	blitz_job_init(&job, gnop_func);
	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, &job), -ECANCELED);
	KUNIT_EXPECT_EQ(test, blitz_group_wait(&group), -ECANCELED);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&group.pending), 0);
}

/* === Nested groups === */

#define GNEST_LEVELS	4
#define GNEST_JOBS	((1 << GNEST_LEVELS) - 1)

struct gnest_test {
	struct gnest {
		struct blitz_job job;
		struct gnest_test *t;
		int level;
		int ret;
	} jobs[GNEST_JOBS];
	atomic_t ran[GNEST_JOBS];
	atomic_t next;		/* jobs handed out; the root is jobs[0] */
	struct blitz_pool *pool;
	bool static_init;
	struct completion done;
};

static void gnest_func(struct blitz_job *job);

static void gnest_submit_children(struct gnest *j, struct blitz_group *group)
{
	struct gnest_test *t = j->t;
	struct gnest *c;
	int i;

	for (i = 0; i < 2; i++) {
		c = &t->jobs[atomic_inc_return(&t->next) - 1];
		blitz_job_init(&c->job, gnest_func);
		c->t = t;
		c->level = j->level + 1;
		WARN_ON(blitz_group_submit(group, &c->job));
	}
	j->ret = blitz_group_wait(group);
}

/*
 * Each job but the deepest waits for two children in a group on its
 * stack, made at one place: one lock class, nested by the recursion.
 * Lockdep must not take that for a job waiting for itself.
 */
static void gnest_func(struct blitz_job *job)
{
	struct gnest *j = container_of(job, struct gnest, job);
	struct gnest_test *t = j->t;

	atomic_inc(&t->ran[j - t->jobs]);
	if (j->level + 1 < GNEST_LEVELS) {
		if (t->static_init) {
			struct blitz_group group = BLITZ_GROUP_INIT(group,
								    t->pool);

			gnest_submit_children(j, &group);
		} else {
			struct blitz_group group;

			blitz_group_init(&group, t->pool);
			gnest_submit_children(j, &group);
		}
	}
	if (!j->level)
		complete(&t->done);
}

static const struct {
	unsigned int workers;
	bool static_init;
	const char *desc;
} gnest_params[] = {
	{ 1, false, "1 worker, blitz_group_init()" },
	{ 1, true, "1 worker, BLITZ_GROUP_INIT() on the stack" },
	{ 0, false, "all CPUs, blitz_group_init()" },
	{ 0, true, "all CPUs, BLITZ_GROUP_INIT() on the stack" },
};

KUNIT_ARRAY_PARAM_DESC(gnest, gnest_params, desc);

static void group_test_nested(struct kunit *test)
{
	const typeof(gnest_params[0]) *p = test->param_value;
	struct gnest_test *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, t);
	t->pool = blitz_pool_create("kunit-gnest", p->workers);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t->pool));
	t->static_init = p->static_init;
	init_completion(&t->done);
	atomic_set(&t->next, 1);
	t->jobs[0].t = t;
	blitz_job_init(&t->jobs[0].job, gnest_func);
	KUNIT_EXPECT_EQ(test, blitz_submit(t->pool, &t->jobs[0].job), 0);
	wait_for_completion(&t->done);
	blitz_pool_destroy(t->pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&t->next), GNEST_JOBS);
	for (i = 0; i < GNEST_JOBS; i++) {
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&t->ran[i]), 1,
				    "job %d", i);
		KUNIT_EXPECT_EQ_MSG(test, t->jobs[i].ret, 0, "job %d", i);
	}
}

/* === Waiting from a job === */

struct gwaiter {
	struct blitz_job job;
	struct blitz_job stranger;
	struct gtest *t;
	bool waiting, stranger_during_wait;
	int ret;
	struct completion done, stranger_ran;
};

static void gstranger_func(struct blitz_job *job)
{
	struct gwaiter *w = container_of(job, struct gwaiter, stranger);

	w->stranger_during_wait = READ_ONCE(w->waiting);
	complete(&w->stranger_ran);
}

/*
 * A job submits a job of its own that is no group's, then 300 jobs
 * into the group, each submitting two more, and waits: in a pool of one
 * worker it must run them itself, also those that overflowed its deque
 * (256) to the injection list, and must not run the other job on top of
 * its stack.
 */
static void gwaiter_func(struct blitz_job *job)
{
	struct gwaiter *w = container_of(job, struct gwaiter, job);
	int i;

	WARN_ON(blitz_submit(blitz_current_worker()->pool, &w->stranger));
	for (i = 0; i < 300; i++)
		WARN_ON(gtest_submit(w->t, 1));
	WRITE_ONCE(w->waiting, true);
	w->ret = blitz_group_wait(w->t->group);
	WRITE_ONCE(w->waiting, false);
	complete(&w->done);
}

static void group_test_wait_in_job(struct kunit *test)
{
	struct blitz_pool *pool = blitz_pool_create("kunit-gwait", 1);
	struct gwaiter *w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_ASSERT_NOT_NULL(test, w);
	w->t = gtest_new(test, pool, 900);
	blitz_job_init(&w->job, gwaiter_func);
	blitz_job_init(&w->stranger, gstranger_func);
	init_completion(&w->done);
	init_completion(&w->stranger_ran);
	KUNIT_ASSERT_EQ(test, blitz_submit(pool, &w->job), 0);
	wait_for_completion(&w->done);
	wait_for_completion(&w->stranger_ran);
	KUNIT_EXPECT_EQ(test, w->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&w->t->accepted), 900);
	gtest_check_ran_once(test, w->t);
	KUNIT_EXPECT_FALSE(test, w->stranger_during_wait);
	blitz_pool_destroy(pool);
}

/* === Cancel === */

struct gcancel {
	struct gtest *t;
	struct blitz_test_threads threads;
};

static void gjob_extra_func(struct blitz_job *job)
{
	WRITE_ONCE(container_of(job, struct gjob, job)->depth, 1);
}

static int gcancel_submitter(void *arg)
{
	struct gcancel *c = arg;
	int ret;

	blitz_test_start_line(&c->threads);
	do {
		ret = gtest_submit(c->t, 0);
		blitz_test_relax();
	} while (ret != -ENOSPC && ret != -ECANCELED);
	return 0;
}

/*
 * Submitters race a cancel, and the wait races both: every job accepted
 * ran or was skipped, exactly once (the skips are the pool's cancelled
 * count), a submit after the cancel is refused, and the wait says
 * -ECANCELED. Then the group works again.
 */
static void group_test_cancel_race(struct kunit *test)
{
	const int *nr = test->param_value;
	struct blitz_pool *pool = blitz_pool_create("kunit-gcancel", 0);
	struct gcancel *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct gjob *extra = kunit_kzalloc(test, sizeof(*extra), GFP_KERNEL);
	void *args[BLITZ_TEST_MAX_THREADS];
	unsigned int i, ran = 0;
	u64 skipped;
	int round;

	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, extra);
	for (round = 0; round < 20; round++) {
		c->t = gtest_new(test, pool, 2000);
		blitz_job_init(&extra->job, gjob_extra_func);
		extra->depth = 0;
		skipped = group_cancelled(pool);
		for (i = 0; i < *nr; i++)
			args[i] = c;
		KUNIT_ASSERT_EQ(test, blitz_test_threads_run(&c->threads, *nr,
							     gcancel_submitter,
							     args), 0);
		blitz_test_start_line(&c->threads);
		udelay(get_random_u32_below(200));
		blitz_group_cancel(c->t->group);
		KUNIT_EXPECT_EQ(test, blitz_group_submit(c->t->group,
							 &extra->job),
				-ECANCELED);
		KUNIT_EXPECT_EQ(test, blitz_group_wait(c->t->group),
				-ECANCELED);
		KUNIT_EXPECT_EQ(test, blitz_test_threads_join(&c->threads), 0);
		/* Submits that passed the check just before the cancel. */
		KUNIT_EXPECT_EQ(test, blitz_group_wait(c->t->group), 0);
		for (i = 0; i < c->t->nr; i++) {
			KUNIT_EXPECT_LE(test, atomic_read(&c->t->ran[i]), 1);
			ran += atomic_read(&c->t->ran[i]);
		}
		skipped = group_cancelled(pool) - skipped;
		KUNIT_EXPECT_EQ(test, ran + skipped,
				(u64)atomic_read(&c->t->accepted));
		ran = 0;
		/* Usable again. */
		KUNIT_EXPECT_EQ(test, blitz_group_submit(c->t->group,
							 &extra->job), 0);
		KUNIT_EXPECT_EQ(test, blitz_group_wait(c->t->group), 0);
		KUNIT_EXPECT_EQ(test, READ_ONCE(extra->depth), 1);
	}
	blitz_pool_destroy(pool);
}

/* === Join frames held aside by a waiter === */

struct ghold {
	struct blitz_pool *pool;
	struct blitz_group group;
	struct blitz_job blocker, gjob;
	struct completion blocker_running, release, b_ran;
	struct blitz_worker *other, *a_worker, *b_worker;
	unsigned int interval;
	bool promoted, other_slept, b_late;
};

/* Keeps the other worker busy, so that nobody steals b early. */
static void ghold_blocker_func(struct blitz_job *job)
{
	struct ghold *h = container_of(job, struct ghold, blocker);

	h->other = blitz_current_worker();
	complete(&h->blocker_running);
	wait_for_completion(&h->release);
}

/*
 * The group's job, run by the waiter while it holds b aside: it lets the
 * other worker go idle, with nothing to see, and waits until it sleeps.
 */
static void ghold_gjob_func(struct blitz_job *job)
{
	struct ghold *h = container_of(job, struct ghold, gjob);
	int ms;

	complete(&h->release);
	for (ms = 0; ms < 5000 && !test_bit(h->other->index, h->pool->sleepers);
	     ms += 20)
		msleep(20);
	h->other_slept = test_bit(h->other->index, h->pool->sleepers);
}

static void ghold_nop(void *arg)
{
}

/*
 * Wait up to 5 s for @done, spinning: a worker that blocked would have a
 * spare take its CPU (cm.c). Whether it was done.
 */
static bool group_spin_for(struct completion *done)
{
	unsigned long end = jiffies + 5 * HZ;

	while (!completion_done(done) && time_before(jiffies, end))
		cond_resched();
	return completion_done(done);
}

/*
 * The group's job goes on our deque, then b is promoted above it: the
 * wait pops b first and holds it while it runs the group's job. Then
 * a spins until b has run: only a worker asleep by then can run it, and
 * only if the frames pushed back were posted.
 */
static void ghold_a(void *arg)
{
	struct ghold *h = arg;
	struct blitz_worker *w = blitz_current_worker();

	h->a_worker = w;
	WARN_ON(blitz_group_submit(&h->group, &h->gjob));
	/*
	 * A request that the next fork acts on at once, not after a
	 * cooldown: it promotes the oldest latent frame, b.
	 */
	blitz_share_interval_us = 0;
	WRITE_ONCE(w->forks.share, BLITZ_SHARE_ASK);
	blitz_join(ghold_nop, NULL, ghold_nop, NULL);
	blitz_share_interval_us = h->interval;
	h->promoted = READ_ONCE(w->forks.published) == 1;
	WARN_ON(blitz_group_wait(&h->group));
	h->b_late = !group_spin_for(&h->b_ran);
}

static void ghold_b(void *arg)
{
	struct ghold *h = arg;

	h->b_worker = blitz_current_worker();
	complete(&h->b_ran);
}

static void ghold_root(void *arg)
{
	blitz_join(ghold_a, arg, ghold_b, arg);
}

/*
 * A worker waiting for its group holds its promoted frames aside while
 * it runs the group's jobs, and pushes them back after. Meanwhile the
 * other worker found nothing and slept: the push-back must post them, so
 * that the sleeper wakes and steals b, for which a waits.
 */
static void group_test_held_frames(struct kunit *test)
{
	struct blitz_pool *pool;
	struct ghold *h;

	if (num_online_cpus() < 2)
		kunit_skip(test, "a stolen frame needs two CPUs");
	h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, h);
	pool = blitz_pool_create("kunit-ghold", 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	h->pool = pool;
	h->interval = blitz_share_interval_us;
	blitz_group_init(&h->group, pool);
	blitz_job_init(&h->blocker, ghold_blocker_func);
	blitz_job_init(&h->gjob, ghold_gjob_func);
	init_completion(&h->blocker_running);
	init_completion(&h->release);
	init_completion(&h->b_ran);
	KUNIT_ASSERT_EQ(test, blitz_submit(pool, &h->blocker), 0);
	wait_for_completion(&h->blocker_running);
	KUNIT_EXPECT_EQ(test, blitz_call(pool, ghold_root, h), 0);
	KUNIT_EXPECT_PTR_NE(test, h->a_worker, h->other);
	KUNIT_EXPECT_TRUE(test, h->promoted);
	KUNIT_EXPECT_TRUE(test, h->other_slept);
	KUNIT_EXPECT_FALSE(test, h->b_late);
	KUNIT_EXPECT_PTR_NE(test, h->b_worker, h->a_worker);
	blitz_pool_destroy(pool);
}

/* === A worker away from its CPU === */

struct gaway {
	struct blitz_job holder, waiter;
	struct gtest *t;
	struct blitz_worker *holder_worker, *waiter_worker;
	struct completion holding, held, waited;
	bool held_too_long;
	int ret;
};

/*
 * On the first worker, hold it, spinning, until the waiter's wait
 * returned: blocked, it would leave its CPU to a spare.
 */
static void gaway_holder_func(struct blitz_job *job)
{
	struct gaway *a = container_of(job, struct gaway, holder);

	a->holder_worker = blitz_current_worker();
	complete(&a->holding);
	if (!a->holder_worker->index)
		a->held_too_long = !group_spin_for(&a->waited);
	complete(&a->held);
}

/* More group jobs than a deque holds, then the wait. */
static void gaway_waiter_func(struct blitz_job *job)
{
	struct gaway *a = container_of(job, struct gaway, waiter);
	unsigned int i;

	a->waiter_worker = blitz_current_worker();
	for (i = 0; i < a->t->nr; i++)
		WARN_ON(gtest_submit(a->t, 0));
	a->ret = blitz_group_wait(a->t->group);
	/* For the holder and the test. */
	complete_all(&a->waited);
}

static u64 group_overflows(struct blitz_worker *w)
{
	return READ_ONCE(w->stats[BLITZ_STAT_OVERFLOWS]);
}

/*
 * Worker 1's CPU goes offline and the worker runs on worker 0's CPU,
 * where submitters inject into worker 0's list. Worker 0 is held by a
 * job until worker 1's group wait returns; the wait is for 300 jobs of
 * its own, more than its deque holds. Those that overflowed went to the
 * list of this CPU's worker, worker 0's, where the wait did not look: it
 * returned only when the holder gave up, seconds later. The pool has no
 * spares: one would run the overflow for the blocked wait.
 */
static void group_test_away(struct kunit *test)
{
	struct gaway *a = kunit_kzalloc(test, sizeof(*a), GFP_KERNEL);
	unsigned int max = blitz_max_spares;
	struct blitz_worker *w0, *w1;
	struct blitz_pool *pool;
	u64 overflows;
	int round, ret;

	KUNIT_ASSERT_NOT_NULL(test, a);
	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || num_online_cpus() < 2)
		kunit_skip(test, "needs CPU hotplug and two CPUs");
	WRITE_ONCE(blitz_max_spares, 0);
	pool = blitz_pool_create("kunit-gaway", 2);
	WRITE_ONCE(blitz_max_spares, max);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	w0 = pool->workers[0];
	w1 = pool->workers[1];
	a->t = gtest_new(test, pool, 300);
	ret = remove_cpu(w1->cpu);
	if (ret) {
		blitz_pool_destroy(pool);
		KUNIT_FAIL(test, "CPU %u did not go offline: %d", w1->cpu, ret);
		return;
	}
	KUNIT_EXPECT_EQ(test, set_cpus_allowed_ptr(w1->task,
						   cpumask_of(w0->cpu)), 0);

	/*
	 * From worker 0's CPU, the holder goes on worker 0's list, and
	 * worker 0 is woken first for it; try again if worker 1 took it.
	 */
	set_cpus_allowed_ptr(current, cpumask_of(w0->cpu));
	init_completion(&a->waited);
	for (round = 0; round < 20; round++) {
		blitz_job_init(&a->holder, gaway_holder_func);
		init_completion(&a->holding);
		init_completion(&a->held);
		KUNIT_ASSERT_EQ(test, blitz_submit(pool, &a->holder), 0);
		wait_for_completion(&a->holding);
		if (a->holder_worker == w0)
			break;
		wait_for_completion(&a->held);
	}
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	KUNIT_EXPECT_PTR_EQ_MSG(test, a->holder_worker, w0,
				"20 holders ran on worker 1");
	overflows = group_overflows(w1);
	blitz_job_init(&a->waiter, gaway_waiter_func);
	KUNIT_EXPECT_EQ(test, blitz_submit(pool, &a->waiter), 0);
	wait_for_completion(&a->waited);
	if (a->holder_worker == w0)
		wait_for_completion(&a->held);
	KUNIT_EXPECT_EQ(test, add_cpu(w1->cpu), 0);

	KUNIT_EXPECT_PTR_EQ(test, a->waiter_worker, w1);
	KUNIT_EXPECT_GT(test, group_overflows(w1), overflows);
	KUNIT_EXPECT_FALSE(test, a->held_too_long);
	KUNIT_EXPECT_EQ(test, a->ret, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&a->t->accepted), 300);
	gtest_check_ran_once(test, a->t);
	blitz_pool_destroy(pool);
}

KUNIT_ARRAY_PARAM(group_threads, blitz_test_thread_counts,
		  blitz_test_thread_count_desc);

static struct kunit_case group_test_cases[] = {
	KUNIT_CASE(group_test_contexts),
	KUNIT_CASE(group_test_static),
	KUNIT_CASE(group_test_errors),
	KUNIT_CASE_PARAM(group_test_nested, gnest_gen_params),
	KUNIT_CASE(group_test_wait_in_job),
	KUNIT_CASE_PARAM(group_test_cancel_race, group_threads_gen_params),
	KUNIT_CASE(group_test_held_frames),
	KUNIT_CASE(group_test_away),
	{}
};

static struct kunit_suite group_test_suite = {
	.name = "blitz_group",
	.test_cases = group_test_cases,
};

kunit_test_suite(group_test_suite);
