// SPDX-License-Identifier: GPL-2.0
/*
 * blitztorture: a torture test of blitz through its exported API, in the
 * style of locktorture. For a given time, torture kthreads pick operations
 * at random: submits (also of jobs that sleep, take a mutex, or sleep
 * holding it), join trees, parallel loops, calls across one-worker pools,
 * joins under a mutex that jobs also take, deep joins that submit, group
 * waits inside joins, jobs that wait for a job submitted after them, and
 * stolen halves that wait for their joiner's group; meanwhile a hardirq
 * hrtimer and a softirq timer submit, pools are created and destroyed
 * under submitters, and CPUs go offline and online. Besides the shared
 * pool, jobs go to pools with attributes: one on some CPUs at a nice
 * value, one freezable, and the created and destroyed ones, at random.
 *
 * Every accepted job is counted: it must run exactly once, within
 * max_latency_ms of its submit, and with at least half the thread stack
 * left; every loop index is covered once; every join and call completes.
 * A run that cannot complete (a deadlock) is reported, not waited for.
 * The system may freeze meanwhile (selftests/torture.sh runs pm_test
 * freezer cycles): the jobs of freezable pools then wait, and the time
 * the system spent freezing is not held against their latency; none of
 * them may start while their workers are frozen.
 *
 * As a module, loading it runs the torture (parameters below), prints one
 * summary line, and fails the load with -EIO on any anomaly. Built in, it
 * only provides blitz_torture_run(), which a KUnit case calls.
 */
#define pr_fmt(fmt) "blitz_torture: " fmt

#include <linux/blitz.h>
#include <linux/cpu.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/sched/debug.h>
#include <linux/sched/signal.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/suspend.h>
#include <linux/timer.h>
#include <linux/wait.h>
#ifdef MODULE
#include <trace/events/power.h>
#endif

#include "blitz_torture.h"

#define BT_JOBS		32	/* jobs per submitter */
#define BT_FOR_MAX	4096	/* longest parallel_for */
#define BT_CALL_DEPTH	6	/* hops of a cross-pool call chain */
#define BT_GRACE	(60 * HZ) /* time allowed after the end to finish */

enum bt_count {
	BC_OPS, BC_SUBMITS, BC_IRQ_SUBMITS, BC_JOINS, BC_FORS, BC_CALLS,
	BC_DEEP, BC_GROUPS, BC_WAITS, BC_B_LATE, BC_POOLS, BC_HOTPLUGS,
	BC_FREEZES, BC_REFUSED, BC_ANOMALIES, BC_NR,
};

static const char *const bt_op_names[BT_NR_OPS] = {
	"submit", "join", "for", "call", "mutex", "deep", "group", "wait",
	"irq", "churn", "hotplug",
};

static const char *const bt_count_names[BC_NR] = {
	"ops", "submits", "irq_submits", "joins", "fors", "calls", "deep",
	"groups", "waits", "b_late", "pools", "hotplugs", "freezes",
	"refused", "anomalies",
};

/* What a counted job does: BK_STACK only for the deep joins' jobs. */
enum bt_kind { BK_PLAIN, BK_SLEEP, BK_MUTEX, BK_SLEEP_LOCKED, BK_STACK, BK_NR };

struct bt_job {
	struct blitz_job job;
	atomic_t accepted, runs;
	u64 submit_ns;
	u64 frozen_ns;		/* bt_frozen_ns() at the submit */
	enum bt_kind kind;
	bool freezable;		/* submitted to a freezable pool */
};

struct bt_jobs {
	struct bt_job job[BT_JOBS];
	unsigned int next;
};

/* One torture run. */
struct bt {
	struct blitz_torture_params p;
	unsigned long end;
	bool stop;
	atomic_long_t count[BC_NR];
	unsigned long min_stack;
	u64 max_latency_ns;
	struct mutex lock;		/* taken by jobs and around joins */
	struct blitz_pool *pool;	/* shared, all CPUs */
	struct blitz_pool *one[2];	/* one worker each, for calls */
	struct blitz_pool *some;	/* some CPUs, at a nice value */
	struct cpumask some_cpus;
	struct blitz_pool *frz;		/* freezable */
	struct blitz_pool *churn_frz;	/* the churn's pool, if freezable */
	/* The time spent in system freezes, PM_SUSPEND_PREPARE to POST. */
	raw_spinlock_t freeze_lock;
	u64 frozen_ns, freeze_start;
	bool freezing;
	struct notifier_block pm_nb;
	struct bt_jobs irq_jobs, softirq_jobs;
	struct hrtimer hrtimer;
	u32 hrtimer_rng;		/* get_random_u32() sleeps on RT */
	struct timer_list timer;
	atomic_t threads;
	wait_queue_head_t threads_wq;
	unsigned int nr_workers;	/* of pool */
	atomic_t b_waiters;		/* a()s sleeping until b has run */
	atomic_t shown;			/* bt_show_threads() has run */
};

static void bt_anomaly(struct bt *bt, const char *fmt, ...)
{
	struct va_format vaf;
	va_list args;

	va_start(args, fmt);
	vaf.fmt = fmt;
	vaf.va = &args;
	pr_err("anomaly: %pV\n", &vaf);
	va_end(args);
	atomic_long_inc(&bt->count[BC_ANOMALIES]);
}

static void bt_inc(struct bt *bt, enum bt_count c)
{
	atomic_long_inc(&bt->count[c]);
}

static unsigned long bt_stack_left(void)
{
	return (unsigned long)__builtin_frame_address(0) -
	       (unsigned long)task_stack_page(current);
}

/*
 * A short sleep on a timer_list timeout, not an hrtimer: in 6.12,
 * hrtimer_wakeup() and the sleeper in schedule_hrtimeout_range_clock()
 * access the sleeper's task pointer with plain accesses, which strict
 * KCSAN reports (a race wholly inside the kernel, seen once in the x86_64
 * KUnit run). One jiffy is short enough here.
 */
static void bt_nap(void)
{
	schedule_timeout_uninterruptible(1);
}

/* The torture run a job belongs to; set before any job runs. */
static struct bt *bt_current;

/* === System freezes === */

