// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for jobs that sleep (cm.c): a job that blocks does not idle
 * its CPU's share of the pool, a preemption is not a block, spares are
 * bounded and exit when unneeded, and a spare's slot moves to the CPU
 * that needs it. The deadlocks that waiters running other work made are
 * probed through the API, in every guest kernel (blitz_selftest.c).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/wait_bit.h>

#include "../blitz_kmod/blitz.h"

static u64 cm_stat(struct blitz_pool *pool, enum blitz_stat s)
{
	unsigned int i, n = blitz_nr_slots(pool);
	u64 sum = 0;

	for (i = 0; i < n; i++)
		sum += READ_ONCE(pool->workers[i]->stats[s]);
	return sum;
}

static unsigned int cm_spares(struct blitz_pool *pool)
{
	/* The manager's count, written under its lock: a snapshot. */
	return data_race(pool->nr_spares);
}

/* === A job waits for a job submitted after it === */

struct later {
	struct blitz_job first, second;
	struct completion started, signal, done;
	struct task_struct *first_task, *second_task;
	bool timed_out;
};

static void later_first(struct blitz_job *job)
{
	struct later *l = container_of(job, struct later, first);

	l->first_task = current;
	complete(&l->started);
	l->timed_out = !wait_for_completion_timeout(&l->signal, 10 * HZ);
	complete(&l->done);
}

static void later_second(struct blitz_job *job)
{
	struct later *l = container_of(job, struct later, second);

	l->second_task = current;
	complete(&l->signal);
}

/*
 * In @pool, of one worker, a job waits for one submitted after it
 * started, 5 rounds: a spare runs the second while the first blocks.
 * Rounds after the first find a spare parked, or the one on duty; there
 * the first job need not block: the other task may run the second before
 * the first waits (at once, on another CPU, while the home CPU is
 * offline). Returns whether all went so; after a failure the second job
 * of the round may still be queued, and @l in use.
 */
static bool later_rounds(struct kunit *test, struct blitz_pool *pool,
			 struct later *l)
{
	u64 blocks = cm_stat(pool, BLITZ_STAT_BLOCKS);
	int round, ret = 0;

	for (round = 0; round < 5 && !ret; round++) {
		blitz_job_init(&l->first, later_first);
		blitz_job_init(&l->second, later_second);
		init_completion(&l->started);
		init_completion(&l->signal);
		init_completion(&l->done);
		ret = blitz_submit(pool, &l->first);
		if (!ret) {
			wait_for_completion(&l->started);
			ret = blitz_submit(pool, &l->second);
			wait_for_completion(&l->done);
		}
		KUNIT_EXPECT_EQ_MSG(test, ret, 0, "round %d: a submit failed",
				    round);
		KUNIT_EXPECT_FALSE_MSG(test, l->timed_out,
				       "round %d: the second job waited for the first",
				       round);
		KUNIT_EXPECT_PTR_NE(test, l->first_task, l->second_task);
		if (l->timed_out)
			ret = -ETIMEDOUT;
	}
	KUNIT_EXPECT_GE(test, cm_stat(pool, BLITZ_STAT_BLOCKS) - blocks, 1ULL);
	KUNIT_EXPECT_GE(test, cm_spares(pool), 1U);
	return !ret;
}

static void cm_test_later_job(struct kunit *test)
{
	/* Not test-managed: on a failure the stuck job still uses it. */
	struct later *l = kzalloc(sizeof(*l), GFP_KERNEL);
	struct blitz_pool *pool;

	KUNIT_ASSERT_NOT_NULL(test, l);
	pool = blitz_pool_create("kunit-later", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	later_rounds(test, pool, l);
	blitz_pool_destroy(pool);
	kfree(l);
}

/*
 * As cm_test_later_job, with the worker's home CPU offline: it runs
 * elsewhere, and its blocks count for its home all the same. Then again
 * with the CPU back.
 */
static void cm_test_later_away(struct kunit *test)
{
	struct later *l = kzalloc(sizeof(*l), GFP_KERNEL);
	unsigned int cpu = cpumask_last(cpu_online_mask);
	struct blitz_pool *pool;
	bool ok;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, l);
	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU) || num_online_cpus() < 2) {
		kfree(l);
		kunit_skip(test, "needs CPU hotplug and two CPUs");
	}
	pool = blitz_pool_create_attrs("kunit-later-away",
				       &(struct blitz_pool_attrs){
					       .nr_workers = 1,
					       .cpumask = cpumask_of(cpu) });
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	ret = remove_cpu(cpu);
	if (ret) {
		blitz_pool_destroy(pool);
		kfree(l);
		KUNIT_FAIL(test, "CPU %u did not go offline: %d", cpu, ret);
		return;
	}
	ok = later_rounds(test, pool, l);
	KUNIT_EXPECT_EQ(test, add_cpu(cpu), 0);
	if (ok)
		later_rounds(test, pool, l);
	blitz_pool_destroy(pool);
	kfree(l);
}

