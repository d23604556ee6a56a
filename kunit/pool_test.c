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
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/string.h>

#include "../blitz_kmod/blitz.h"
#include "../blitz_kmod/sleep.h"
#include "test_race.h"
#include "test_threads.h"

static void pool_test_nop(void *arg)
{
}

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
	/* Ignored, as kfree(NULL) is: no WARN in the log, nothing destroyed. */
	blitz_pool_destroy(NULL);
	blitz_pool_destroy(ERR_PTR(-EINVAL));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(blitz_default_pool->shutdown));
	KUNIT_EXPECT_EQ(test, blitz_call(NULL, pool_test_nop, NULL), 0);

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

/* Names are debugfs directory names: these are refused. */
static void pool_test_bad_names(struct kunit *test)
{
	static const char *const bad[] = { ".", "..", "a b", "a\\nb", "*" };
	char *name = kunit_kzalloc(test, 257, GFP_KERNEL);
	struct blitz_pool *pool;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, name);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(blitz_pool_create(bad[i], 1)),
				    -EINVAL, "name \"%s\"", bad[i]);
	memset(name, 'x', 256);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create(name, 1)), -EINVAL);
	/* The longest name allowed, and every kind of character allowed. */
	name[BLITZ_POOL_NAME_MAX] = '\0';
	pool = blitz_pool_create(name, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	if (IS_ENABLED(CONFIG_DEBUG_FS))
		KUNIT_EXPECT_FALSE(test, IS_ERR_OR_NULL(pool->debugfs));
	blitz_pool_destroy(pool);
	pool = blitz_pool_create("Az09._-", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	blitz_pool_destroy(pool);
}

/*
 * A pool driven by hand, whose workers never started: all inactive and
 * awake, none homed on a CPU (so none on the poster's).
 */
static struct blitz_pool *pool_test_hand_pool(struct kunit *test,
					      unsigned int n)
{
	struct blitz_worker *w;
	struct blitz_pool *pool;
	unsigned int i;

	pool = kunit_kzalloc(test, struct_size(pool, workers, n), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pool);
	pool->capacity = n;
	pool->sleepers = kunit_kcalloc(test, BITS_TO_LONGS(n),
				       sizeof(unsigned long), GFP_KERNEL);
	pool->queued = kunit_kcalloc(test, BITS_TO_LONGS(n),
				     sizeof(unsigned long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pool->sleepers);
	KUNIT_ASSERT_NOT_NULL(test, pool->queued);
	pool->nr_workers = n;
	pool->nr_slots = n;
	blitz_counters_init(&pool->counters);
	for (i = 0; i < n; i++) {
		w = kunit_kzalloc(test, sizeof(*w), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, w);
		blitz_deque_init(&w->deque);
		blitz_inject_init(&w->inject);
		init_swait_queue_head(&w->idle_wait);
		w->pool = pool;
		w->index = i;
		w->cpu = nr_cpu_ids;
		pool->workers[i] = w;
		blitz_add_inactive(&pool->counters);
	}
	return pool;
}

/* Worker @i falls asleep, as blitz_sleep() steps 3 and 4 leave it. */
static void pool_test_hand_sleep(struct kunit *test, struct blitz_pool *pool,
				 unsigned int i)
{
	KUNIT_ASSERT_TRUE(test,
			  blitz_try_add_sleeping(&pool->counters,
						 blitz_counters_load(&pool->counters)));
	set_bit(i, pool->sleepers);
}

/* Whether worker @i was woken: claimed, and told so. */
static bool pool_test_hand_woken(struct blitz_pool *pool, unsigned int i)
{
	return READ_ONCE(pool->workers[i]->woken) &&
	       !test_bit(i, pool->sleepers);
}

static unsigned int pool_test_sleeping(struct blitz_pool *pool)
{
	return blitz_sleeping(blitz_counters_load(&pool->counters));
}

/*
 * A worker that stops looking for work while a job is queued and another
 * worker sleeps must wake that worker, whether it found a job or not: a
 * poster that counted it as an awake idle worker did not wake anyone.
 */
static void pool_test_leaving_idle_wakes(struct kunit *test)
{
	struct pool_test_job j = { .job = BLITZ_JOB_INIT(pool_test_func) };
	struct blitz_pool *pool = pool_test_hand_pool(test, 2);

	/* Worker 1 asleep, worker 0 idle and awake, one job queued. */
	pool_test_hand_sleep(test, pool, 1);
	blitz_inject_add(&pool->workers[0]->inject, &j.job.node);

	/* Worker 0 leaves without the job (its latch was set). */
	blitz_idle_work_found(pool->workers[0]);
	KUNIT_EXPECT_TRUE(test, pool_test_hand_woken(pool, 1));
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 0U);
}

/*
 * Wake throttling: a post wakes nobody while an awake worker is looking,
 * and of the lookers that stop, only the last wakes a sleeper.
 */
static void pool_test_wake_throttle(struct kunit *test)
{
	struct pool_test_job j = { .job = BLITZ_JOB_INIT(pool_test_func) };
	struct blitz_pool *pool = pool_test_hand_pool(test, 3);

	/* Workers 0 and 1 awake and looking, worker 2 asleep. */
	pool_test_hand_sleep(test, pool, 2);
	blitz_inject_add(&pool->workers[0]->inject, &j.job.node);
	blitz_new_jobs(pool, 0);
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 1U);

	blitz_idle_work_found(pool->workers[0]);
	KUNIT_EXPECT_FALSE(test, pool_test_hand_woken(pool, 2));
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 1U);

	blitz_idle_work_found(pool->workers[1]);
	KUNIT_EXPECT_TRUE(test, pool_test_hand_woken(pool, 2));
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 0U);
}