/* Nanoseconds spent in system freezes so far, the current one too. */
static u64 bt_frozen_ns(struct bt *bt)
{
	unsigned long flags;
	u64 ns;

	raw_spin_lock_irqsave(&bt->freeze_lock, flags);
	ns = bt->frozen_ns;
	if (bt->freezing)
		ns += ktime_get_ns() - bt->freeze_start;
	raw_spin_unlock_irqrestore(&bt->freeze_lock, flags);
	return ns;
}

static int bt_pm_notify(struct notifier_block *nb, unsigned long action,
			void *data)
{
	struct bt *bt = container_of(nb, struct bt, pm_nb);
	unsigned long flags;

	if (action != PM_SUSPEND_PREPARE && action != PM_POST_SUSPEND)
		return NOTIFY_DONE;
	raw_spin_lock_irqsave(&bt->freeze_lock, flags);
	if (action == PM_SUSPEND_PREPARE && !bt->freezing) {
		bt->freeze_start = ktime_get_ns();
		bt->freezing = true;
	} else if (action == PM_POST_SUSPEND && bt->freezing) {
		bt->frozen_ns += ktime_get_ns() - bt->freeze_start;
		bt->freezing = false;
		bt_inc(bt, BC_FREEZES);
	}
	raw_spin_unlock_irqrestore(&bt->freeze_lock, flags);
	return NOTIFY_DONE;
}

/*
 * Whether every freezable task is frozen: set by the suspend_resume
 * tracepoint as freeze_processes ends, unless thaw_processes began since
 * freeze_processes did (a freeze that failed thaws everyone before it
 * returns; the freezer's key cannot tell, a test harness may hold it
 * on), cleared as thaw_processes begins, before it wakes anyone. A job
 * of a freezable pool that sees it set started while its worker was
 * frozen. Modules only: a kernel the torture is built into may not have
 * the tracepoint.
 */
static bool bt_tasks_frozen;

#ifdef MODULE
/* Whether the thaw began since the freeze did: the suspending task's. */
static bool bt_thawed;

static void bt_suspend_probe(void *data, const char *action, int val,
			     bool start)
{
	if (!strcmp(action, "freeze_processes")) {
		if (start)
			bt_thawed = false;
		else
			WRITE_ONCE(bt_tasks_frozen, !bt_thawed);
	} else if (start && !strcmp(action, "thaw_processes")) {
		bt_thawed = true;
		WRITE_ONCE(bt_tasks_frozen, false);
	}
}

static void bt_freeze_watch(struct bt *bt, bool on)
{
	if (on) {
		if (register_trace_suspend_resume(bt_suspend_probe, NULL))
			pr_info("no suspend_resume tracepoint: frozen workers not checked\n");
	} else {
		unregister_trace_suspend_resume(bt_suspend_probe, NULL);
		tracepoint_synchronize_unregister();
	}
}
#else
static void bt_freeze_watch(struct bt *bt, bool on)
{
}
#endif

/* === Counted jobs === */

static void bt_job_func(struct blitz_job *job)
{
	struct bt_job *j = container_of(job, struct bt_job, job);
	u64 waited = ktime_get_ns() - READ_ONCE(j->submit_ns);
	enum bt_kind kind = READ_ONCE(j->kind);
	struct bt *bt = bt_current;
	unsigned long left = bt_stack_left();
	bool freezable = READ_ONCE(j->freezable);
	u64 frozen_ns = READ_ONCE(j->frozen_ns);
	unsigned long old;
	u64 max;

	if (freezable && READ_ONCE(bt_tasks_frozen))
		bt_anomaly(bt, "job %p of a freezable pool started while its workers were frozen",
			   j);
	/* Not held against it: the time the system spent freezing. */
	if (freezable)
		waited -= min(waited, bt_frozen_ns(bt) - frozen_ns);
	/* From here on the job may be submitted again: read it first. */
	if (atomic_inc_return(&j->runs) > atomic_read(&j->accepted))
		bt_anomaly(bt, "job %p ran more often than accepted", j);
	if (waited > bt->p.max_latency_ms * NSEC_PER_MSEC)
		bt_anomaly(bt, "job %p waited %llu ms", j,
			   waited / NSEC_PER_MSEC);
	max = READ_ONCE(bt->max_latency_ns);
	while (waited > max && !try_cmpxchg(&bt->max_latency_ns, &max, waited))
		;
	old = READ_ONCE(bt->min_stack);
	while (left < old && !try_cmpxchg(&bt->min_stack, &old, left))
		;
	if (left < THREAD_SIZE / 2)
		bt_anomaly(bt, "job started with %lu bytes of stack", left);

	switch (kind) {
	case BK_SLEEP:
		bt_nap();
		break;
	case BK_MUTEX:
		mutex_lock(&bt->lock);
		udelay(5);
		mutex_unlock(&bt->lock);
		break;
	case BK_SLEEP_LOCKED:
		/* Jobs that want the mutex meanwhile block: spares run. */
		mutex_lock(&bt->lock);
		bt_nap();
		mutex_unlock(&bt->lock);
		break;
	default:
		break;
	}
}

static void bt_jobs_init(struct bt_jobs *js)
{
	unsigned int i;

	for (i = 0; i < BT_JOBS; i++)
		blitz_job_init(&js->job[i].job, bt_job_func);
	js->next = 0;
}

/*
 * A pool for jobs and joins, from @r: the shared one, the default one
 * (NULL), the one on some CPUs, or the freezable one.
 */
static struct blitz_pool *bt_pick(struct bt *bt, u32 r)
{
	struct blitz_pool *pools[] = { bt->pool, NULL, bt->some, bt->frz };

	return pools[r % ARRAY_SIZE(pools)];
}

/* Whether @pool's workers freeze with the system. */
static bool bt_freezable(struct bt *bt, struct blitz_pool *pool)
{
	return pool && (pool == bt->frz || pool == READ_ONCE(bt->churn_frz));
}

/*
 * Submit the next job of @js that is not in flight, to @group if not
 * NULL, else to @pool. Accepted is counted before the submit, so that a
 * job never runs more often than accepted. Returns the submit's result,
 * or -EAGAIN when every job is in flight.
 */
static int __bt_submit(struct bt *bt, struct blitz_pool *pool,
		       struct blitz_group *group, struct bt_jobs *js,
		       enum bt_kind kind)
{
	struct bt_job *j = &js->job[js->next++ % BT_JOBS];
	int ret;