/* === Every worker blocked, the pool still runs jobs === */

#define SHARE_JOBS	64
#define SHARE_SLEEPERS	8

struct share_job {
	struct blitz_job job;
	struct blocked *b;
	atomic_t runs;
};

struct blocked {
	struct share_job sleepers[SHARE_SLEEPERS];
	struct share_job jobs[SHARE_JOBS];
	struct completion release;
	atomic_t asleep, ran;
	bool released, late;
};

static void blocked_sleeper(struct blitz_job *job)
{
	struct share_job *j = container_of(job, struct share_job, job);
	struct blocked *b = j->b;

	atomic_inc(&j->runs);
	atomic_inc(&b->asleep);
	wake_up_var(&b->asleep);
	if (!wait_for_completion_timeout(&b->release, 20 * HZ))
		WRITE_ONCE(b->late, true);
}

static void blocked_job(struct blitz_job *job)
{
	struct share_job *j = container_of(job, struct share_job, job);

	atomic_inc(&j->runs);
	atomic_inc(&j->b->ran);
	wake_up_var(&j->b->ran);
}

/*
 * One job per worker sleeps until the test releases it; the jobs
 * submitted meanwhile all run, on spares, before the release.
 */
static void cm_test_all_blocked(struct kunit *test)
{
	unsigned int n = min(num_online_cpus(), SHARE_SLEEPERS);
	struct blocked *b = kzalloc(sizeof(*b), GFP_KERNEL);
	struct blitz_pool *pool;
	bool all;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, b);
	init_completion(&b->release);
	pool = blitz_pool_create("kunit-blocked", n);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	for (i = 0; i < n; i++) {
		b->sleepers[i].b = b;
		blitz_job_init(&b->sleepers[i].job, blocked_sleeper);
		KUNIT_EXPECT_EQ(test, blitz_submit(pool, &b->sleepers[i].job), 0);
	}
	wait_var_event_timeout(&b->asleep, atomic_read(&b->asleep) == n,
			       10 * HZ);
	KUNIT_EXPECT_EQ(test, atomic_read(&b->asleep), n);
	for (i = 0; i < SHARE_JOBS; i++) {
		b->jobs[i].b = b;
		blitz_job_init(&b->jobs[i].job, blocked_job);
		KUNIT_EXPECT_EQ(test, blitz_submit(pool, &b->jobs[i].job), 0);
	}
	all = wait_var_event_timeout(&b->ran,
				     atomic_read(&b->ran) == SHARE_JOBS,
				     10 * HZ);
	KUNIT_EXPECT_TRUE_MSG(test, all,
			      "%d of %d jobs ran while %u workers slept",
			      atomic_read(&b->ran), SHARE_JOBS, n);
	complete_all(&b->release);
	blitz_pool_destroy(pool);
	KUNIT_EXPECT_FALSE(test, b->late);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&b->sleepers[i].runs), 1);
	for (i = 0; i < SHARE_JOBS; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&b->jobs[i].runs), 1);
	kfree(b);
}

/* === Jobs that share a mutex === */

#define MUTEX_JOBS	32

struct locker {
	struct blitz_job job;
	struct lockers *l;
	atomic_t runs;
};

struct lockers {
	struct mutex lock;	/* what every job takes, and sleeps holding */
	struct blitz_group group;
	struct locker jobs[MUTEX_JOBS];
	unsigned int inside;	/* under lock */
	bool overlap;
};

static void locker_func(struct blitz_job *job)
{
	struct locker *j = container_of(job, struct locker, job);
	struct lockers *l = j->l;

	atomic_inc(&j->runs);
	mutex_lock(&l->lock);
	if (l->inside++)
		l->overlap = true;
	usleep_range(500, 1000);
	l->inside--;
	mutex_unlock(&l->lock);
}