/*
 * A submitter that keeps going woke the sleeper of its own CPU, which
 * cannot run before it stops: its next job wakes another sleeper, and
 * the one after that nobody.
 */
static void pool_test_wake_behind_poster(struct kunit *test)
{
	struct pool_test_job j = { .job = BLITZ_JOB_INIT(pool_test_func) };
	struct blitz_pool *pool = pool_test_hand_pool(test, 3);

	pool_test_hand_sleep(test, pool, 0);
	pool_test_hand_sleep(test, pool, 1);
	pool_test_hand_sleep(test, pool, 2);
	blitz_inject_add(&pool->workers[0]->inject, &j.job.node);

	pool->workers[0]->cpu = get_cpu();
	blitz_new_jobs(pool, 0);
	KUNIT_EXPECT_TRUE(test, pool_test_hand_woken(pool, 0));
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 2U);
	blitz_new_jobs(pool, 0);
	KUNIT_EXPECT_TRUE(test, pool_test_hand_woken(pool, 1));
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 1U);
	/* Worker 1 can run: it will find the next job. */
	blitz_new_jobs(pool, 0);
	put_cpu();
	KUNIT_EXPECT_FALSE(test, pool_test_hand_woken(pool, 2));
	KUNIT_EXPECT_EQ(test, pool_test_sleeping(pool), 1U);
}

/* === A worker woken on a CPU that does not yield === */

#define HOLD_MS		1000
#define HOLD_JOBS	200

struct hold {
	struct blitz_pool *pool;
	struct blitz_job jobs[HOLD_JOBS];
	atomic_t ran;
	ktime_t first_ran;
	bool queued;
	struct completion held;
};

static struct hold *hold_test;

static void hold_func(struct blitz_job *job)
{
	struct hold *h = hold_test;

	/* jobs[1] is the first queued on the second CPU. */
	if (job == &h->jobs[1])
		WRITE_ONCE(h->first_ran, ktime_get());
	atomic_inc(&h->ran);
}

/* On the first CPU: queue jobs[0], which wakes its worker, then hold. */
static int hold_cpu(void *arg)
{
	struct hold *h = arg;
	ktime_t end = ktime_add_ms(ktime_get(), HOLD_MS);

	preempt_disable();
	WARN_ON(blitz_submit(h->pool, &h->jobs[0]));
	WRITE_ONCE(h->queued, true);
	while (ktime_before(ktime_get(), end))
		cpu_relax();
	preempt_enable();
	complete(&h->held);
	return 0;
}

/*
 * Every worker asleep, a job queued on the first CPU wakes the worker
 * homed there, which cannot run: a task holds that CPU for HOLD_MS
 * without yielding. That worker is counted awake and idle, so the post of
 * a job queued on the second CPU wakes nobody, and the jobs after it ride
 * along. A job riding along on a list nobody took for over a tick wakes
 * a sleeper: the second CPU's job runs long before the hold ends, not
 * when it ends.
 */