	/* Acquire: the run seen here cleared the job's pending bit before. */
	if (atomic_read_acquire(&j->runs) != atomic_read(&j->accepted))
		return -EAGAIN;
	WRITE_ONCE(j->submit_ns, ktime_get_ns());
	WRITE_ONCE(j->kind, kind);
	WRITE_ONCE(j->freezable, !group && bt_freezable(bt, pool));
	if (j->freezable)
		WRITE_ONCE(j->frozen_ns, bt_frozen_ns(bt));
	atomic_inc(&j->accepted);
	ret = group ? blitz_group_submit(group, &j->job) :
		      blitz_submit(pool, &j->job);
	if (!ret)
		bt_inc(bt, BC_SUBMITS);
	if (ret) {
		atomic_dec(&j->accepted);
		if (ret == -ESHUTDOWN)
			bt_inc(bt, BC_REFUSED);
		else
			bt_anomaly(bt, "blitz_submit() returned %d", ret);
	}
	return ret;
}

static int bt_submit(struct bt *bt, struct blitz_pool *pool,
		     struct bt_jobs *js, enum bt_kind kind)
{
	return __bt_submit(bt, pool, NULL, js, kind);
}

/* Whether every accepted job of @js has started. */
static bool bt_jobs_done(struct bt_jobs *js)
{
	unsigned int i;

	for (i = 0; i < BT_JOBS; i++)
		if (atomic_read(&js->job[i].runs) !=
		    atomic_read(&js->job[i].accepted))
			return false;
	return true;
}

/* Wait until every accepted job of @js ran; false after @timeout. */
static bool bt_jobs_wait(struct bt_jobs *js, unsigned long timeout)
{
	unsigned long deadline = jiffies + timeout;
	unsigned int i;

	for (i = 0; i < BT_JOBS; i++)
		while (atomic_read(&js->job[i].runs) !=
		       atomic_read(&js->job[i].accepted)) {
			if (time_after(jiffies, deadline))
				return false;
			bt_nap();
		}
	return true;
}

/* === Join trees === */

struct bt_tree {
	unsigned int depth;
	atomic_t *leaves;
};

static void bt_tree(void *arg)
{
	struct bt_tree *t = arg;
	struct bt_tree l = { t->depth - 1, t->leaves };
	struct bt_tree r = { t->depth - 1, t->leaves };

	if (!t->depth) {
		atomic_inc(t->leaves);
		return;
	}
	blitz_join(bt_tree, &l, bt_tree, &r);
}

static void bt_join(struct bt *bt, struct blitz_pool *pool)
{
	atomic_t leaves = ATOMIC_INIT(0);
	struct bt_tree t = { 1 + get_random_u32_below(10), &leaves };
	int ret = 0;

	if (pool)
		ret = blitz_call(pool, bt_tree, &t);
	else
		bt_tree(&t);	/* outside a worker: the default pool */
	if (ret)
		bt_anomaly(bt, "blitz_call() returned %d", ret);
	else if (atomic_read(&leaves) != 1 << t.depth)
		bt_anomaly(bt, "join tree of depth %u: %d leaves", t.depth,
			   atomic_read(&leaves));
	bt_inc(bt, BC_JOINS);
}

/* === Parallel loops === */

struct bt_for {
	atomic_t *cover;
	unsigned long n;
	unsigned long grain;
	atomic_t bad;
};

static void bt_for_fn(unsigned long lo, unsigned long hi, void *arg)
{
	struct bt_for *f = arg;

	if (lo >= hi || hi > f->n || (f->grain && hi - lo > f->grain))
		atomic_inc(&f->bad);
	for (; lo < hi && lo < f->n; lo++)
		atomic_inc(&f->cover[lo]);
}

static void bt_for(struct bt *bt, atomic_t *cover)
{
	struct bt_for f = {
		.cover = cover,
		.n = 1 + get_random_u32_below(BT_FOR_MAX),
		.grain = get_random_u32_below(65),
	};
	unsigned long i;
	int ret;

	for (i = 0; i < f.n; i++)
		atomic_set(&cover[i], 0);
	atomic_set(&f.bad, 0);
	ret = blitz_parallel_for(0, f.n, f.grain, bt_for_fn, &f);
	if (ret)
		bt_anomaly(bt, "blitz_parallel_for() returned %d", ret);
	if (atomic_read(&f.bad))
		bt_anomaly(bt, "parallel_for gave %d bad ranges",
			   atomic_read(&f.bad));
	for (i = 0; i < f.n; i++)
		if (atomic_read(&cover[i]) != 1) {
			bt_anomaly(bt, "parallel_for index %lu of %lu covered %d times",
				   i, f.n, atomic_read(&cover[i]));
			break;
		}
	bt_inc(bt, BC_FORS);
}

/* === Calls across pools === */

/*
 * A chain starts in either pool: chains of several threads that started
 * in different pools make calls that no chain links, each pool's worker
 * waiting in a call into the other.
 */
struct bt_call {
	struct bt *bt;
	int hops;
	unsigned int first;
};

static void bt_call_hop(void *arg)
{
	struct bt_call *c = arg;
	int hop = c->hops++;
	int ret;

	if (hop < BT_CALL_DEPTH) {
		ret = blitz_call(c->bt->one[(c->first + hop) % 2], bt_call_hop,
				 c);
		if (ret)
			bt_anomaly(c->bt, "blitz_call() returned %d", ret);
	}
}

static void bt_call(struct bt *bt)
{
	struct bt_call c = { bt, 0, get_random_u32_below(2) };

	bt_call_hop(&c);
	if (c.hops != BT_CALL_DEPTH + 1)
		bt_anomaly(bt, "call chain made %d hops", c.hops);
	bt_inc(bt, BC_CALLS);
}

/* === Joins under a mutex that jobs also take === */

static void bt_locked(void *arg)
{
	struct bt *bt = arg;
	atomic_t leaves = ATOMIC_INIT(0);
	struct bt_tree t = { 4, &leaves };

	mutex_lock(&bt->lock);
	bt_tree(&t);
	mutex_unlock(&bt->lock);
	if (atomic_read(&leaves) != 16)
		bt_anomaly(bt, "locked join tree: %d leaves",
			   atomic_read(&leaves));
}

/* === Deep joins that submit === */

struct bt_deep {
	struct bt *bt;
	struct blitz_pool *pool;
	struct bt_jobs *jobs;
	unsigned int depth;
};