/*
 * In a pool of one worker, each job takes a mutex and sleeps holding it:
 * the others block on the mutex, each on a spare, and all get through.
 */
static void cm_test_mutex(struct kunit *test)
{
	struct lockers *l = kunit_kzalloc(test, sizeof(*l), GFP_KERNEL);
	struct blitz_pool *pool;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, l);
	mutex_init(&l->lock);
	pool = blitz_pool_create("kunit-mutex", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	blitz_group_init(&l->group, pool);
	for (i = 0; i < MUTEX_JOBS; i++) {
		l->jobs[i].l = l;
		blitz_job_init(&l->jobs[i].job, locker_func);
		KUNIT_EXPECT_EQ(test,
				blitz_group_submit(&l->group, &l->jobs[i].job), 0);
	}
	KUNIT_EXPECT_EQ(test, blitz_group_wait(&l->group), 0);
	KUNIT_EXPECT_FALSE(test, l->overlap);
	for (i = 0; i < MUTEX_JOBS; i++)
		KUNIT_EXPECT_EQ(test, atomic_read(&l->jobs[i].runs), 1);
	KUNIT_EXPECT_LE(test, cm_spares(pool), pool->max_spares);
	kunit_info(test, "%u spares, %llu blocks", cm_spares(pool),
		   cm_stat(pool, BLITZ_STAT_BLOCKS));
	blitz_pool_destroy(pool);
}

/* === A preemption is not a block === */

struct preempted {
	struct blitz_job job;
	struct completion done;
	unsigned long switches;
	u64 blocks;
	bool stop;
};

/* Runs on the worker's CPU for as long as the job does, yielding. */
static int preempted_hog(void *arg)
{
	struct preempted *p = arg;

	while (!READ_ONCE(p->stop))
		cond_resched();
	return 0;
}

/* 100 ms of computing, with preemption points, and no block. */
static void preempted_func(struct blitz_job *job)
{
	struct preempted *p = container_of(job, struct preempted, job);
	struct blitz_worker *w = blitz_current_worker();
	unsigned long end = jiffies + HZ / 10;
	unsigned long nivcsw = current->nivcsw;

	p->blocks = READ_ONCE(w->stats[BLITZ_STAT_BLOCKS]);
	while (time_before(jiffies, end))
		cond_resched();
	p->blocks = READ_ONCE(w->stats[BLITZ_STAT_BLOCKS]) - p->blocks;
	p->switches = current->nivcsw - nivcsw;
	complete(&p->done);
}

/*
 * A job that shares its CPU with a thread of its own priority is switched
 * out, now and then, runnable: no block is counted, no spare is made.
 */
static void cm_test_preempted(struct kunit *test)
{
	struct preempted p = { .job = BLITZ_JOB_INIT(preempted_func) };
	struct blitz_pool *pool;
	struct task_struct *t;

	init_completion(&p.done);
	pool = blitz_pool_create("kunit-preempted", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	t = kthread_create_on_cpu(preempted_hog, &p, pool->workers[0]->cpu,
				  "kunit-hog/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);
	wake_up_process(t);
	KUNIT_EXPECT_EQ(test, blitz_submit(pool, &p.job), 0);
	wait_for_completion(&p.done);
	WRITE_ONCE(p.stop, true);
	kthread_stop(t);
	put_task_struct(t);
	kunit_info(test, "switched out %lu times, runnable", p.switches);
	KUNIT_EXPECT_GT(test, p.switches, 0UL);
	KUNIT_EXPECT_EQ(test, p.blocks, 0ULL);
	KUNIT_EXPECT_EQ(test, cm_spares(pool), 0U);
	blitz_pool_destroy(pool);
}

/* === Spares exit when unneeded === */

static void spare_exit_func(struct blitz_job *job)
{
	msleep(20);
}

/* A spare left parked for spare_idle_ms exits; its slot stays. */
static void cm_test_spare_exit(struct kunit *test)
{
	unsigned int idle_ms = blitz_spare_idle_ms;
	struct blitz_job job = BLITZ_JOB_INIT(spare_exit_func);
	struct blitz_group group;
	struct blitz_pool *pool;
	unsigned long deadline;
	unsigned int seen = 0;

	pool = blitz_pool_create("kunit-spare-exit", 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	WRITE_ONCE(blitz_spare_idle_ms, 50);
	blitz_group_init(&group, pool);
	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, &job), 0);
	deadline = jiffies + 5 * HZ;
	/* Slots only grow: a spare made and gone already still shows. */
	while (!seen && time_before(jiffies, deadline)) {
		seen = blitz_nr_slots(pool) - pool->nr_workers;
		usleep_range(100, 200);
	}
	KUNIT_EXPECT_EQ(test, blitz_group_wait(&group), 0);
	deadline = jiffies + 5 * HZ;
	while (cm_spares(pool) && time_before(jiffies, deadline))
		msleep(20);
	WRITE_ONCE(blitz_spare_idle_ms, idle_ms);
	KUNIT_EXPECT_GE(test, seen, 1U);
	KUNIT_EXPECT_EQ(test, cm_spares(pool), 0U);
	KUNIT_EXPECT_GE(test, blitz_nr_slots(pool), 2U);
	/* A slot of an exited spare takes the next one. */
	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, &job), 0);
	KUNIT_EXPECT_EQ(test, blitz_group_wait(&group), 0);
	KUNIT_EXPECT_EQ(test, blitz_nr_slots(pool), 2U);
	blitz_pool_destroy(pool);
}

