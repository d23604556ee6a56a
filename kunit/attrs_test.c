// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for blitz_pool_create_attrs(): the attributes refused, the
 * nice value of workers and spares, and a pool held to one CPU. The
 * housekeeping CPUs, CPU hotplug and freezing are the guest selftests'
 * (selftests/isolated.sh, selftests/blitz_freeze.sh).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/err.h>
#include <linux/sched.h>

#include "../blitz_kmod/blitz.h"

static void attrs_test_errors(struct kunit *test)
{
	struct blitz_pool_attrs attrs = {};
	struct blitz_pool *pool;

	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create_attrs("a", NULL)),
			-EINVAL);
	attrs.nice = MIN_NICE - 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create_attrs("a", &attrs)),
			-EINVAL);
	attrs.nice = MAX_NICE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create_attrs("a", &attrs)),
			-EINVAL);
	attrs.nice = 0;
	attrs.flags = BIT(5);
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create_attrs("a", &attrs)),
			-EINVAL);
	attrs.flags = 0;
	attrs.cpumask = cpu_none_mask;
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create_attrs("a", &attrs)),
			-EINVAL);
	attrs.cpumask = NULL;
	attrs.nr_workers = num_possible_cpus() + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(blitz_pool_create_attrs("a", &attrs)),
			-EINVAL);
	/* Each refusal left the name free. */
	attrs.nr_workers = 1;
	attrs.nice = MAX_NICE;
	attrs.flags = BLITZ_POOL_FREEZABLE;
	pool = blitz_pool_create_attrs("a", &attrs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, pool->nice, MAX_NICE);
	KUNIT_EXPECT_EQ(test, pool->flags, BLITZ_POOL_FREEZABLE);
	blitz_pool_destroy(pool);
}

#define NICE	7

struct nice_jobs {
	struct blitz_job blocker, later;
	struct completion go;
	struct task_struct *blocker_task, *later_task;
	int blocker_nice, later_nice;
};

/* Blocks until @later has run: on a spare, the only worker blocked. */
static void nice_blocker(struct blitz_job *job)
{
	struct nice_jobs *n = container_of(job, struct nice_jobs, blocker);

	n->blocker_task = current;
	n->blocker_nice = task_nice(current);
	wait_for_completion(&n->go);
}

static void nice_later(struct blitz_job *job)
{
	struct nice_jobs *n = container_of(job, struct nice_jobs, later);

	n->later_task = current;
	n->later_nice = task_nice(current);
	complete(&n->go);
}

/* The worker and the spare that a block brings both run at the nice. */
static void attrs_test_nice(struct kunit *test)
{
	struct blitz_pool_attrs attrs = { .nr_workers = 1, .nice = NICE };
	struct nice_jobs n = {
		.blocker = BLITZ_JOB_INIT(nice_blocker),
		.later = BLITZ_JOB_INIT(nice_later),
	};
	struct blitz_pool *pool;

	if (!IS_ENABLED(CONFIG_PREEMPT_NOTIFIERS))
		kunit_skip(test, "spares need CONFIG_PREEMPT_NOTIFIERS");
	init_completion(&n.go);
	pool = blitz_pool_create_attrs("kunit-nice", &attrs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, blitz_submit(pool, &n.blocker), 0);
	KUNIT_EXPECT_EQ(test, blitz_submit(pool, &n.later), 0);
	blitz_pool_destroy(pool);
	KUNIT_EXPECT_EQ(test, n.blocker_nice, NICE);
	KUNIT_EXPECT_EQ(test, n.later_nice, NICE);
	KUNIT_EXPECT_PTR_NE(test, n.blocker_task, n.later_task);
}

#define ONE_JOBS	64
#define ONE_N		4096

struct one_cpu {
	atomic_t runs, elsewhere;
	int cpu;
};

struct one_cpu_job {
	struct blitz_job job;
	struct one_cpu *o;
};

/* @n runs (jobs, join halves, loop indices) on this CPU. */
static void one_cpu_note(struct one_cpu *o, unsigned int n)
{
	atomic_add(n, &o->runs);
	if (raw_smp_processor_id() != o->cpu)
		atomic_add(n, &o->elsewhere);
}

static void one_cpu_job(struct blitz_job *job)
{
	one_cpu_note(container_of(job, struct one_cpu_job, job)->o, 1);
}

struct one_cpu_fib {
	struct one_cpu *o;
	unsigned int n;
};

static void one_cpu_fib(void *arg)
{
	struct one_cpu_fib *f = arg;
	struct one_cpu_fib a = { f->o, f->n - 1 }, b = { f->o, f->n - 2 };

	one_cpu_note(f->o, 1);
	if (f->n >= 2)
		blitz_join(one_cpu_fib, &a, one_cpu_fib, &b);
}

static void one_cpu_range(unsigned long lo, unsigned long hi, void *arg)
{
	one_cpu_note(arg, hi - lo);
}

static void one_cpu_call(void *arg)
{
	struct one_cpu_fib f = { arg, 15 };

	one_cpu_fib(&f);
	blitz_parallel_for(0, ONE_N, 1, one_cpu_range, arg);
}

/*
 * As many workers as CPUs, all homed on one CPU: every job, every join
 * half and every loop range runs there.
 */
static void attrs_test_one_cpu(struct kunit *test)
{
	struct blitz_pool_attrs attrs = { .nr_workers = num_possible_cpus() };
	struct one_cpu_job *jobs;
	struct blitz_pool *pool;
	struct one_cpu *o;
	unsigned int i;

	o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	jobs = kunit_kcalloc(test, ONE_JOBS, sizeof(*jobs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_ASSERT_NOT_NULL(test, jobs);
	o->cpu = cpumask_last(cpu_online_mask);
	attrs.cpumask = cpumask_of(o->cpu);
	pool = blitz_pool_create_attrs("kunit-one-cpu", &attrs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	for (i = 0; i < pool->nr_workers; i++)
		KUNIT_EXPECT_EQ(test, pool->workers[i]->cpu, o->cpu);
	for (i = 0; i < ONE_JOBS; i++) {
		blitz_job_init(&jobs[i].job, one_cpu_job);
		jobs[i].o = o;
		KUNIT_EXPECT_EQ(test, blitz_submit(pool, &jobs[i].job), 0);
	}
	KUNIT_EXPECT_EQ(test, blitz_call(pool, one_cpu_call, o), 0);
	blitz_pool_destroy(pool);
	/* fib(15) has 1973 nodes. */
	KUNIT_EXPECT_EQ(test, atomic_read(&o->runs), ONE_JOBS + 1973 + ONE_N);
	KUNIT_EXPECT_EQ(test, atomic_read(&o->elsewhere), 0);

	/* No count: one worker for the mask's one online CPU. */
	attrs.nr_workers = 0;
	pool = blitz_pool_create_attrs("kunit-one-cpu", &attrs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	KUNIT_EXPECT_EQ(test, pool->nr_workers, 1U);
	blitz_pool_destroy(pool);
}

static struct kunit_case attrs_test_cases[] = {
	KUNIT_CASE(attrs_test_errors),
	KUNIT_CASE(attrs_test_nice),
	KUNIT_CASE(attrs_test_one_cpu),
	{}
};

static struct kunit_suite attrs_test_suite = {
	.name = "blitz_attrs",
	.test_cases = attrs_test_cases,
};

kunit_test_suite(attrs_test_suite);