/*
 * b of every level: a small join tree. Stolen, the thief's frames of it
 * may be promoted while the joiner, deep, has too little stack left to
 * take them, and must sleep until b is done.
 */
static void bt_deep_b(void *arg)
{
	struct bt *bt = arg;
	atomic_t leaves = ATOMIC_INIT(0);
	struct bt_tree t = { 2, &leaves };

	bt_tree(&t);
	if (atomic_read(&leaves) != 4)
		bt_anomaly(bt, "deep join's b: %d leaves of 4",
			   atomic_read(&leaves));
}

static void bt_deep_level(void *arg)
{
	struct bt_deep *d = arg;

	if (d->depth >= 200 || bt_stack_left() < THREAD_SIZE / 4 + 2048)
		return;
	if (!(d->depth++ % 16))
		bt_submit(d->bt, d->pool, d->jobs, BK_STACK);
	blitz_join(bt_deep_level, d, bt_deep_b, d->bt);
}

static void bt_deep(struct bt *bt, struct blitz_pool *pool,
		    struct bt_jobs *jobs)
{
	struct bt_deep d = { bt, pool, jobs, 0 };
	int ret = blitz_call(pool, bt_deep_level, &d);

	if (ret)
		bt_anomaly(bt, "blitz_call() returned %d", ret);
	bt_inc(bt, BC_DEEP);
}

/* === Group waits inside joins === */

struct bt_group {
	struct bt *bt;
	struct bt_jobs *jobs;
	struct blitz_group group;
	atomic_t leaves;
	unsigned int depth;
	bool wait_b;
	struct completion b_ran;
};

/*
 * Sleep until @g's b has run, which the API allows when another worker is
 * free: an idle worker asks, and b's frame is promoted for it. Here the
 * other workers may be busy for longer than max_latency_ms with the jobs
 * of the torture threads and the interrupts, and nobody asks: at 8 vCPUs,
 * with up to seven such a()s, b did not run within 10 s 21 to 35 times
 * a minute (generic and RT kernels; three to five times a minute with
 * the worker's CPU never offline meanwhile). So a gives up then, and b
 * runs when it returns; those are counted (b_late). A b hidden for good
 * shows in the latency of the jobs queued behind it.
 */
static void bt_wait_b(struct bt *bt, struct bt_group *g)
{
	if (!wait_for_completion_timeout(&g->b_ran,
					 msecs_to_jiffies(bt->p.max_latency_ms)))
		bt_inc(bt, BC_B_LATE);
}

/*
 * a of the join: now and then a nap first, through which the CPU
 * promotes b's frame if someone asks. Then jobs to a group, and a wait
 * for them, which holds b's frame aside while it runs the group's jobs
 * on its own deque, and must post it when it pushes it back. Half the
 * time a then sleeps until b has run, while at most half the pool's
 * workers do so: with all but one, at 8 vCPUs, jobs waited up to 7.2 s
 * (0.2 s without such a()s), near max_latency_ms; with half, up to 2 s,
 * and 0 to 16 b a minute were late (0 at 4 vCPUs).
 */
static void bt_group_a(void *arg)
{
	struct bt_group *g = arg;
	unsigned int i, n = 1 + get_random_u32_below(BT_JOBS);
	struct bt *bt = g->bt;
	int ret;

	if (get_random_u32_below(2))
		bt_nap();
	for (i = 0; i < n; i++)
		__bt_submit(bt, NULL, &g->group, g->jobs,
			    get_random_u32_below(BK_STACK));
	ret = blitz_group_wait(&g->group);
	if (ret)
		bt_anomaly(bt, "blitz_group_wait() returned %d", ret);
	if (!bt_jobs_done(g->jobs))
		bt_anomaly(bt, "a group wait returned before its jobs ran");
	if (!g->wait_b)
		return;
	if (atomic_inc_return(&bt->b_waiters) <= bt->nr_workers / 2)
		bt_wait_b(bt, g);
	atomic_dec(&bt->b_waiters);
}

static void bt_group_b(void *arg)
{
	struct bt_group *g = arg;
	struct bt_tree t = { g->depth, &g->leaves };

	bt_tree(&t);
	complete(&g->b_ran);
}

static void bt_group_join(void *arg)
{
	blitz_join(bt_group_a, arg, bt_group_b, arg);
}

static void bt_group(struct bt *bt, struct bt_jobs *jobs)
{
	struct bt_group g = {
		.bt = bt,
		.jobs = jobs,
		.leaves = ATOMIC_INIT(0),
		.depth = get_random_u32_below(6),
		.wait_b = get_random_u32_below(2),
	};
	int ret;

	init_completion(&g.b_ran);
	blitz_group_init(&g.group, bt->pool);
	ret = blitz_call(bt->pool, bt_group_join, &g);
	if (ret)
		bt_anomaly(bt, "blitz_call() returned %d", ret);
	else if (atomic_read(&g.leaves) != 1 << g.depth)
		bt_anomaly(bt, "b of a group wait's join: %d leaves of %d",
			   atomic_read(&g.leaves), 1 << g.depth);
	bt_inc(bt, BC_GROUPS);
}

/* === Jobs that wait for each other === */

/*
 * A job that waits for a job submitted after it started, in a pool of
 * one worker: only a spare can run the second while the first blocks.
 */
struct bt_pair {
	struct bt *bt;
	struct blitz_job first, second;
	struct completion started, signal, done;
};

/* kthreadd's time on a CPU and runnable off one (CONFIG_SCHED_INFO), in ns. */
struct bt_kthreadd {
	u64 ran, queued, at;
};

/* kthreadd makes every kthread: the pools' workers and spares too. */
static void bt_kthreadd_sample(struct bt_kthreadd *k)
{
	struct task_struct *p;

	k->ran = 0;
	k->queued = 0;
	k->at = ktime_get_ns();
	rcu_read_lock();
	for_each_process(p) {
		if (p->pid != 2)
			continue;
		k->ran = READ_ONCE(p->se.sum_exec_runtime);
#ifdef CONFIG_SCHED_INFO
		k->queued = READ_ONCE(p->sched_info.run_delay);
#endif
		break;
	}
	rcu_read_unlock();
}