/* === A spare's slot moves to the CPU that needs it === */

struct slot_job {
	struct blitz_job job;
	struct blitz_pool *pool;
	struct completion release, done;
	unsigned int cpu;
	unsigned int ran_on;
	bool blocked;
	bool timed_out;
};

/* Hop from worker to worker until on @cpu, then block until released. */
static void slot_func(struct blitz_job *job)
{
	struct slot_job *s = container_of(job, struct slot_job, job);

	/* Workers are bound: the CPU cannot change under the job. */
	s->ran_on = raw_smp_processor_id();
	if (s->ran_on != s->cpu) {
		WARN_ON(blitz_submit(s->pool, job));
		return;
	}
	WRITE_ONCE(s->blocked, true);
	s->timed_out = !wait_for_completion_timeout(&s->release, 10 * HZ);
	complete(&s->done);
}

/* Block worker @k's CPU: whether a spare comes on duty there. */
static bool slot_block(struct kunit *test, struct blitz_pool *pool,
		       struct slot_job *s, unsigned int k)
{
	unsigned long deadline = jiffies + 5 * HZ;
	bool spare = false;
	unsigned int i;

	s->cpu = pool->workers[k]->cpu;
	WRITE_ONCE(s->blocked, false);
	init_completion(&s->release);
	init_completion(&s->done);
	blitz_job_init(&s->job, slot_func);
	KUNIT_EXPECT_EQ(test, blitz_submit(pool, &s->job), 0);
	while (!READ_ONCE(s->blocked) && time_before(jiffies, deadline))
		usleep_range(100, 200);
	while (!spare && time_before(jiffies, deadline)) {
		for (i = pool->nr_workers; i < blitz_nr_slots(pool); i++)
			spare |= READ_ONCE(pool->workers[i]->on_duty) &&
				 READ_ONCE(pool->workers[i]->cpu) == s->cpu;
		usleep_range(100, 200);
	}
	complete(&s->release);
	wait_for_completion(&s->done);
	KUNIT_EXPECT_EQ(test, s->ran_on, s->cpu);
	KUNIT_EXPECT_FALSE(test, s->timed_out);
	/* Unneeded now: parked, it exits after spare_idle_ms. */
	deadline = jiffies + 5 * HZ;
	while (cm_spares(pool) && time_before(jiffies, deadline))
		msleep(20);
	KUNIT_EXPECT_EQ(test, cm_spares(pool), 0U);
	return spare;
}

/*
 * With max_spares at 1, the slot of the spare that a block on one CPU
 * made, and that exited, takes the spare for a block on another: a pool
 * below its bound always finds a slot.
 */