static void pool_test_woken_held(struct kunit *test)
{
	struct blitz_pool_attrs attrs = { .nr_workers = 2 };
	struct hold *h = kunit_kzalloc(test, sizeof(*h), GFP_KERNEL);
	unsigned int c0, c1, i, sent = 1;
	struct task_struct *t;
	cpumask_var_t mask;
	ktime_t queued;
	s64 waited;

	KUNIT_ASSERT_NOT_NULL(test, h);
	if (num_online_cpus() < 2)
		kunit_skip(test, "needs two CPUs");
	KUNIT_ASSERT_TRUE(test, zalloc_cpumask_var(&mask, GFP_KERNEL));
	c0 = cpumask_first(cpu_online_mask);
	c1 = cpumask_next(c0, cpu_online_mask);
	cpumask_set_cpu(c0, mask);
	cpumask_set_cpu(c1, mask);
	attrs.cpumask = mask;
	h->pool = blitz_pool_create_attrs("kunit-held", &attrs);
	free_cpumask_var(mask);
	KUNIT_ASSERT_FALSE(test, IS_ERR(h->pool));
	hold_test = h;
	for (i = 0; i < HOLD_JOBS; i++)
		blitz_job_init(&h->jobs[i], hold_func);
	init_completion(&h->held);
	for (i = 0; i < 250 && pool_test_sleeping(h->pool) < 2; i++)
		msleep(20);
	KUNIT_ASSERT_EQ(test, pool_test_sleeping(h->pool), 2U);

	t = kthread_create(hold_cpu, h, "kunit-hold");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	kthread_bind(t, c0);
	set_cpus_allowed_ptr(current, cpumask_of(c1));
	wake_up_process(t);
	while (!READ_ONCE(h->queued))
		usleep_range(100, 200);
	queued = ktime_get();
	KUNIT_EXPECT_EQ(test, blitz_submit(h->pool, &h->jobs[1]), 0);
	/* A job a millisecond, from the second CPU, until the first ran. */
	while (!READ_ONCE(h->first_ran) && !completion_done(&h->held) &&
	       ++sent < HOLD_JOBS) {
		usleep_range(1000, 1100);
		KUNIT_EXPECT_EQ(test, blitz_submit(h->pool, &h->jobs[sent]), 0);
	}
	wait_for_completion(&h->held);
	set_cpus_allowed_ptr(current, cpu_possible_mask);
	blitz_pool_destroy(h->pool);
	KUNIT_EXPECT_EQ(test, atomic_read(&h->ran),
			(int)min_t(unsigned int, sent + 1, HOLD_JOBS));
	KUNIT_ASSERT_NE(test, h->first_ran, 0);
	waited = ktime_ms_delta(h->first_ran, queued);
	kunit_info(test, "the second CPU's first job waited %lld ms; %u sent",
		   waited, sent);
	KUNIT_EXPECT_LT(test, waited, (s64)HOLD_MS / 4);
}

struct race_submit {
	struct blitz_pool *pool;
	struct pool_test_job j;
	struct blitz_job busy;
	struct completion ran;
};

/*
 * Keeps the worker awake until the next job is on its injection list, so
 * that it finds the job without being woken. It spins: a job that slept
 * would have a spare take its CPU, and the job.
 */
static void race_busy_func(struct blitz_job *job)
{
	struct race_submit *r = container_of(job, struct race_submit, busy);
	unsigned long deadline = jiffies + 10 * HZ;

	while (blitz_inject_empty(&r->pool->workers[0]->inject) &&
	       !completion_done(&r->ran) && time_before(jiffies, deadline))
		blitz_test_relax();
}