/*
 * What every thread of the pools, every task runnable or blocked
 * uninterruptibly (killable too; not TASK_IDLE), and kthreadd are doing,
 * and how busy kthreadd was since @since: the first time a job waits in
 * vain, once per run, into the kernel log (KERN_INFO), between two lines
 * that torture.sh looks for.
 */
static void bt_show_threads(struct bt *bt, const struct bt_kthreadd *since)
{
	struct task_struct *g, *p;
	struct bt_kthreadd now;
	unsigned int state;

	if (atomic_xchg(&bt->shown, 1))
		return;
	pr_info("threads: begin\n");
	bt_kthreadd_sample(&now);
	pr_info("kthreadd: on a CPU %llu ms of the last %llu ms\n",
		div_u64(now.ran - since->ran, NSEC_PER_MSEC),
		div_u64(now.at - since->at, NSEC_PER_MSEC));
	if (IS_ENABLED(CONFIG_SCHED_INFO))
		pr_info("kthreadd: runnable off a CPU %llu ms of them\n",
			div_u64(now.queued - since->queued, NSEC_PER_MSEC));
	rcu_read_lock();
	for_each_process_thread(g, p) {
		state = READ_ONCE(p->__state);
		if (!strncmp(p->comm, "blitz/", 6) || p->pid == 2 ||
		    state == TASK_RUNNING ||
		    (state & TASK_UNINTERRUPTIBLE && !(state & TASK_NOLOAD)))
			sched_show_task(p);
	}
	rcu_read_unlock();
	pr_info("threads: end\n");
}

static void bt_pair_first(struct blitz_job *job)
{
	struct bt_pair *p = container_of(job, struct bt_pair, first);
	struct bt *bt = p->bt;
	struct bt_kthreadd k;

	bt_kthreadd_sample(&k);
	complete(&p->started);
	if (!wait_for_completion_timeout(&p->signal,
					 msecs_to_jiffies(bt->p.max_latency_ms))) {
		bt_anomaly(bt, "a job waited in vain for a job submitted after it (in %s)",
			   current->comm);
		bt_show_threads(bt, &k);
		/* The pair is on its submitter's stack: the second is queued. */
		wait_for_completion(&p->signal);
	}
	complete(&p->done);
}

static void bt_pair_second(struct blitz_job *job)
{
	struct bt_pair *p = container_of(job, struct bt_pair, second);

	complete(&p->signal);
}

static void bt_pair(struct bt *bt)
{
	struct bt_pair p = {
		.bt = bt,
		.first = BLITZ_JOB_INIT(bt_pair_first),
		.second = BLITZ_JOB_INIT(bt_pair_second),
	};
	struct blitz_pool *pool = bt->one[get_random_u32_below(2)];

	init_completion(&p.started);
	init_completion(&p.signal);
	init_completion(&p.done);
	if (blitz_submit(pool, &p.first)) {
		bt_anomaly(bt, "could not submit the first of a pair");
		return;
	}
	wait_for_completion(&p.started);
	if (blitz_submit(pool, &p.second)) {
		bt_anomaly(bt, "could not submit the second of a pair");
		complete(&p.signal);
	}
	/* The second's complete() returns before the first sees it. */
	wait_for_completion(&p.done);
}

/*
 * A stolen b that waits for a group whose jobs its joiner's a submitted
 * after b started: the joiner moves them off its deque on its way down
 * to b, and sleeps; a spare runs them.
 */
struct bt_stolen {
	struct bt *bt;
	struct bt_jobs *jobs;
	struct blitz_group group;
	struct completion b_started, submitted;
};

static void bt_stolen_a(void *arg)
{
	struct bt_stolen *s = arg;
	unsigned int i, n = 1 + get_random_u32_below(8);
	struct bt *bt = s->bt;

	/* b is promoted while we sleep, and stolen: or late, and inline. */
	if (!wait_for_completion_timeout(&s->b_started,
					 msecs_to_jiffies(bt->p.max_latency_ms)))
		bt_inc(bt, BC_B_LATE);
	for (i = 0; i < n; i++)
		__bt_submit(bt, NULL, &s->group, s->jobs,
			    get_random_u32_below(BK_STACK));
	complete(&s->submitted);
}

static void bt_stolen_b(void *arg)
{
	struct bt_stolen *s = arg;
	int ret;

	complete(&s->b_started);
	wait_for_completion(&s->submitted);
	ret = blitz_group_wait(&s->group);
	if (ret)
		bt_anomaly(s->bt, "blitz_group_wait() returned %d", ret);
	if (!bt_jobs_done(s->jobs))
		bt_anomaly(s->bt, "a stolen b's group wait returned early");
}

static void bt_stolen_join(void *arg)
{
	blitz_join(bt_stolen_a, arg, bt_stolen_b, arg);
}

static void bt_wait(struct bt *bt, struct bt_jobs *jobs)
{
	struct bt_stolen s = { .bt = bt, .jobs = jobs };
	int ret;

	if (get_random_u32_below(2)) {
		bt_pair(bt);
	} else {
		init_completion(&s.b_started);
		init_completion(&s.submitted);
		blitz_group_init(&s.group, bt->pool);
		ret = blitz_call(bt->pool, bt_stolen_join, &s);
		if (ret)
			bt_anomaly(bt, "blitz_call() returned %d", ret);
	}
	bt_inc(bt, BC_WAITS);
}

/* === Torture threads === */

struct bt_thread {
	struct bt *bt;
	const char *doing;
	struct bt_jobs jobs, group_jobs;
	atomic_t cover[BT_FOR_MAX];
};

static bool bt_on(struct bt *bt, enum blitz_torture_op op)
{
	return bt->p.ops & BIT(op);
}

static bool bt_running(struct bt *bt)
{
	return !READ_ONCE(bt->stop) && time_before(jiffies, bt->end);
}

static void bt_thread_exit(struct bt *bt)
{
	if (atomic_dec_and_test(&bt->threads))
		wake_up(&bt->threads_wq);
}