static void cm_test_slot_moves(struct kunit *test)
{
	unsigned int max = blitz_max_spares, idle_ms = blitz_spare_idle_ms;
	/* Not test-managed: on a failure the stuck job still uses it. */
	struct slot_job *s;
	struct blitz_pool *pool;

	if (num_online_cpus() < 2)
		kunit_skip(test, "workers on two CPUs need two CPUs");
	s = kzalloc(sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	WRITE_ONCE(blitz_max_spares, 1);
	pool = blitz_pool_create("kunit-slot", 2);
	WRITE_ONCE(blitz_max_spares, max);
	KUNIT_ASSERT_FALSE(test, IS_ERR(pool));
	s->pool = pool;
	WRITE_ONCE(blitz_spare_idle_ms, 50);
	KUNIT_EXPECT_TRUE_MSG(test, slot_block(test, pool, s, 0),
			      "no spare for worker 0's CPU");
	KUNIT_EXPECT_TRUE_MSG(test, slot_block(test, pool, s, 1),
			      "no spare for worker 1's CPU");
	WRITE_ONCE(blitz_spare_idle_ms, idle_ms);
	KUNIT_EXPECT_EQ(test, blitz_nr_slots(pool), 3U);
	blitz_pool_destroy(pool);
	kfree(s);
}

/* === A woken worker takes its CPU back without a spare === */

/* Tries of the hand-over, for one the CPU's other tasks leave alone. */
#define HANDOVER_TRIES	5

/* Whether @pool has one spare, parked. */
static bool cm_parked(struct blitz_pool *pool)
{
	return cm_spares(pool) == 1 &&
	       !READ_ONCE(pool->workers[pool->nr_workers]->on_duty);
}

struct handover {
	struct blitz_job first, second, third;
	struct blitz_pool *pool;
	struct completion started, go, third_ran, done;
	struct task_struct *first_task, *third_task;
	bool third_late;
	/* The task the CPU switched to when the second's worker blocked. */
	struct task_struct *next_task;
	char next_comm[TASK_COMM_LEN];
	struct preempt_notifier pn;
	bool timed_out;
};

/* The notifier's ops need both callbacks: nothing to do at a switch-in. */
static void handover_sched_in(struct preempt_notifier *pn, int cpu)
{
}

/* Note the task that the first block of the second's worker switches to. */
static void handover_sched_out(struct preempt_notifier *pn,
			       struct task_struct *next)
{
	struct handover *h = container_of(pn, struct handover, pn);

	if (READ_ONCE(current->__state) != TASK_RUNNING && !h->next_task) {
		h->next_task = next;
		/* A rename meanwhile garbles a message at most. */
		data_race(memcpy(h->next_comm, next->comm, TASK_COMM_LEN));
	}
}

static struct preempt_ops handover_ops = {
	.sched_in = handover_sched_in,
	.sched_out = handover_sched_out,
};

static void handover_first(struct blitz_job *job)
{
	struct handover *h = container_of(job, struct handover, first);

	h->first_task = current;
	complete(&h->started);
	h->timed_out = !wait_for_completion_timeout(&h->go, 10 * HZ);
}

/*
 * On the spare that the first job's block put on duty: queue the third
 * job, wake the first, and block before it can run: the CPU goes to the
 * first's worker, which finds the third on our deque. A notifier of our
 * own sees which task the CPU switches to at that block. We stay in this
 * job until the third has run (10 s at most), so that we do not take it
 * back ourselves, however late the first's worker gets to it; a block of
 * ours then finds that worker counted running, and puts no spare on duty
 * either.
 */
static void handover_second(struct blitz_job *job)
{
	struct handover *h = container_of(job, struct handover, second);

	WARN_ON(blitz_submit(h->pool, &h->third));
	preempt_notifier_init(&h->pn, &handover_ops);
	preempt_disable();
	preempt_notifier_register(&h->pn);
	complete(&h->go);
	set_current_state(TASK_UNINTERRUPTIBLE);
	preempt_enable_no_resched();
	schedule_timeout(HZ / 10);
	preempt_disable();
	preempt_notifier_unregister(&h->pn);
	preempt_enable();
	h->third_late = !wait_for_completion_timeout(&h->third_ran, 10 * HZ);
}

static void handover_third(struct blitz_job *job)
{
	struct handover *h = container_of(job, struct handover, third);

	h->third_task = current;
	complete(&h->third_ran);
	complete(&h->done);
}

/*
 * Whether @task is a worker of @pool: one other than the woken worker,
 * the spare parked asleep, that ran first was woken before its time.
 */
static bool handover_ours(struct blitz_pool *pool, struct task_struct *task)
{
	unsigned int i;

	for (i = 0; i < blitz_nr_slots(pool); i++) {
		/* A pointer compared, never followed: stale does no harm. */
		if (data_race(pool->workers[i]->task) == task)
			return true;
	}
	return false;
}

/*
 * One hand-over in a new pool of @attrs. False if, when the second's
 * worker blocked, the CPU switched to a task other than the woken worker:
 * then the spare is rightly put on duty, and may take the job.
 */
static bool handover_try(struct kunit *test,
			 const struct blitz_pool_attrs *attrs)
{
	/* Not test-managed: on a failure the stuck job still uses it. */
	struct handover *h = kzalloc(sizeof(*h), GFP_KERNEL);
	struct blitz_job warm = BLITZ_JOB_INIT(spare_exit_func);
	unsigned long deadline = jiffies + 5 * HZ;
	struct task_struct *parked = NULL;
	struct blitz_group group;
	bool straight, ours;

	KUNIT_ASSERT_NOT_NULL(test, h);
	h->pool = blitz_pool_create_attrs("kunit-handover", attrs);
	KUNIT_ASSERT_FALSE(test, IS_ERR(h->pool));
	/* A block and its end leave a spare parked. */
	blitz_group_init(&group, h->pool);
	KUNIT_EXPECT_EQ(test, blitz_group_submit(&group, &warm), 0);
	KUNIT_EXPECT_EQ(test, blitz_group_wait(&group), 0);
	while (!cm_parked(h->pool) && time_before(jiffies, deadline))
		usleep_range(100, 200);
	KUNIT_EXPECT_TRUE(test, cm_parked(h->pool));
	init_completion(&h->started);
	init_completion(&h->go);
	init_completion(&h->third_ran);
	init_completion(&h->done);
	blitz_job_init(&h->first, handover_first);
	blitz_job_init(&h->second, handover_second);
	blitz_job_init(&h->third, handover_third);
	KUNIT_EXPECT_EQ(test, blitz_submit(h->pool, &h->first), 0);
	wait_for_completion(&h->started);
	/* That spare on duty for the block, one parked ahead by the manager. */
	while (cm_spares(h->pool) < 2 && time_before(jiffies, deadline))
		usleep_range(100, 200);
	KUNIT_EXPECT_EQ(test, cm_spares(h->pool), 2U);
	flush_work(&h->pool->manage);
	/* The new spare's first run, up to its first sleep, is over too. */
	if (blitz_nr_slots(h->pool) > h->pool->nr_workers + 1)
		parked = h->pool->workers[h->pool->nr_workers + 1]->task;
	while (parked && READ_ONCE(parked->on_rq) &&
	       time_before(jiffies, deadline))
		usleep_range(100, 200);
	if (parked && READ_ONCE(parked->on_rq))
		parked = NULL;
	KUNIT_EXPECT_EQ(test, blitz_submit(h->pool, &h->second), 0);
	wait_for_completion(&h->done);
	ours = parked && handover_ours(h->pool, h->next_task);
	blitz_pool_destroy(h->pool);
	KUNIT_EXPECT_FALSE(test, h->timed_out);
	KUNIT_EXPECT_FALSE_MSG(test, h->third_late, "the third job never ran");
	straight = h->next_task == h->first_task;
	if (straight) {
		KUNIT_EXPECT_PTR_EQ_MSG(test, h->third_task, h->first_task,
					"a spare ran the job the woken worker could");
	} else if (ours) {
		KUNIT_FAIL(test, "the CPU ran %s, of the pool, first",
			   h->next_comm);
		straight = true;
	} else {
		kunit_info(test, "the CPU ran %s first: again",
			   h->next_task ? h->next_comm : "(none)");
	}
	kfree(h);
	return straight;
}

/*
 * A worker that blocks while a woken worker of its CPU waits to run hands
 * the CPU to it: no parked spare is put on duty, and the woken worker runs
 * the job left queued. A spare put on duty would start ahead of it and
 * take the job.
 *
 * The hand-over needs the CPU to switch from the blocking spare straight
 * to the woken worker. Another task picked first there (this thread,
 * runnable right after its submit; the manager's kworker, finishing; any
 * per-CPU kthread woken in that window) takes the CPU from the pool, and
 * the spare is then rightly put on duty. So with two CPUs the pool has
 * the last and this thread the first, the manager is done and its new
 * spare asleep before the hand-over, and a try that another task
 * disturbed anyway is made again.
 */
static void cm_test_handover(struct kunit *test)
{
	const struct cpumask *ours = cpumask_of(cpumask_first(cpu_online_mask));
	struct blitz_pool_attrs attrs = { .nr_workers = 1 };
	int i;

	if (num_online_cpus() > 1) {
		attrs.cpumask = cpumask_of(cpumask_last(cpu_online_mask));
		/* This test's own thread, which ends with the test. */
		KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, ours), 0);
	}
	for (i = 0; i < HANDOVER_TRIES; i++) {
		if (handover_try(test, &attrs))
			return;
	}
	KUNIT_FAIL(test, "another task ran first in each of %d tries",
		   HANDOVER_TRIES);
}