static int race_submitter(void *arg)
{
	struct race_submit *r = arg;

	WARN_ON(blitz_submit(r->pool, &r->j.job));
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

/*
 * An outside blitz_submit() racing blitz_pool_destroy(): the job runs
 * (an awake worker finds it) and destroy returns while the submitter is
 * still inside blitz_submit() (the race window stretches it, between the
 * injection and the wake: a spin with preemption off), which must keep
 * the pool alive until it is done with it.
 * KASAN (UML) reports the use-after-free if not; on x86_64, without
 * KASAN, it may go unseen.
 */
static void pool_test_submit_races_destroy(struct kunit *test)
{
	struct race_submit *r = kunit_kzalloc(test, sizeof(*r), GFP_KERNEL);
	struct blitz_test_race race;
	struct task_struct *t;
	atomic_t runs;
	int round;

	KUNIT_ASSERT_NOT_NULL(test, r);
	atomic_set(&runs, 0);
	/*
	 * Only the submitter's window, long enough for destroy, with the RCU
	 * grace periods of percpu_ref_kill() and its own two, to run through
	 * it if it did not wait for the submitter.
	 */
	blitz_test_race_open(&race, BIT(BLITZ_RACE_INJECT_WAKE), 2, 200000);
	for (round = 0; round < 50; round++) {
		r->pool = blitz_pool_create("kunit-race", 1);
		KUNIT_ASSERT_FALSE(test, IS_ERR(r->pool));
		init_completion(&r->ran);
		blitz_job_init(&r->busy, race_busy_func);
		KUNIT_ASSERT_EQ(test, blitz_submit(r->pool, &r->busy), 0);
		blitz_job_init(&r->j.job, pool_test_func);
		r->j.runs = &runs;
		r->j.done = &r->ran;
		t = kthread_run(race_submitter, r, "kunit-race");
		KUNIT_ASSERT_FALSE(test, IS_ERR(t));
		wait_for_completion(&r->ran);
		blitz_pool_destroy(r->pool);
		kthread_stop(t);
	}
	blitz_test_race_close(&race);
	KUNIT_EXPECT_EQ(test, atomic_read(&runs), 50);
}

/*
 * Which worker runs: the per-CPU hint, and the lookup when it names
 * another worker (in UML every worker shares the one CPU).
 */
struct current_check {
	struct blitz_pool *other;
	struct task_struct *task;
	struct blitz_worker *self, *inner, *after, *in_a, *in_b;
	bool missed, refreshed;
};

static void current_inner(void *arg)
{
	struct current_check *c = arg;

	c->inner = blitz_current_worker();
}

static void current_a(void *arg)
{
	struct current_check *c = arg;

	c->in_a = blitz_current_worker();
}

static void current_b(void *arg)
{
	struct current_check *c = arg;

	c->in_b = blitz_current_worker();
}

static void current_outer(void *arg)
{
	struct current_check *c = arg;

	c->task = current;
	c->self = blitz_current_worker();
	/* A worker of the other pool runs this, and sets its own hint. */
	WARN_ON(blitz_call(c->other, current_inner, c));
	c->after = blitz_current_worker();
	if (!c->inner)
		return;
	/* Only we set our hint: with the other's there, the fast path misses. */
	preempt_disable();
	this_cpu_write(blitz_hint, &c->inner->forks);
	c->missed = !__blitz_hinted_forks();
	c->refreshed = blitz_current_worker() == c->self &&
		       __blitz_hinted_forks() == &c->self->forks;
	preempt_enable();
	this_cpu_write(blitz_hint, &c->inner->forks);
	blitz_join(current_a, c, current_b, c);
}

static void pool_test_current_worker(struct kunit *test)
{
	struct blitz_pool *a = blitz_pool_create("kunit-cur-a", 1);
	struct blitz_pool *b = blitz_pool_create("kunit-cur-b", 1);
	struct current_check c = {};

	KUNIT_ASSERT_FALSE(test, IS_ERR(a));
	KUNIT_ASSERT_FALSE(test, IS_ERR(b));
	c.other = b;
	/* The test thread is a kthread, but no worker. */
	KUNIT_EXPECT_NULL(test, blitz_current_worker());
	KUNIT_EXPECT_EQ(test, blitz_call(a, current_outer, &c), 0);
	KUNIT_ASSERT_NOT_NULL(test, c.self);
	KUNIT_EXPECT_PTR_EQ(test, c.self, a->workers[0]);
	KUNIT_EXPECT_PTR_EQ(test, c.self->task, c.task);
	KUNIT_EXPECT_PTR_EQ(test, c.inner, b->workers[0]);
	KUNIT_EXPECT_PTR_EQ(test, c.after, c.self);
	KUNIT_EXPECT_TRUE(test, c.missed);
	KUNIT_EXPECT_TRUE(test, c.refreshed);
	/* A join made with the other's hint there still runs in our pool. */
	KUNIT_EXPECT_PTR_EQ(test, c.in_a, c.self);
	KUNIT_EXPECT_PTR_EQ(test, c.in_b, c.self);
	blitz_pool_destroy(b);
	blitz_pool_destroy(a);
}

/*
 * A task and an hrtimer of the same CPU (hard interrupt) take credits
 * from its stock, the task held, at every stock it finds empty, between
 * its decrement and the undo, where the count is below the credits held
 * and the interrupt refills over it. Every job runs once, and destroy
 * gets every reference back: a stock the count overstated would drain
 * early (percpu_ref's underflow warning in the log), one it understated
 * would never drain.
 */
#define CREDIT_TASK_JOBS	(64 * 16)
#define CREDIT_IRQ_JOBS		512

struct credit_job {
	struct blitz_job job;
	atomic_t runs;
};

struct credit_race {
	struct blitz_pool *pool;
	struct hrtimer timer;
	unsigned int irq_next;
	unsigned int refused;
	struct credit_job jobs[CREDIT_TASK_JOBS + CREDIT_IRQ_JOBS];
};

static void credit_func(struct blitz_job *job)
{
	atomic_inc(&container_of(job, struct credit_job, job)->runs);
}

static enum hrtimer_restart credit_irq(struct hrtimer *t)
{
	struct credit_race *c = container_of(t, struct credit_race, timer);
	struct credit_job *j = &c->jobs[CREDIT_TASK_JOBS + c->irq_next];

	if (blitz_submit(c->pool, &j->job))
		c->refused++;
	WRITE_ONCE(c->irq_next, c->irq_next + 1);
	if (c->irq_next == CREDIT_IRQ_JOBS)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(20 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void pool_test_credits_irq(struct kunit *test)
{
	struct credit_race *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	unsigned long deadline = jiffies + 30 * HZ;
	struct blitz_test_race race;
	unsigned int i, refused = 0;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c->pool = blitz_pool_create("kunit-credits", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->pool));
	for (i = 0; i < ARRAY_SIZE(c->jobs); i++)
		blitz_job_init(&c->jobs[i].job, credit_func);
	blitz_test_race_open(&race, BIT(BLITZ_RACE_CREDIT_UNDO), 1, 500);
	/* One CPU's stock: the task's and its pinned timer's. */
	migrate_disable();
	hrtimer_init(&c->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	c->timer.function = credit_irq;
	hrtimer_start(&c->timer, ns_to_ktime(20 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
	for (i = 0; i < CREDIT_TASK_JOBS; i++)
		if (blitz_submit(c->pool, &c->jobs[i].job))
			refused++;
	while (READ_ONCE(c->irq_next) < CREDIT_IRQ_JOBS &&
	       time_before(jiffies, deadline))
		usleep_range(100, 200);
	hrtimer_cancel(&c->timer);
	migrate_enable();
	blitz_test_race_close(&race);
	KUNIT_EXPECT_EQ(test, c->irq_next, CREDIT_IRQ_JOBS);
	KUNIT_EXPECT_EQ(test, refused + c->refused, 0);
	blitz_pool_destroy(c->pool);
	for (i = 0; i < c->irq_next + CREDIT_TASK_JOBS; i++)
		KUNIT_EXPECT_EQ_MSG(test, atomic_read(&c->jobs[i].runs), 1,
				    "job %u", i);
}

static struct kunit_case pool_test_cases[] = {
	KUNIT_CASE(pool_test_errors),
	KUNIT_CASE(pool_test_current_worker),
	KUNIT_CASE(pool_test_bad_names),
	KUNIT_CASE(pool_test_leaving_idle_wakes),
	KUNIT_CASE(pool_test_wake_throttle),
	KUNIT_CASE(pool_test_wake_behind_poster),
	KUNIT_CASE(pool_test_woken_held),
	KUNIT_CASE(pool_test_submit_races_destroy),
	KUNIT_CASE(pool_test_credits_irq),
	KUNIT_CASE(pool_test_destroy_drains),
	KUNIT_CASE_SLOW(pool_test_lost_wakeup),
	{}
};

static struct kunit_suite pool_test_suite = {
	.name = "blitz_pool",
	.test_cases = pool_test_cases,
};

kunit_test_suite(pool_test_suite);