static int bt_thread_fn(void *arg)
{
	struct bt_thread *t = arg;
	struct bt *bt = t->bt;
	unsigned int op, i;

	while (bt_running(bt)) {
		op = get_random_u32_below(BT_IRQ);
		if (!bt_on(bt, op))
			continue;
		WRITE_ONCE(t->doing, bt_op_names[op]);
		switch (op) {
		case BT_SUBMIT:
			for (i = 0; i < 16; i++)
				bt_submit(bt, bt_pick(bt, get_random_u32()),
					  &t->jobs, get_random_u32_below(BK_STACK));
			break;
		case BT_JOIN:
			bt_join(bt, bt_pick(bt, get_random_u32()));
			break;
		case BT_FOR:
			bt_for(bt, t->cover);
			break;
		case BT_CALL:
			bt_call(bt);
			break;
		case BT_MUTEX:
			/* Not the freezable pool: the mutex stays held. */
			if (blitz_call(get_random_u32_below(2) ? bt->pool : bt->some,
				       bt_locked, bt))
				bt_anomaly(bt, "blitz_call() failed");
			break;
		case BT_DEEP:
			bt_deep(bt, get_random_u32_below(2) ? bt->pool : bt->some,
				&t->jobs);
			break;
		case BT_GROUP:
			bt_group(bt, &t->group_jobs);
			break;
		case BT_WAIT:
			bt_wait(bt, &t->group_jobs);
			break;
		}
		bt_inc(bt, BC_OPS);
		cond_resched();
	}
	WRITE_ONCE(t->doing, "waiting for its jobs");
	if (!bt_jobs_wait(&t->jobs, BT_GRACE))
		bt_anomaly(bt, "a torture thread's jobs never ran");
	WRITE_ONCE(t->doing, NULL);
	bt_thread_exit(bt);
	return 0;
}

/* === Submits from interrupts === */

static enum hrtimer_restart bt_hrtimer_fn(struct hrtimer *timer)
{
	struct bt *bt = container_of(timer, struct bt, hrtimer);
	u32 r = bt->hrtimer_rng;