/* === The bound === */

#define BOUND_SPARES	2
#define BOUND_CHAIN	5

struct chain_job {
	struct blitz_job job;
	struct chain *c;
	struct completion done;
	atomic_t runs;
	bool timed_out;
};

struct chain {
	struct chain_job jobs[BOUND_CHAIN];
	struct blitz_pool *pool;
};

/*
 * Submit the next link and wait for it: the third link 500 ms at most,
 * the others 10 s.
 */
static void chain_func(struct blitz_job *job)
{
	struct chain_job *j = container_of(job, struct chain_job, job);
	struct chain_job *next = j + 1;
	unsigned long timeout = next - j->c->jobs == BOUND_SPARES + 1 ?
				HZ / 2 : 10 * HZ;

	atomic_inc(&j->runs);
	if (next < j->c->jobs + BOUND_CHAIN) {
		WARN_ON(blitz_submit(j->c->pool, &next->job));
		j->timed_out = !wait_for_completion_timeout(&next->done,
							    timeout);
	}
	complete(&j->done);
}

/*
 * With at most two spares, a pool of one worker runs three jobs at once:
 * a chain of jobs, each waiting for the next, stalls at the fourth until
 * the third gives up (the documented limit), and never has a third
 * spare. The third's worker then runs the fourth, and the others finish.
 */
static void cm_test_bound(struct kunit *test)
{
	unsigned int max = blitz_max_spares, most = 0;
	struct chain *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, c);
	WRITE_ONCE(blitz_max_spares, BOUND_SPARES);
	c->pool = blitz_pool_create("kunit-bound", 1);
	WRITE_ONCE(blitz_max_spares, max);
	KUNIT_ASSERT_FALSE(test, IS_ERR(c->pool));
	for (i = 0; i < BOUND_CHAIN; i++) {
		c->jobs[i].c = c;
		init_completion(&c->jobs[i].done);
		blitz_job_init(&c->jobs[i].job, chain_func);
	}
	KUNIT_EXPECT_EQ(test, blitz_submit(c->pool, &c->jobs[0].job), 0);
	while (!completion_done(&c->jobs[0].done)) {
		most = max(most, cm_spares(c->pool));
		usleep_range(500, 1000);
	}
	blitz_pool_destroy(c->pool);
	for (i = 0; i < BOUND_CHAIN; i++) {
		KUNIT_EXPECT_EQ(test, atomic_read(&c->jobs[i].runs), 1);
		KUNIT_EXPECT_EQ_MSG(test, c->jobs[i].timed_out,
				    i == BOUND_SPARES, "link %d", i);
	}
	KUNIT_EXPECT_EQ(test, most, BOUND_SPARES);
}

static struct kunit_case cm_test_cases[] = {
	KUNIT_CASE(cm_test_later_job),
	KUNIT_CASE(cm_test_later_away),
	KUNIT_CASE(cm_test_all_blocked),
	KUNIT_CASE(cm_test_mutex),
	KUNIT_CASE(cm_test_preempted),
	KUNIT_CASE(cm_test_spare_exit),
	KUNIT_CASE(cm_test_slot_moves),
	KUNIT_CASE(cm_test_handover),
	KUNIT_CASE(cm_test_bound),
	{}
};

static struct kunit_suite cm_test_suite = {
	.name = "blitz_cm",
	.test_cases = cm_test_cases,
};

kunit_test_suite(cm_test_suite);