	if (!bt_running(bt))
		return HRTIMER_NORESTART;
	r ^= r << 13;
	r ^= r >> 17;
	r ^= r << 5;
	bt->hrtimer_rng = r;
	if (!bt_submit(bt, bt_pick(bt, r), &bt->irq_jobs, BK_PLAIN))
		bt_inc(bt, BC_IRQ_SUBMITS);
	hrtimer_forward_now(timer, ns_to_ktime((100 + r % 400) * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void bt_timer_fn(struct timer_list *timer)
{
	struct bt *bt = from_timer(bt, timer, timer);

	if (!bt_running(bt))
		return;
	if (!bt_submit(bt, jiffies & 1 ? bt->pool : bt->frz,
		       &bt->softirq_jobs, BK_PLAIN))
		bt_inc(bt, BC_IRQ_SUBMITS);
	mod_timer(timer, jiffies + 1);
}

/* === Pools created and destroyed under submitters === */

/*
 * A submitter into a pool that is being destroyed: its submits race the
 * shutdown (accepted, or -ESHUTDOWN) and the drain. It must start no submit
 * once destroy has returned, so the pool's last job keeps the pool until
 * the submitter has stopped (bt_churn_last()).
 */
struct bt_churn {
	struct bt *bt;
	struct blitz_pool *pool;
	struct cpumask cpus;
	struct bt_jobs jobs;
	struct blitz_job last;
	bool stop, stopped;
	struct completion exited;
};

static int bt_hammer_fn(void *arg)
{
	struct bt_churn *c = arg;

	while (!READ_ONCE(c->stop)) {
		bt_submit(c->bt, c->pool, &c->jobs,
			  get_random_u32_below(2) ? BK_PLAIN : BK_SLEEP);
		if (!get_random_u32_below(8))
			bt_nap();
	}
	WRITE_ONCE(c->stopped, true);
	kthread_complete_and_exit(&c->exited, 0);
}

/* The last job queued before destroy: the pool stays until it returns. */
static void bt_churn_last(struct blitz_job *job)
{
	struct bt_churn *c = container_of(job, struct bt_churn, last);

	WRITE_ONCE(c->stop, true);
	while (!READ_ONCE(c->stopped))
		bt_nap();
}

/*
 * Random attributes: up to one worker per online CPU, at a nice value of
 * -5 to 5 (not weaker: the jobs must start within max_latency_ms on a
 * loaded machine), on every housekeeping CPU or on CPU 0 (never taken
 * offline) and some others, freezable or not.
 */
static void bt_churn_attrs(struct bt_churn *c, struct blitz_pool_attrs *attrs)
{
	unsigned int cpu;

	attrs->nr_workers = 1 + get_random_u32_below(num_online_cpus());
	attrs->nice = (int)get_random_u32_below(11) - 5;
	attrs->cpumask = NULL;
	if (get_random_u32_below(2)) {
		cpumask_copy(&c->cpus, cpumask_of(0));
		for_each_online_cpu(cpu)
			if (get_random_u32_below(2))
				cpumask_set_cpu(cpu, &c->cpus);
		attrs->cpumask = &c->cpus;
	}
	attrs->flags = get_random_u32_below(2) ? BLITZ_POOL_FREEZABLE : 0;
}

static void bt_churn_round(struct bt *bt, struct bt_churn *c, unsigned int n)
{
	struct blitz_pool_attrs attrs;
	struct task_struct *t;
	char name[24];

	snprintf(name, sizeof(name), "torture%u", n);
	bt_churn_attrs(c, &attrs);
	c->pool = blitz_pool_create_attrs(name, &attrs);
	if (IS_ERR(c->pool)) {
		bt_anomaly(bt, "blitz_pool_create_attrs() returned %ld",
			   PTR_ERR(c->pool));
		msleep(100);
		return;
	}
	if (attrs.flags & BLITZ_POOL_FREEZABLE)
		WRITE_ONCE(bt->churn_frz, c->pool);
	c->stop = false;
	c->stopped = false;
	init_completion(&c->exited);
	blitz_job_init(&c->last, bt_churn_last);
	t = kthread_run(bt_hammer_fn, c, "blitz_torture_hammer");
	if (IS_ERR(t)) {
		blitz_pool_destroy(c->pool);
		WRITE_ONCE(bt->churn_frz, NULL);
		return;
	}
	msleep(5 + get_random_u32_below(30));
	if (blitz_submit(c->pool, &c->last))
		bt_anomaly(bt, "could not queue a churn pool's last job");
	/* A frozen pool's destroy waits for the thaw, and runs its jobs. */
	blitz_pool_destroy(c->pool);
	/* Destroy drained the pool: every accepted job has run. */
	wait_for_completion(&c->exited);
	if (!bt_jobs_wait(&c->jobs, 0))
		bt_anomaly(bt, "a destroyed pool left jobs that never ran");
	WRITE_ONCE(bt->churn_frz, NULL);
	bt_inc(bt, BC_POOLS);
}

static int bt_churn_fn(void *arg)
{
	struct bt *bt = arg;
	struct bt_churn *c = kzalloc(sizeof(*c), GFP_KERNEL);
	unsigned int n = 0;

	if (c) {
		c->bt = bt;
		bt_jobs_init(&c->jobs);
		while (bt_running(bt))
			bt_churn_round(bt, c, n++);
		kfree(c);
	}
	bt_thread_exit(bt);
	return 0;
}

/* === CPU hotplug === */

/*
 * From PM_SUSPEND_PREPARE to PM_POST_SUSPEND, CPU hotplug is disabled:
 * add_cpu() says -EBUSY, and is tried again until the freeze is over.
 */
static int bt_add_cpu(unsigned int cpu)
{
	unsigned long deadline = jiffies + BT_GRACE;
	int ret;

	while ((ret = add_cpu(cpu)) == -EBUSY && time_before(jiffies, deadline))
		msleep(100);
	return ret;
}

static int bt_hotplug_fn(void *arg)
{
	struct bt *bt = arg;
	unsigned int cpu;
	int ret;

	while (IS_ENABLED(CONFIG_HOTPLUG_CPU) && nr_cpu_ids > 1 &&
	       bt_running(bt)) {
		/* Any CPU but the first, which may not go. */
		cpu = 1 + get_random_u32_below(nr_cpu_ids - 1);
		if (cpu_online(cpu) && !remove_cpu(cpu)) {
			msleep(20 + get_random_u32_below(200));
			ret = bt_add_cpu(cpu);
			if (ret)
				bt_anomaly(bt, "CPU %u did not come back: %d",
					   cpu, ret);
			bt_inc(bt, BC_HOTPLUGS);
		}
		msleep(100 + get_random_u32_below(300));
	}
	bt_thread_exit(bt);
	return 0;
}

/* === The run === */

/*
 * A wait of the task that runs the torture, for at most @timeout jiffies,
 * in which the system freezer may freeze it: that task is insmod's, a
 * user task, which a freeze (selftests/torture.sh runs them) must freeze
 * or fail. Uninterruptible: the freezer's fake signal would end an
 * interruptible wait at once and for good. A kthread (KUnit's) is not
 * frozen.
 */
#define bt_wait_freezable(wq, cond, timeout)				\
	___wait_event(wq, ___wait_cond_timeout(cond),			\
		      (TASK_UNINTERRUPTIBLE | TASK_FREEZABLE), 0, timeout,\
		      __ret = schedule_timeout(__ret))

static int bt_start(struct bt *bt, int (*fn)(void *), void *arg,
		    const char *name)
{
	struct task_struct *t;

	atomic_inc(&bt->threads);
	t = kthread_run(fn, arg, "%s", name);
	if (IS_ERR(t)) {
		bt_thread_exit(bt);
		return PTR_ERR(t);
	}
	return 0;
}

static void bt_pools_destroy(struct bt *bt)
{
	if (!IS_ERR_OR_NULL(bt->frz))
		blitz_pool_destroy(bt->frz);
	if (!IS_ERR_OR_NULL(bt->some))
		blitz_pool_destroy(bt->some);
	if (!IS_ERR_OR_NULL(bt->one[0]))
		blitz_pool_destroy(bt->one[0]);
	if (!IS_ERR_OR_NULL(bt->one[1]))
		blitz_pool_destroy(bt->one[1]);
	if (!IS_ERR_OR_NULL(bt->pool))
		blitz_pool_destroy(bt->pool);
}

/*
 * The pools: the shared one, two of one worker (the second on the last
 * online CPU, which hotplug takes offline at times: its worker then runs
 * away from home, and a pair's first job still gets a spare), one on the
 * upper half of the online CPUs (CPU 0 alone if it is the only one) at
 * nice 5, whose workers run anywhere while hotplug has taken all its
 * CPUs, and one freezable.
 */
static int bt_pools(struct bt *bt)
{
	const struct blitz_pool_attrs frz = { .flags = BLITZ_POOL_FREEZABLE };
	struct blitz_pool_attrs some = { .nice = 5, .cpumask = &bt->some_cpus };
	struct blitz_pool_attrs last = {
		.nr_workers = 1,
		.cpumask = cpumask_of(cpumask_last(cpu_online_mask)),
	};
	struct blitz_pool **pools[] = {
		&bt->pool, &bt->one[0], &bt->one[1], &bt->some, &bt->frz,
	};
	unsigned int cpu, i = 0;
	int ret;

	/* One worker per online CPU; CPUs go offline only later. */
	bt->nr_workers = num_online_cpus();
	for_each_online_cpu(cpu)
		if (i++ >= bt->nr_workers / 2)
			cpumask_set_cpu(cpu, &bt->some_cpus);
	bt->pool = blitz_pool_create("torture", bt->nr_workers);
	/* Short: a thread's name, blitz/one-a/12, shows its pool whole. */
	bt->one[0] = blitz_pool_create("one-a", 1);
	bt->one[1] = blitz_pool_create_attrs("one-b", &last);
	bt->some = blitz_pool_create_attrs("torture-some", &some);
	bt->frz = blitz_pool_create_attrs("torture-frz", &frz);
	for (i = 0; i < ARRAY_SIZE(pools); i++) {
		if (IS_ERR(*pools[i])) {
			ret = PTR_ERR(*pools[i]);
			pr_err("pool %u of %zu not created: %d\n", i,
			       ARRAY_SIZE(pools), ret);
			bt_pools_destroy(bt);
			return ret;
		}
	}
	return 0;
}

/**
 * blitz_torture_run - run the torture test
 * @p: what to run, for how long
 * @summary: receives the one-line summary
 * @len: its size
 *
 * Context: process context; sleeps for @p->duration seconds and more.
 * Return: 0 when the run found no anomaly; -EIO when it did; -ETIMEDOUT
 * when it could not finish (then its threads and memory are left as they
 * are); or the error that kept it from starting.
 */
int blitz_torture_run(const struct blitz_torture_params *p, char *summary,
		      size_t len)
{
	struct bt_thread *threads;
	unsigned int nr, i;
	struct bt *bt;
	bool done;
	size_t off;
	int ret;

	bt = kzalloc(sizeof(*bt), GFP_KERNEL);
	if (!bt)
		return -ENOMEM;
	bt->p = *p;
	if (!bt->p.max_latency_ms)
		bt->p.max_latency_ms = 10000;
	nr = bt->p.nthreads ?: min(2 * num_online_cpus(), 16U);
	threads = kvcalloc(nr, sizeof(*threads), GFP_KERNEL);
	if (!threads) {
		kfree(bt);
		return -ENOMEM;
	}
	mutex_init(&bt->lock);
	bt->min_stack = ULONG_MAX;
	atomic_set(&bt->threads, 1);
	init_waitqueue_head(&bt->threads_wq);
	raw_spin_lock_init(&bt->freeze_lock);
	bt->pm_nb.notifier_call = bt_pm_notify;
	bt_jobs_init(&bt->irq_jobs);
	bt_jobs_init(&bt->softirq_jobs);
	ret = bt_pools(bt);
	if (ret)
		goto out_free;
	bt_current = bt;
	register_pm_notifier(&bt->pm_nb);
	bt_freeze_watch(bt, true);
	bt->end = jiffies + bt->p.duration * HZ;

	for (i = 0; i < nr; i++) {
		threads[i].bt = bt;
		bt_jobs_init(&threads[i].jobs);
		bt_jobs_init(&threads[i].group_jobs);
		bt_start(bt, bt_thread_fn, &threads[i], "blitz_torture");
	}
	if (bt_on(bt, BT_CHURN))
		bt_start(bt, bt_churn_fn, bt, "blitz_torture_churn");
	if (bt_on(bt, BT_HOTPLUG) && num_online_cpus() > 1)
		bt_start(bt, bt_hotplug_fn, bt, "blitz_torture_hotplug");
	if (bt_on(bt, BT_IRQ)) {
		bt->hrtimer_rng = get_random_u32() | 1;
		hrtimer_init(&bt->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
		bt->hrtimer.function = bt_hrtimer_fn;
		hrtimer_start(&bt->hrtimer, ns_to_ktime(100 * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_HARD);
		timer_setup(&bt->timer, bt_timer_fn, 0);
		mod_timer(&bt->timer, jiffies + 1);
	}

	bt_thread_exit(bt);	/* the starter's count */
	/* In steps: a single long wait would look like a hung task. */
	done = false;
	for (i = 0; !done && i < bt->p.duration + 2 * BT_GRACE / HZ; i++)
		done = bt_wait_freezable(bt->threads_wq,
					 !atomic_read(&bt->threads), HZ);
	if (!done) {
		WRITE_ONCE(bt->stop, true);
		bt_anomaly(bt, "%d torture threads never finished (deadlock?)",
			   atomic_read(&bt->threads));
		for (i = 0; i < nr; i++)
			if (READ_ONCE(threads[i].doing))
				pr_err("thread %u stuck in %s\n", i,
				       READ_ONCE(threads[i].doing));
		ret = -ETIMEDOUT;
	}
	if (bt_on(bt, BT_IRQ) && !ret) {
		hrtimer_cancel(&bt->hrtimer);
		/* Past the end, the callback no longer re-arms it. */
		del_timer_sync(&bt->timer);
		if (!bt_jobs_wait(&bt->irq_jobs, BT_GRACE) ||
		    !bt_jobs_wait(&bt->softirq_jobs, BT_GRACE))
			bt_anomaly(bt, "jobs submitted from interrupts never ran");
	}
	bt_freeze_watch(bt, false);
	unregister_pm_notifier(&bt->pm_nb);

	off = scnprintf(summary, len, "duration=%us threads=%u",
			bt->p.duration, nr);
	for (i = 0; i < BC_NR; i++)
		off += scnprintf(summary + off, len - off, " %s=%ld",
				 bt_count_names[i],
				 atomic_long_read(&bt->count[i]));
	off += scnprintf(summary + off, len - off,
			 " min_stack=%lu max_latency_ms=%llu %s",
			 bt->min_stack == ULONG_MAX ? 0 : bt->min_stack,
			 bt->max_latency_ns / NSEC_PER_MSEC,
			 atomic_long_read(&bt->count[BC_ANOMALIES]) ? "FAIL" : "PASS");
	if (ret)	/* stuck threads still use bt and threads */
		return ret;

	bt_pools_destroy(bt);
	if (atomic_long_read(&bt->count[BC_ANOMALIES]))
		ret = -EIO;
out_free:
	kvfree(threads);
	kfree(bt);
	return ret;
}

#ifdef MODULE
static unsigned int duration = 30;
module_param(duration, uint, 0444);
MODULE_PARM_DESC(duration, "seconds to run (default 30)");
static unsigned int nthreads;
module_param(nthreads, uint, 0444);
MODULE_PARM_DESC(nthreads, "torture threads (default 0: two per CPU, at most 16)");
static unsigned long ops = GENMASK(BT_NR_OPS - 1, 0);
module_param(ops, ulong, 0444);
MODULE_PARM_DESC(ops, "operation classes, a bit each in enum blitz_torture_op order (default all)");
static unsigned int max_latency_ms = 10000;
module_param(max_latency_ms, uint, 0444);
MODULE_PARM_DESC(max_latency_ms, "longest a job may wait to start (default 10000)");

static int __init blitz_torture_init(void)
{
	struct blitz_torture_params p = {
		.duration = duration,
		.nthreads = nthreads,
		.ops = ops,
		.max_latency_ms = max_latency_ms,
	};
	char *summary = kmalloc(512, GFP_KERNEL);
	int ret;

	if (!summary)
		return -ENOMEM;
	ret = blitz_torture_run(&p, summary, 512);
	pr_info("summary: %s\n", summary);
	kfree(summary);
	/* Stuck threads still run our code: stay loaded (the summary says FAIL). */
	return ret == -ETIMEDOUT ? 0 : ret;
}
module_init(blitz_torture_init);

/* Only to make the module unloadable: init did all the work. */
static void __exit blitz_torture_exit(void)
{
}
module_exit(blitz_torture_exit);
#endif

MODULE_DESCRIPTION("blitz torture test");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
