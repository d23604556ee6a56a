// SPDX-License-Identifier: GPL-2.0
/*
 * End-to-end tests of blitz through its exported API, as a client module
 * uses it. Loading the module runs the tests selected by the "tests"
 * parameter (default: all), prints one TAP line each to the kernel log,
 * and fails the load with -EINVAL if any test failed (kselftest_module.h,
 * from the kernel tree's tools/testing/selftests/).
 *
 * Every job is counted: each test checks that the jobs accepted by
 * blitz_submit() equal the jobs that ran, each exactly once.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/isolation.h>
#include <linux/slab.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>

#include "kselftest_module.h"
#include "../fib.h"

static char *tests = "all";
module_param(tests, charp, 0444);
MODULE_PARM_DESC(tests, "comma-separated tests to run, or all");

static unsigned int load_jobs = 2000000;
module_param(load_jobs, uint, 0444);
MODULE_PARM_DESC(load_jobs, "jobs submitted by the load tests");

static unsigned int hotplug_cpu = 1;
module_param(hotplug_cpu, uint, 0444);
MODULE_PARM_DESC(hotplug_cpu,
		 "the CPU attrs_hotplug, sleep_hotplug and sleep_away take offline and back");

/* === Where jobs run === */

/* The housekeeping CPUs, those of unbound work, into @hk. */
static void hk_cpus(struct cpumask *hk)
{
	cpumask_and(hk, housekeeping_cpumask(HK_TYPE_WQ),
		    housekeeping_cpumask(HK_TYPE_DOMAIN));
}

/*
 * Jobs, loop ranges and join halves note the CPU they run on, and their
 * nice value. The CPU must be one of @allowed, or of @moved while
 * @hotplug is odd, or if it changed while the job looked: the CPU under
 * test was (or may have been) offline, and a worker whose CPUs are all
 * offline runs on the housekeeping CPUs.
 */
struct where {
	const struct cpumask *allowed;
	const atomic_t *hotplug;	/* NULL: no excuse */
	const struct cpumask *moved;	/* with @hotplug */
	bool check_nice;
	int nice;
	atomic_long_t *on;		/* runs per CPU, nr_cpu_ids of them */
	atomic_long_t strays, excused, bad_nice;
};

static int where_init(struct where *w, const struct cpumask *allowed)
{
	memset(w, 0, sizeof(*w));
	w->allowed = allowed;
	w->on = kcalloc(nr_cpu_ids, sizeof(*w->on), GFP_KERNEL);
	return w->on ? 0 : -ENOMEM;
}

static void where_note(struct where *w, const char *what)
{
	int seq = w->hotplug ? atomic_read_acquire(w->hotplug) : 0;
	unsigned int cpu = raw_smp_processor_id();
	int nice = task_nice(current);

	atomic_long_inc(&w->on[cpu]);
	if (w->check_nice && nice != w->nice &&
	    atomic_long_inc_return(&w->bad_nice) == 1)
		pr_err("a %s ran at nice %d, not %d\n", what, nice, w->nice);
	if (cpumask_test_cpu(cpu, w->allowed))
		return;
	/* The CPU, then the hotplug count again. */
	smp_rmb();
	if (w->hotplug && ((seq & 1) || atomic_read(w->hotplug) != seq) &&
	    cpumask_test_cpu(cpu, w->moved)) {
		atomic_long_inc(&w->excused);
		return;
	}
	if (atomic_long_inc_return(&w->strays) == 1)
		pr_err("a %s ran on CPU %u, outside %*pbl\n", what, cpu,
		       cpumask_pr_args(w->allowed));
}

/* Print where they ran: -EINVAL if anywhere not allowed, or at another nice. */
static int where_check(struct where *w, const char *name)
{
	char buf[96] = "";
	unsigned int cpu;
	int len = 0;

	for_each_possible_cpu(cpu) {
		if (atomic_long_read(&w->on[cpu]))
			len += scnprintf(buf + len, sizeof(buf) - len, " %u:%ld",
					 cpu, atomic_long_read(&w->on[cpu]));
	}
	pr_info("%s: ran on (CPU:runs)%s; %ld while hotplug moved them, %ld outside %*pbl, %ld at another nice\n",
		name, buf, atomic_long_read(&w->excused),
		atomic_long_read(&w->strays), cpumask_pr_args(w->allowed),
		atomic_long_read(&w->bad_nice));
	return atomic_long_read(&w->strays) || atomic_long_read(&w->bad_nice) ?
	       -EINVAL : 0;
}

static void where_free(struct where *w)
{
	kfree(w->on);
}

/* === Counted jobs === */

struct counted_job {
	struct blitz_job job;
	struct counted *owner;
	atomic_t runs;
	unsigned int children;	/* jobs to submit from inside this one */
};

struct counted {
	struct blitz_pool *pool;
	struct where *where;	/* NULL: anywhere */
	struct counted_job *jobs;
	unsigned int nr;
	atomic_long_t submitted;
	atomic_long_t executed;
	atomic_long_t busy;
	atomic_long_t refused;
};

static void counted_func(struct blitz_job *job)
{
	struct counted_job *cj = container_of(job, struct counted_job, job);
	struct counted *c = cj->owner;

	if (c->where)
		where_note(c->where, "job");
	atomic_inc(&cj->runs);
	while (cj->children) {
		struct counted_job *child = &c->jobs[get_random_u32_below(c->nr)];

		cj->children--;
		/*
		 * Counted before it is queued: the child may run, and be
		 * counted as executed, before blitz_submit() returns, and
		 * the test must not see everything executed while we run.
		 */
		atomic_long_inc(&c->submitted);
		if (blitz_submit(c->pool, &child->job))
			atomic_long_dec(&c->submitted);
	}
	/* Last: once counted, the test may free everything. */
	atomic_long_inc(&c->executed);
	wake_up_var(&c->executed);
}

static int counted_init(struct counted *c, struct blitz_pool *pool,
			unsigned int nr)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	c->pool = pool;
	c->nr = nr;
	c->jobs = vcalloc(nr, sizeof(*c->jobs));
	if (!c->jobs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		blitz_job_init(&c->jobs[i].job, counted_func);
		c->jobs[i].owner = c;
	}
	return 0;
}

/* Submit job @i; count the outcome. */
static int counted_submit(struct counted *c, unsigned int i)
{
	int ret = blitz_submit(c->pool, &c->jobs[i].job);

	if (!ret)
		atomic_long_inc(&c->submitted);
	else if (ret == -EBUSY)
		atomic_long_inc(&c->busy);
	else if (ret == -ESHUTDOWN)
		atomic_long_inc(&c->refused);
	return ret;
}

/* Wait until every accepted job ran; 0 if they all did, within 60 s. */
static int counted_wait(struct counted *c)
{
	if (!wait_var_event_timeout(&c->executed,
				    atomic_long_read(&c->executed) >=
				    atomic_long_read(&c->submitted), 60 * HZ)) {
		pr_err("lost jobs: submitted %ld executed %ld\n",
		       atomic_long_read(&c->submitted),
		       atomic_long_read(&c->executed));
		return -ETIMEDOUT;
	}
	return 0;
}

/* Every job ran as often as it was accepted, and nothing ran twice. */
static int counted_check(struct counted *c)
{
	long runs = 0;
	unsigned int i;

	for (i = 0; i < c->nr; i++)
		runs += atomic_read(&c->jobs[i].runs);
	if (runs != atomic_long_read(&c->submitted) ||
	    atomic_long_read(&c->executed) != runs) {
		pr_err("submitted %ld executed %ld runs %ld\n",
		       atomic_long_read(&c->submitted),
		       atomic_long_read(&c->executed), runs);
		return -EINVAL;
	}
	return 0;
}

static void counted_free(struct counted *c)
{
	vfree(c->jobs);
}

/* === On every CPU === */

struct on_cpu {
	int (*fn)(unsigned int cpu, void *arg);
	void *arg;
	unsigned int cpu;
	int ret;
	struct completion done;
};

static int on_cpu_fn(void *arg)
{
	struct on_cpu *o = arg;

	o->ret = o->fn(o->cpu, o->arg);
	complete(&o->done);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

/*
 * fn(cpu, arg) in a kthread bound to each CPU of @cpus, all at once: the
 * first error of the calls, once all returned.
 */
static int on_cpus(const struct cpumask *cpus,
		   int (*fn)(unsigned int cpu, void *arg), void *arg)
{
	unsigned int nr = cpumask_weight(cpus), i = 0, cpu;
	struct task_struct **tasks;
	struct on_cpu *o;
	int ret = 0;

	o = kcalloc(nr, sizeof(*o), GFP_KERNEL);
	tasks = kcalloc(nr, sizeof(*tasks), GFP_KERNEL);
	if (!o || !tasks) {
		ret = -ENOMEM;
		goto out;
	}
	for_each_cpu(cpu, cpus) {
		if (i == nr)
			break;
		o[i] = (struct on_cpu){ .fn = fn, .arg = arg, .cpu = cpu };
		init_completion(&o[i].done);
		tasks[i] = kthread_create(on_cpu_fn, &o[i], "blitz_test/%u", cpu);
		if (IS_ERR(tasks[i])) {
			ret = PTR_ERR(tasks[i]);
			break;
		}
		/* Not a per-CPU kthread: hotplug may move it. */
		kthread_bind(tasks[i], cpu);
		wake_up_process(tasks[i]);
		i++;
	}
	nr = i;
	for (i = 0; i < nr; i++) {
		wait_for_completion(&o[i].done);
		kthread_stop(tasks[i]);
		if (!ret)
			ret = o[i].ret;
	}
out:
	kfree(tasks);
	kfree(o);
	return ret;
}

/* === Submitters on every CPU === */

struct submit_load {
	struct counted *c;
	unsigned int range, count;
};

/* Each CPU's submitter has jobs of its own: only it gets -EBUSY. */
static int submit_fn(unsigned int cpu, void *arg)
{
	struct submit_load *l = arg;
	unsigned int i;

	for (i = 0; i < l->count; i++) {
		/* -EBUSY: this job is still queued; move on to the next. */
		counted_submit(l->c, cpu * l->range +
				     get_random_u32_below(l->range));
		if (!(i % 1024))
			cond_resched();
	}
	return 0;
}

/* Submit @per_cpu jobs from a kthread bound to each online CPU. */
static int submit_from_cpus(struct counted *c, unsigned int per_cpu)
{
	struct submit_load l = { c, c->nr / nr_cpu_ids, per_cpu };

	return on_cpus(cpu_online_mask, submit_fn, &l);
}

/* === The tests === */

static int test_errors(void)
{
	struct blitz_job job = BLITZ_JOB_INIT(NULL);
	struct blitz_pool *pool, *dup;
	int ret = 0;

	if (blitz_submit(NULL, NULL) != -EINVAL ||
	    blitz_submit(NULL, &job) != -EINVAL)
		ret = -EINVAL;
	if (PTR_ERR(blitz_pool_create(NULL, 1)) != -EINVAL ||
	    PTR_ERR(blitz_pool_create("", 1)) != -EINVAL ||
	    PTR_ERR(blitz_pool_create("a/b", 1)) != -EINVAL ||
	    PTR_ERR(blitz_pool_create("big", num_possible_cpus() + 1)) !=
	    -EINVAL)
		ret = -EINVAL;
	if (PTR_ERR(blitz_pool_create("default", 1)) != -EEXIST)
		ret = -EINVAL;

	pool = blitz_pool_create("selftest-errors", 1);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	dup = blitz_pool_create("selftest-errors", 2);
	if (PTR_ERR(dup) != -EEXIST)
		ret = -EINVAL;
	if (!IS_ERR(dup))
		blitz_pool_destroy(dup);
	blitz_pool_destroy(pool);
	return ret;
}

struct gate_job {
	struct blitz_job job;
	struct completion started, release;
	atomic_t runs;
};

static void gate_func(struct blitz_job *job)
{
	struct gate_job *g = container_of(job, struct gate_job, job);

	atomic_inc(&g->runs);
	complete(&g->started);
	/*
	 * Spins: a worker that blocked would put a spare on duty, which
	 * would run what the test keeps queued behind this job.
	 */
	while (!completion_done(&g->release))
		cond_resched();
}

static void gate_call(void *arg)
{
	/* Must not run: the pool refuses calls once destroy began. */
}

static int destroyer_fn(void *pool)
{
	blitz_pool_destroy(pool);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

/*
 * A job is refused with -EBUSY while queued and accepted again once it has
 * started; submissions are refused with -ESHUTDOWN once destroy begins,
 * and every job accepted before that still runs.
 */
static int test_busy_shutdown(void)
{
	struct gate_job gate = { .job = BLITZ_JOB_INIT(gate_func) };
	unsigned long deadline = jiffies + 10 * HZ;
	struct task_struct *destroyer;
	struct blitz_pool *pool;
	struct counted c;
	int ret = 0, r;
	unsigned int i;

	init_completion(&gate.started);
	init_completion(&gate.release);
	pool = blitz_pool_create("selftest-busy", 1);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	ret = counted_init(&c, pool, 100000);
	if (ret) {
		blitz_pool_destroy(pool);
		return ret;
	}

	/*
	 * The only worker runs gate and does not block: what is queued now
	 * stays so.
	 */
	if (blitz_submit(pool, &gate.job))
		ret = -EINVAL;
	wait_for_completion(&gate.started);
	if (blitz_submit(pool, &gate.job) ||
	    blitz_submit(pool, &gate.job) != -EBUSY) {
		pr_err("resubmit of a started job, or -EBUSY, failed\n");
		ret = -EINVAL;
	}

	destroyer = kthread_run(destroyer_fn, pool, "blitz_destroy");
	if (IS_ERR(destroyer)) {
		complete_all(&gate.release);
		blitz_pool_destroy(pool);
		counted_free(&c);
		return PTR_ERR(destroyer);
	}
	/*
	 * Accepted until the destroyer gets going, then refused, however
	 * late it runs: once every job is queued, each is -EBUSY.
	 */
	for (i = 0, r = 0; r != -ESHUTDOWN; i++) {
		r = counted_submit(&c, i % c.nr);
		if (time_after(jiffies, deadline))
			break;
		cond_resched();
	}
	if (r != -ESHUTDOWN) {
		pr_err("submit during destroy returned %d\n", r);
		ret = -EINVAL;
	}
	r = blitz_call(pool, gate_call, NULL);
	if (r != -ESHUTDOWN) {
		pr_err("blitz_call during destroy returned %d\n", r);
		ret = -EINVAL;
	}
	complete_all(&gate.release);
	r = counted_wait(&c);
	if (r)
		ret = r;
	/* Returns once the destroyer is done: all accepted jobs have run. */
	kthread_stop(destroyer);
	if (atomic_read(&gate.runs) != 2 || counted_check(&c))
		ret = -EINVAL;
	counted_free(&c);
	return ret;
}

/* Millions of jobs from a kthread on every CPU into the default pool. */
static int test_load(void)
{
	struct counted c;
	int ret;

	ret = counted_init(&c, NULL, 1 << 16);
	if (ret)
		return ret;
	ret = submit_from_cpus(&c, load_jobs / num_online_cpus());
	if (!ret)
		ret = counted_wait(&c);
	if (!ret)
		ret = counted_check(&c);
	pr_info("load: submitted %ld busy %ld\n",
		atomic_long_read(&c.submitted), atomic_long_read(&c.busy));
	counted_free(&c);
	return ret;
}

#define ROOTS	64

/* Jobs that submit jobs: the local-deque path, with fan-out. */
static int test_from_jobs(void)
{
	struct counted c;
	unsigned int i;
	int ret;

	ret = counted_init(&c, NULL, 1 << 16);
	if (ret)
		return ret;
	/* Roots are only submitted from here, so only one runs at a time. */
	c.nr -= ROOTS;
	for (i = 0; i < ROOTS; i++) {
		c.jobs[c.nr + i].children = load_jobs / ROOTS;
		if (!blitz_submit(NULL, &c.jobs[c.nr + i].job))
			atomic_long_inc(&c.submitted);
	}
	ret = counted_wait(&c);
	c.nr += ROOTS;
	if (!ret)
		ret = counted_check(&c);
	pr_info("from jobs: submitted %ld\n", atomic_long_read(&c.submitted));
	counted_free(&c);
	return ret;
}

/* === Interrupt context === */

#define IRQ_FIRES	500
#define IRQ_BATCH	32

struct irq_load {
	struct counted c;
	struct hrtimer hrtimer;
	struct timer_list timer;
	struct completion done;
	atomic_t fires;
	unsigned int next;
	bool in_hardirq, in_softirq;
};

static void irq_load_batch(struct irq_load *l)
{
	unsigned int i;

	for (i = 0; i < IRQ_BATCH; i++)
		counted_submit(&l->c, l->next++ % l->c.nr);
	atomic_inc(&l->fires);
}

static enum hrtimer_restart irq_load_hrtimer(struct hrtimer *t)
{
	struct irq_load *l = container_of(t, struct irq_load, hrtimer);

	l->in_hardirq = in_hardirq();
	irq_load_batch(l);
	if (atomic_read(&l->fires) >= IRQ_FIRES) {
		complete(&l->done);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(200 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void irq_load_timer(struct timer_list *t)
{
	struct irq_load *l = from_timer(l, t, timer);

	l->in_softirq = in_serving_softirq();
	irq_load_batch(l);
	if (atomic_read(&l->fires) < IRQ_FIRES)
		mod_timer(t, jiffies + 1);
	else
		complete(&l->done);
}

/* Submissions from hard and soft interrupt context, and under a spinlock. */
static int test_irq(void)
{
	static DEFINE_SPINLOCK(lock);
	struct irq_load *l;
	unsigned long flags;
	unsigned int i;
	int ret;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l)
		return -ENOMEM;
	ret = counted_init(&l->c, NULL, 4096);
	if (ret)
		goto out;

	hrtimer_init(&l->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	l->hrtimer.function = irq_load_hrtimer;
	init_completion(&l->done);
	hrtimer_start(&l->hrtimer, ns_to_ktime(200 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	wait_for_completion(&l->done);
	hrtimer_cancel(&l->hrtimer);

	atomic_set(&l->fires, 0);
	reinit_completion(&l->done);
	timer_setup(&l->timer, irq_load_timer, 0);
	mod_timer(&l->timer, jiffies + 1);
	wait_for_completion(&l->done);
	timer_delete_sync(&l->timer);

	for (i = 0; i < IRQ_FIRES; i++) {
		spin_lock_irqsave(&lock, flags);
		irq_load_batch(l);
		spin_unlock_irqrestore(&lock, flags);
	}

	ret = counted_wait(&l->c);
	if (!ret)
		ret = counted_check(&l->c);
	if (!l->in_hardirq || !l->in_softirq) {
		pr_err("hardirq=%d softirq=%d\n", l->in_hardirq, l->in_softirq);
		ret = -EINVAL;
	}
	pr_info("irq: submitted %ld busy %ld\n",
		atomic_long_read(&l->c.submitted), atomic_long_read(&l->c.busy));
	counted_free(&l->c);
out:
	kfree(l);
	return ret;
}

/*
 * Destroy a pool while its jobs keep submitting more: destroy returns only
 * once all of them ran.
 */
static int test_destroy_load(void)
{
	struct blitz_pool *pool;
	struct counted c;
	unsigned int i;
	int ret;

	pool = blitz_pool_create("selftest-destroy", 0);
	if (IS_ERR(pool))
		return PTR_ERR(pool);
	ret = counted_init(&c, pool, 1 << 16);
	if (ret) {
		blitz_pool_destroy(pool);
		return ret;
	}
	c.nr -= ROOTS;
	for (i = 0; i < ROOTS; i++) {
		c.jobs[c.nr + i].children = load_jobs / ROOTS / 4;
		if (!blitz_submit(pool, &c.jobs[c.nr + i].job))
			atomic_long_inc(&c.submitted);
	}
	blitz_pool_destroy(pool);
	c.nr += ROOTS;
	/* Nothing to wait for: destroy drained the pool. */
	ret = counted_check(&c);
	pr_info("destroy under load: executed %ld\n",
		atomic_long_read(&c.executed));
	counted_free(&c);
	return ret;
}

/* === Fork-join === */

/* fib(24) with a join at every node, from outside and through blitz_call(). */
static int test_fib(void)
{
	struct fib f = { 24 };
	unsigned long want = fib_plain(24);

	blitz_join(fib_join, &f, fib_join, &(struct fib){ 0 });
	if (f.result != want)
		return -EINVAL;
	f.result = 0;
	if (blitz_call(NULL, fib_join, &f) || f.result != want)
		return -EINVAL;
	return 0;
}

struct steal {
	struct completion b_started;
	bool timed_out;
};

static void steal_a(void *arg)
{
	struct steal *st = arg;

	/* Only another worker can start b while a waits here. */
	if (!wait_for_completion_timeout(&st->b_started, 10 * HZ))
		st->timed_out = true;
}

static void steal_b(void *arg)
{
	struct steal *st = arg;

	complete(&st->b_started);
}

static void steal_join(void *arg)
{
	blitz_join(steal_a, arg, steal_b, arg);
}

/* Real parallelism: b is stolen while a waits for it. */
static int test_join_stolen(void)
{
	struct steal st = {};
	int ret;

	init_completion(&st.b_started);
	ret = blitz_call(NULL, steal_join, &st);
	return ret ?: st.timed_out ? -ETIMEDOUT : 0;
}

struct spread {
	cpumask_t cpus;
	spinlock_t lock;	/* protects cpus */
	atomic_long_t sum;
	unsigned long sink;
};

static void spread_fn(unsigned long lo, unsigned long hi, void *arg)
{
	struct spread *sp = arg;
	unsigned long i, k, x = 0, h = 0;

	for (i = lo; i < hi; i++) {
		x += i;
		/* Enough work per index that thieves get their share. */
		for (k = 0; k < 20000; k++)
			h = h * 31 + i + k;
	}
	WRITE_ONCE(sp->sink, h);
	atomic_long_add(x, &sp->sum);
	spin_lock(&sp->lock);
	cpumask_set_cpu(raw_smp_processor_id(), &sp->cpus);
	spin_unlock(&sp->lock);
}

/*
 * A parallel loop with enough work runs on several CPUs. Not in "all":
 * run from a pool asleep (wait_asleep), whose workers a post wakes. Idle
 * workers still awake are counted on to look, and a host that does not
 * run them may see the loop end on one CPU (testing.rst).
 */
static int test_parallel_for(void)
{
	const unsigned long n = 4096;
	struct spread sp = {};
	int ret;

	spin_lock_init(&sp.lock);
	if (blitz_parallel_for(1, 0, 0, spread_fn, &sp) != -EINVAL ||
	    blitz_parallel_for(0, 1, 0, NULL, NULL) != -EINVAL ||
	    blitz_parallel_for(3, 3, 0, spread_fn, &sp) ||
	    atomic_long_read(&sp.sum))
		return -EINVAL;
	ret = blitz_parallel_for(0, n, 8, spread_fn, &sp);
	if (ret)
		return ret;
	pr_info("parallel_for: ran on %u CPUs\n", cpumask_weight(&sp.cpus));
	if (atomic_long_read(&sp.sum) != n * (n - 1) / 2)
		return -EINVAL;
	return num_online_cpus() > 1 && cpumask_weight(&sp.cpus) < 2 ?
	       -EINVAL : 0;
}

/* === Groups, reduce, sort === */

#define GROUP_JOBS	20000

struct group_job {
	struct blitz_job job;
	struct group_test *g;
	bool child;
};

struct group_test {
	struct blitz_group group;
	struct group_job *jobs;
	atomic_t next, ran;
};

static void group_job_func(struct blitz_job *job)
{
	struct group_job *j = container_of(job, struct group_job, job);
	struct group_test *g = j->g;
	int i;

	atomic_inc(&g->ran);
	if (j->child)
		return;
	/* Each parent submits a child into the group. */
	i = atomic_inc_return(&g->next) - 1;
	g->jobs[i] = (struct group_job){ .g = g, .child = true };
	blitz_job_init(&g->jobs[i].job, group_job_func);
	WARN_ON(blitz_group_submit(&g->group, &g->jobs[i].job));
}

/*
 * Half the jobs from here, each submitting a child from inside the
 * group; wait; every one ran once. Then a cancelled round: every
 * accepted job ran or was skipped, and the wait says -ECANCELED.
 */
static int test_group(void)
{
	struct group_test *g = kzalloc(sizeof(*g), GFP_KERNEL);
	int i, ret = 0, accepted = 0;

	if (!g)
		return -ENOMEM;
	g->jobs = vcalloc(GROUP_JOBS, sizeof(*g->jobs));
	if (!g->jobs) {
		kfree(g);
		return -ENOMEM;
	}
	blitz_group_init(&g->group, NULL);
	atomic_set(&g->next, GROUP_JOBS / 2);
	for (i = 0; i < GROUP_JOBS / 2; i++) {
		g->jobs[i] = (struct group_job){ .g = g };
		blitz_job_init(&g->jobs[i].job, group_job_func);
		if (blitz_group_submit(&g->group, &g->jobs[i].job))
			ret = -EINVAL;
	}
	if (blitz_group_wait(&g->group) || atomic_read(&g->ran) != GROUP_JOBS)
		ret = -EINVAL;

	/* Cancelled: children count as accepted when their parent runs. */
	atomic_set(&g->ran, 0);
	atomic_set(&g->next, GROUP_JOBS / 2);
	for (i = 0; i < GROUP_JOBS / 2; i++) {
		g->jobs[i] = (struct group_job){ .g = g, .child = true };
		blitz_job_init(&g->jobs[i].job, group_job_func);
		if (i == GROUP_JOBS / 4)
			blitz_group_cancel(&g->group);
		if (!blitz_group_submit(&g->group, &g->jobs[i].job))
			accepted++;
	}
	if (accepted != GROUP_JOBS / 4 ||
	    blitz_group_wait(&g->group) != -ECANCELED ||
	    atomic_read(&g->ran) > accepted)
		ret = -EINVAL;
	vfree(g->jobs);
	kfree(g);
	return ret;
}

/* === Jobs that sleep === */

struct later {
	struct blitz_job first, second;
	struct completion signal, done;
	const struct cpumask *allowed;	/* NULL: anywhere */
	bool timed_out, stray;
};

/* Each job's worker, a spare's too, is allowed on @l->allowed alone. */
static void later_where(struct later *l)
{
	if (!l->allowed || cpumask_subset(current->cpus_ptr, l->allowed))
		return;
	pr_err("a job's worker is allowed on CPUs %*pbl, not within %*pbl\n",
	       cpumask_pr_args(current->cpus_ptr),
	       cpumask_pr_args(l->allowed));
	WRITE_ONCE(l->stray, true);
}

static void later_first(struct blitz_job *job)
{
	struct later *l = container_of(job, struct later, first);

	later_where(l);
	l->timed_out = !wait_for_completion_timeout(&l->signal, 5 * HZ);
	complete(&l->done);
}

static void later_second(struct blitz_job *job)
{
	struct later *l = container_of(job, struct later, second);

	later_where(l);
	complete(&l->signal);
}

/*
 * In @pool, of one worker, a job waits for a job submitted after it: the
 * second runs while the first sleeps, each on a worker allowed on
 * @allowed alone (NULL: anywhere). Ten rounds, both jobs submitted back
 * to back from here.
 */
static int later_rounds(struct blitz_pool *pool, struct later *l,
			const struct cpumask *allowed, const char *name)
{
	int round, ret = 0;

	l->allowed = allowed;
	l->stray = false;
	for (round = 0; round < 10 && !ret; round++) {
		blitz_job_init(&l->first, later_first);
		blitz_job_init(&l->second, later_second);
		init_completion(&l->signal);
		init_completion(&l->done);
		ret = blitz_submit(pool, &l->first);
		if (!ret) {
			/* Refused, it leaves the first to time out. */
			ret = blitz_submit(pool, &l->second);
			wait_for_completion(&l->done);
		}
		if (ret) {
			pr_err("%s: round %d: submit: %d\n", name, round, ret);
		} else if (l->timed_out) {
			pr_err("%s: round %d: a job waited 5 s for the next\n",
			       name, round);
			ret = -ETIMEDOUT;
		} else if (READ_ONCE(l->stray)) {
			pr_err("%s: round %d: a job's worker was allowed outside %*pbl\n",
			       name, round, cpumask_pr_args(allowed));
			ret = -EINVAL;
		}
	}
	return ret;
}

static int test_sleep_later(void)
{
	struct blitz_pool *pool = blitz_pool_create("selftest-later", 1);
	struct later *l = kzalloc(sizeof(*l), GFP_KERNEL);
	int ret;

	if (IS_ERR(pool) || !l) {
		kfree(l);
		return IS_ERR(pool) ? PTR_ERR(pool) : -ENOMEM;
	}
	ret = later_rounds(pool, l, NULL, "sleep_later");
	blitz_pool_destroy(pool);
	kfree(l);
	return ret;
}

/*
 * As sleep_later, in a pool of one worker on CPU hotplug_cpu alone, while
 * that CPU is offline, then once it is back. Offline, the pool has no
 * online CPU, so its worker and spares are allowed on the housekeeping
 * CPUs alone, never on isolated ones; back, on that CPU alone. It takes
 * a CPU offline, so it runs only when named (selftests/isolated.sh).
 */
static int test_sleep_away(void)
{
	struct later *l = kzalloc(sizeof(*l), GFP_KERNEL);
	struct blitz_pool *pool = NULL;
	cpumask_var_t hk;
	int ret;

	if (!l || !zalloc_cpumask_var(&hk, GFP_KERNEL)) {
		kfree(l);
		return -ENOMEM;
	}
	if (hotplug_cpu == 0 || hotplug_cpu >= nr_cpu_ids ||
	    !cpu_online(hotplug_cpu)) {
		pr_err("sleep_away: CPU %u is not online, or is 0\n",
		       hotplug_cpu);
		ret = -ENODEV;
		goto free;
	}
	hk_cpus(hk);
	pool = blitz_pool_create_attrs("selftest-away",
				       &(struct blitz_pool_attrs){
					       .nr_workers = 1,
					       .cpumask = cpumask_of(hotplug_cpu) });
	if (IS_ERR(pool)) {
		ret = PTR_ERR(pool);
		pool = NULL;
		goto free;
	}
	ret = remove_cpu(hotplug_cpu);
	if (ret) {
		pr_err("sleep_away: CPU %u did not go offline: %d\n",
		       hotplug_cpu, ret);
	} else {
		ret = later_rounds(pool, l, hk, "sleep_away, CPU offline");
		if (add_cpu(hotplug_cpu)) {
			pr_err("sleep_away: CPU %u did not come back\n",
			       hotplug_cpu);
			ret = ret ?: -EIO;
		}
		ret = ret ?: later_rounds(pool, l, cpumask_of(hotplug_cpu),
					  "sleep_away, CPU back");
	}
free:
	if (pool)
		blitz_pool_destroy(pool);
	free_cpumask_var(hk);
	kfree(l);
	return ret;
}

/*
 * A CPU hotplug operation held in a teardown callback of ours, with the
 * hotplug lock held for writing throughout.
 */
struct hp_hold {
	struct completion held, release, done;
	unsigned int cpu;
	int ret;
};

static struct hp_hold *hp_hold;

static int hp_hold_offline(unsigned int cpu)
{
	struct hp_hold *h = READ_ONCE(hp_hold);

	if (h && cpu == h->cpu) {
		complete(&h->held);
		wait_for_completion_timeout(&h->release, 30 * HZ);
	}
	return 0;
}

/* Exits without returning into this module, which may be gone by then. */
static int hp_hold_fn(void *arg)
{
	struct hp_hold *h = arg;

	h->ret = remove_cpu(h->cpu);
	kthread_complete_and_exit(&h->done, 0);
}

/*
 * As sleep_later, in a new pool of one worker, with no spare yet, while
 * a CPU other than the worker's goes offline and our callback holds the
 * hotplug operation: the spare that runs the second job is made without
 * waiting for the operation's end. It takes a CPU offline, so it runs
 * only when named (selftests/isolated.sh).
 */
static int test_sleep_hotplug(void)
{
	struct hp_hold *h = kzalloc(sizeof(*h), GFP_KERNEL);
	struct later *l = kzalloc(sizeof(*l), GFP_KERNEL);
	struct blitz_pool *pool = NULL;
	struct task_struct *t;
	int state, ret;

	if (!h || !l) {
		ret = -ENOMEM;
		goto free;
	}
	if (hotplug_cpu == 0 || hotplug_cpu >= nr_cpu_ids ||
	    !cpu_online(hotplug_cpu)) {
		pr_err("sleep_hotplug: CPU %u is not online, or is 0\n",
		       hotplug_cpu);
		ret = -ENODEV;
		goto free;
	}
	h->cpu = hotplug_cpu;
	init_completion(&h->held);
	init_completion(&h->release);
	init_completion(&h->done);
	state = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN,
					  "blitz_selftest:hold", NULL,
					  hp_hold_offline);
	if (state < 0) {
		ret = state;
		goto free;
	}
	pool = blitz_pool_create("selftest-hpspare", 1);
	if (IS_ERR(pool)) {
		ret = PTR_ERR(pool);
		pool = NULL;
		goto remove;
	}
	WRITE_ONCE(hp_hold, h);
	t = kthread_run(hp_hold_fn, h, "blitz_hp_hold");
	if (IS_ERR(t)) {
		ret = PTR_ERR(t);
		goto remove;
	}
	wait_for_completion(&h->held);

	blitz_job_init(&l->first, later_first);
	blitz_job_init(&l->second, later_second);
	init_completion(&l->signal);
	init_completion(&l->done);
	ret = blitz_submit(pool, &l->first) ?: blitz_submit(pool, &l->second);
	if (!ret) {
		wait_for_completion(&l->done);
		if (l->timed_out) {
			pr_err("sleep_hotplug: a job waited 5 s for the next, during a CPU hotplug\n");
			ret = -ETIMEDOUT;
		}
	}

	complete(&h->release);
	wait_for_completion(&h->done);
	if (h->ret) {
		pr_err("sleep_hotplug: CPU %u did not go offline: %d\n",
		       h->cpu, h->ret);
		ret = ret ?: h->ret;
	} else if (add_cpu(h->cpu)) {
		pr_err("sleep_hotplug: CPU %u did not come back\n", h->cpu);
		ret = ret ?: -EIO;
	}
remove:
	WRITE_ONCE(hp_hold, NULL);
	cpuhp_remove_state_nocalls(state);
	/* Runs the second job if it is still queued. */
	if (pool)
		blitz_pool_destroy(pool);
free:
	kfree(l);
	kfree(h);
	return ret;
}

#define BLOCKED_JOBS	256

struct sleeper {
	struct blitz_job job;
	struct blocked *b;
};

struct blocked {
	struct sleeper *sleepers;
	struct counted c;
	struct completion release;
	atomic_t asleep, left;
};

static void blocked_sleeper(struct blitz_job *job)
{
	struct blocked *b = container_of(job, struct sleeper, job)->b;

	atomic_inc(&b->asleep);
	wake_up_var(&b->asleep);
	wait_for_completion_timeout(&b->release, 30 * HZ);
	/* Last: once counted, the test may free everything. */
	atomic_dec(&b->left);
	wake_up_var(&b->left);
}

/*
 * One job per online CPU sleeps, in the default pool, until released:
 * every worker is blocked. The jobs submitted meanwhile all run before
 * the release, on spare workers.
 */
static int test_sleep_blocked(void)
{
	unsigned int n = num_online_cpus(), i;
	struct blocked *b = kzalloc(sizeof(*b), GFP_KERNEL);
	int ret;

	if (!b)
		return -ENOMEM;
	b->sleepers = kcalloc(n, sizeof(*b->sleepers), GFP_KERNEL);
	ret = b->sleepers ? counted_init(&b->c, NULL, BLOCKED_JOBS) : -ENOMEM;
	if (ret)
		goto out;
	init_completion(&b->release);
	atomic_set(&b->left, n);
	for (i = 0; i < n; i++) {
		b->sleepers[i].b = b;
		blitz_job_init(&b->sleepers[i].job, blocked_sleeper);
		WARN_ON(blitz_submit(NULL, &b->sleepers[i].job));
	}
	if (!wait_var_event_timeout(&b->asleep, atomic_read(&b->asleep) == n,
				    10 * HZ)) {
		pr_err("%d of %u sleepers started\n", atomic_read(&b->asleep), n);
		ret = -ETIMEDOUT;
	}
	for (i = 0; i < BLOCKED_JOBS; i++)
		counted_submit(&b->c, i);
	if (!wait_var_event_timeout(&b->c.executed,
				    atomic_long_read(&b->c.executed) ==
				    BLOCKED_JOBS, 10 * HZ)) {
		pr_err("%ld of %d jobs ran while every worker slept\n",
		       atomic_long_read(&b->c.executed), BLOCKED_JOBS);
		ret = -ETIMEDOUT;
	}
	complete_all(&b->release);
	ret = counted_wait(&b->c) ?: counted_check(&b->c) ?: ret;
	wait_var_event(&b->left, !atomic_read(&b->left));
	counted_free(&b->c);
out:
	kfree(b->sleepers);
	kfree(b);
	return ret;
}

/*
 * === Waiters run nothing of other pools: the review's probes ===
 *
 * N1: job X of A holds M across blitz_join(xa, xb); xb is stolen by A's
 * other worker, T, and waits in blitz_call(B, f). f submits a job of C,
 * which calls g into A, and returns once g has started. g joins, and its
 * b takes M. A waiter that ran other pools' calls ran g on T's stack;
 * g's b was then X's to leapfrog, inside X's join, under M: X waited for
 * itself. N2: the same with X the job of A's one worker, waiting in
 * blitz_call(B, f) under M, and g taking M.
 */
struct probe {
	struct blitz_pool *a, *b, *c;
	struct blitz_job x, cjob;
	struct mutex m;		/* X holds it across its wait */
	struct task_struct *x_task, *t_task;
	struct completion xb_started, g_started, done;
	bool x_waits, t_waits;	/* X under M, T in its call */
	bool got_m, on_x, on_t, not_stolen;
};

/*
 * Takes M, or gives up after 5 s; notes whether it runs on X while X
 * holds M, or on T while T waits in its call.
 */
static void probe_take_m(struct probe *p)
{
	unsigned long end = jiffies + 5 * HZ;

	if (current == p->x_task && READ_ONCE(p->x_waits))
		WRITE_ONCE(p->on_x, true);
	if (current == READ_ONCE(p->t_task) && READ_ONCE(p->t_waits))
		WRITE_ONCE(p->on_t, true);
	while (!mutex_trylock(&p->m)) {
		if (time_after(jiffies, end))
			return;
		usleep_range(1000, 2000);
	}
	WRITE_ONCE(p->got_m, true);
	mutex_unlock(&p->m);
}

static void probe_gb(void *arg)
{
	probe_take_m(arg);
}

static void probe_ga(void *arg)
{
}

/* In A, for C's job. */
static void probe_g(void *arg)
{
	struct probe *p = arg;

	complete(&p->g_started);
	blitz_join(probe_ga, p, probe_gb, p);
}

static void probe_cjob(struct blitz_job *job)
{
	struct probe *p = container_of(job, struct probe, cjob);

	WARN_ON(blitz_call(p->a, probe_g, p));
}

/* In B, for xb, and for X in N2. */
static void probe_f(void *arg)
{
	struct probe *p = arg;

	WARN_ON(blitz_submit(p->c, &p->cjob));
	wait_for_completion_timeout(&p->g_started, 10 * HZ);
}

static void probe_xa(void *arg)
{
	struct probe *p = arg;

	/* Only a thief can start xb while we wait: xb is stolen. */
	if (!wait_for_completion_timeout(&p->xb_started, 10 * HZ))
		WRITE_ONCE(p->not_stolen, true);
}

static void probe_xb(void *arg)
{
	struct probe *p = arg;

	WRITE_ONCE(p->t_task, current);
	complete(&p->xb_started);
	WRITE_ONCE(p->t_waits, true);
	WARN_ON(blitz_call(p->b, probe_f, p));
	WRITE_ONCE(p->t_waits, false);
}

static void probe_x_join(struct blitz_job *job)
{
	struct probe *p = container_of(job, struct probe, x);

	p->x_task = current;
	mutex_lock(&p->m);
	WRITE_ONCE(p->x_waits, true);
	blitz_join(probe_xa, p, probe_xb, p);
	WRITE_ONCE(p->x_waits, false);
	mutex_unlock(&p->m);
	complete(&p->done);
}

static void probe_x_call(struct blitz_job *job)
{
	struct probe *p = container_of(job, struct probe, x);

	p->x_task = current;
	mutex_lock(&p->m);
	WRITE_ONCE(p->x_waits, true);
	WARN_ON(blitz_call(p->b, probe_f, p));
	WRITE_ONCE(p->x_waits, false);
	mutex_unlock(&p->m);
	complete(&p->done);
}

/*
 * Run job X with pools of @na, 1 and 1 workers. A probe that hangs is
 * left behind, pools and all: its jobs still use them.
 */
static int probe_run(unsigned int na, void (*x)(struct blitz_job *job))
{
	struct probe *p = kzalloc(sizeof(*p), GFP_KERNEL);
	int ret = -ENOMEM;

	if (!p)
		return -ENOMEM;
	mutex_init(&p->m);
	init_completion(&p->xb_started);
	init_completion(&p->g_started);
	init_completion(&p->done);
	blitz_job_init(&p->x, x);
	blitz_job_init(&p->cjob, probe_cjob);
	p->a = blitz_pool_create("selftest-probe-a", na);
	p->b = blitz_pool_create("selftest-probe-b", 1);
	p->c = blitz_pool_create("selftest-probe-c", 1);
	if (IS_ERR(p->a) || IS_ERR(p->b) || IS_ERR(p->c))
		goto out;
	WARN_ON(blitz_submit(p->a, &p->x));
	if (!wait_for_completion_timeout(&p->done, 30 * HZ)) {
		pr_err("X deadlocked: g started %d, M taken %d, on X %d\n",
		       completion_done(&p->g_started), READ_ONCE(p->got_m),
		       READ_ONCE(p->on_x));
		return -EDEADLK;
	}
	ret = 0;
out:
	/* Each drains its jobs: g, and its b, are done after these. */
	if (!IS_ERR(p->a))
		blitz_pool_destroy(p->a);
	if (!IS_ERR(p->b))
		blitz_pool_destroy(p->b);
	if (!IS_ERR(p->c))
		blitz_pool_destroy(p->c);
	if (!ret && p->not_stolen) {
		pr_err("xb was not stolen\n");
		ret = -EINVAL;
	}
	if (!ret && (!p->got_m || p->on_x || p->on_t)) {
		pr_err("g's b: took M %d, ran on X %d, on T %d\n",
		       p->got_m, p->on_x, p->on_t);
		ret = -EINVAL;
	}
	kfree(p);
	return ret;
}

/* N1, in a pool A of two workers: X's b is stolen. */
static int test_probe_n1(void)
{
	if (num_online_cpus() < 2) {
		pr_err("a stolen join needs two CPUs\n");
		return -ENODEV;
	}
	return probe_run(2, probe_x_join);
}

/* N2, in a pool A of one worker. */
static int test_probe_n2(void)
{
	return probe_run(1, probe_x_call);
}

/*
 * N3: in a pool of two workers, X joins a and b. a waits until b, stolen,
 * has started, then submits J into group G and returns; b waits until J
 * is submitted, then waits for G. A joiner that moved J to its injection
 * list and slept while b's worker ran only its own queues' jobs of G
 * left J to nobody.
 */
struct n3 {
	struct blitz_pool *pool;
	struct blitz_job x, j;
	struct blitz_group group;
	struct completion b_started, j_submitted, done;
	atomic_t j_runs;
	bool not_stolen;
};

static void n3_j(struct blitz_job *job)
{
	atomic_inc(&container_of(job, struct n3, j)->j_runs);
}

static void n3_a(void *arg)
{
	struct n3 *n = arg;

	if (!wait_for_completion_timeout(&n->b_started, 10 * HZ))
		WRITE_ONCE(n->not_stolen, true);
	WARN_ON(blitz_group_submit(&n->group, &n->j));
	complete(&n->j_submitted);
}

static void n3_b(void *arg)
{
	struct n3 *n = arg;

	complete(&n->b_started);
	wait_for_completion(&n->j_submitted);
	WARN_ON(blitz_group_wait(&n->group));
}

static void n3_x(struct blitz_job *job)
{
	struct n3 *n = container_of(job, struct n3, x);

	blitz_join(n3_a, n, n3_b, n);
	complete(&n->done);
}

static int test_probe_n3(void)
{
	struct n3 *n;
	int ret = 0;

	if (num_online_cpus() < 2) {
		pr_err("a stolen join needs two CPUs\n");
		return -ENODEV;
	}
	n = kzalloc(sizeof(*n), GFP_KERNEL);
	if (!n)
		return -ENOMEM;
	init_completion(&n->b_started);
	init_completion(&n->j_submitted);
	init_completion(&n->done);
	n->pool = blitz_pool_create("selftest-n3", 2);
	if (IS_ERR(n->pool)) {
		ret = PTR_ERR(n->pool);
		kfree(n);
		return ret;
	}
	blitz_group_init(&n->group, n->pool);
	blitz_job_init(&n->x, n3_x);
	blitz_job_init(&n->j, n3_j);
	WARN_ON(blitz_submit(n->pool, &n->x));
	/* Hung: left behind, pool and all. */
	if (!wait_for_completion_timeout(&n->done, 30 * HZ)) {
		pr_err("the group wait in the stolen half hung\n");
		return -EDEADLK;
	}
	if (n->not_stolen || atomic_read(&n->j_runs) != 1) {
		pr_err("b stolen %d, J ran %d times\n", !n->not_stolen,
		       atomic_read(&n->j_runs));
		ret = -EINVAL;
	}
	blitz_pool_destroy(n->pool);
	kfree(n);
	return ret;
}

struct concat {
	u64 h, pow;
};

static void concat_init(void *acc, void *arg)
{
	*(struct concat *)acc = (struct concat){ 0, 1 };
}

static void concat_fn(unsigned long lo, unsigned long hi, void *acc, void *arg)
{
	struct concat *c = acc;

	for (; lo < hi; lo++) {
		c->h = (c->h * 131 + lo + 1) % 1000000007;
		c->pow = c->pow * 131 % 1000000007;
	}
}

static void concat_combine(void *acc, const void *right, void *arg)
{
	struct concat *c = acc;
	const struct concat *r = right;

	c->h = (c->h * r->pow + r->h) % 1000000007;
	c->pow = c->pow * r->pow % 1000000007;
}

/* An order-sensitive fold: the sequential result at several grains. */
static int test_reduce(void)
{
	static const unsigned long grains[] = { 0, 1, 10, 1000 };
	struct concat want, got;
	int i;

	concat_init(&want, NULL);
	concat_fn(0, 200000, &want, NULL);
	for (i = 0; i < ARRAY_SIZE(grains); i++) {
		if (blitz_parallel_reduce(0, 200000, grains[i], &got,
					  sizeof(got), concat_init, concat_fn,
					  concat_combine, NULL) ||
		    got.h != want.h)
			return -EINVAL;
	}
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

/* A million random u32: sorted, the same multiset. */
static int test_sort(void)
{
	const size_t n = 1000000;
	u32 *a = vmalloc(n * sizeof(*a));
	u64 sum = 0, sorted_sum = 0;
	int ret = 0;
	size_t i;

	if (!a)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		a[i] = get_random_u32();
		sum += a[i];
	}
	blitz_sort(a, n, sizeof(*a), cmp_u32, NULL);
	for (i = 0; i < n; i++) {
		sorted_sum += a[i];
		if (i && a[i - 1] > a[i])
			ret = -EINVAL;
	}
	vfree(a);
	return ret ?: sum == sorted_sum ? 0 : -EINVAL;
}

/* fib(n) with a join at every node, each node noting where it ran. */
struct fibw {
	struct where *w;
	atomic_long_t *nodes;
	unsigned int n;
	unsigned long result;
};

static void fibw_join(void *arg)
{
	struct fibw *f = arg;
	struct fibw a = { f->w, f->nodes, f->n - 1 };
	struct fibw b = { f->w, f->nodes, f->n - 2 };

	where_note(f->w, "join half");
	atomic_long_inc(f->nodes);
	if (f->n < 2) {
		f->result = f->n;
		return;
	}
	blitz_join(fibw_join, &a, fibw_join, &b);
	f->result = a.result + b.result;
}

/* The result, and every node of fib(n) but @skipped ran once. */
static int fibw_check(struct fibw *f, long skipped, const char *how)
{
	/* fib(n) has 2 fib(n + 1) - 1 nodes. */
	long want = 2 * fib_plain(f->n + 1) - 1 - skipped;

	if (f->result == fib_plain(f->n) && atomic_long_read(f->nodes) == want)
		return 0;
	pr_err("%s: fib(%u) = %lu in %ld nodes, not %lu in %ld\n", how, f->n,
	       f->result, atomic_long_read(f->nodes), fib_plain(f->n), want);
	return -EINVAL;
}

/* A job of a group, noting where it ran. */
struct gjob {
	struct blitz_job job;
	struct where *w;
	atomic_t runs;
};

static void gjob_func(struct blitz_job *job)
{
	struct gjob *j = container_of(job, struct gjob, job);

	where_note(j->w, "group job");
	atomic_inc(&j->runs);
}

/* @nr jobs into a group of @pool, one wait: each ran once. */
static int group_where(struct blitz_pool *pool, struct where *w,
		       unsigned int nr)
{
	struct blitz_group group;
	struct gjob *jobs = vcalloc(nr, sizeof(*jobs));
	unsigned int i;
	int ret = 0;

	if (!jobs)
		return -ENOMEM;
	blitz_group_init(&group, pool);
	for (i = 0; i < nr; i++) {
		blitz_job_init(&jobs[i].job, gjob_func);
		jobs[i].w = w;
		if (blitz_group_submit(&group, &jobs[i].job))
			ret = -EINVAL;
	}
	if (blitz_group_wait(&group))
		ret = -EINVAL;
	for (i = 0; i < nr; i++) {
		if (atomic_read(&jobs[i].runs) != 1) {
			pr_err("group job %u ran %d times\n", i,
			       atomic_read(&jobs[i].runs));
			ret = -EINVAL;
			break;
		}
	}
	vfree(jobs);
	return ret;
}

/* === Isolated CPUs === */

#define ISO_JOBS	20000	/* per CPU and pool, from a task */
#define ISO_RANGE	2048	/* jobs of each CPU's task, and of its hrtimer */
#define ISO_FIRES	50	/* hrtimer interrupts per CPU */
#define ISO_BATCH	32	/* jobs per interrupt and pool */
#define ISO_LOOP	2048	/* parallel_for indices */
#define ISO_FIB		18
#define ISO_GROUP	2000

struct iso_cpu {
	struct iso *t;
	unsigned int cpu, next;
	struct hrtimer timer;
	struct completion fired;
	int fires;
	bool wrong_cpu, not_hardirq;
	long from_task, from_irq;	/* jobs accepted */
};

struct iso {
	struct blitz_pool *pool;	/* attrs {}: the housekeeping CPUs */
	struct counted c[2];		/* the default pool's, the pool's */
	struct where where;
	struct iso_cpu *cpus;		/* nr_cpu_ids */
};

/*
 * Submit job @i of each pool's share of @s's CPU: the task's below
 * ISO_RANGE, the hrtimer's above, so that the hrtimer's first submits
 * are accepted even when every job of the task is still queued.
 */
static int iso_submit(struct iso_cpu *s, unsigned int i)
{
	int p, ok = 0;

	for (p = 0; p < 2; p++)
		ok += !counted_submit(&s->t->c[p], s->cpu * 2 * ISO_RANGE + i);
	return ok;
}

static enum hrtimer_restart iso_hrtimer(struct hrtimer *timer)
{
	struct iso_cpu *s = container_of(timer, struct iso_cpu, timer);
	int i;

	if (!in_hardirq())
		s->not_hardirq = true;
	if (smp_processor_id() != s->cpu)
		s->wrong_cpu = true;
	for (i = 0; i < ISO_BATCH; i++)
		s->from_irq += iso_submit(s, ISO_RANGE +
					     s->next++ % ISO_RANGE);
	if (++s->fires >= ISO_FIRES) {
		complete(&s->fired);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, ns_to_ktime(100 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

/* On @cpu: jobs into both pools from this task, then from its hrtimer. */
static int iso_submit_fn(unsigned int cpu, void *arg)
{
	struct iso *t = arg;
	struct iso_cpu *s = &t->cpus[cpu];
	unsigned int i;

	for (i = 0; i < ISO_JOBS; i++) {
		s->from_task += iso_submit(s, get_random_u32_below(ISO_RANGE));
		if (!(i % 1024))
			cond_resched();
	}
	if (raw_smp_processor_id() != cpu)
		s->wrong_cpu = true;
	init_completion(&s->fired);
	hrtimer_init(&s->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	s->timer.function = iso_hrtimer;
	hrtimer_start(&s->timer, ns_to_ktime(100 * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
	wait_for_completion(&s->fired);
	hrtimer_cancel(&s->timer);
	return 0;
}

struct iso_loop {
	struct where *w;
	atomic_t runs[ISO_LOOP];
	unsigned long sink;
};

static void iso_loop_fn(unsigned long lo, unsigned long hi, void *arg)
{
	struct iso_loop *l = arg;
	unsigned long i, k, h = 0;

	where_note(l->w, "loop range");
	for (i = lo; i < hi; i++) {
		atomic_inc(&l->runs[i]);
		/* Enough work per index that thieves get their share. */
		for (k = 0; k < 5000; k++)
			h = h * 31 + i + k;
	}
	WRITE_ONCE(l->sink, h);
}

/*
 * On @cpu: a parallel loop, fib with joins from here (the default pool)
 * and through a call into the pool, and a group of each pool.
 */
static int iso_fork_fn(unsigned int cpu, void *arg)
{
	struct iso *t = arg;
	struct where *w = &t->where;
	struct iso_loop *l = kzalloc(sizeof(*l), GFP_KERNEL);
	atomic_long_t nodes = ATOMIC_LONG_INIT(0);
	struct fibw a = { w, &nodes, ISO_FIB - 1 }, b = { w, &nodes, ISO_FIB - 2 };
	struct fibw f = { w, &nodes, ISO_FIB };
	int ret = 0, i;

	if (!l)
		return -ENOMEM;
	if (raw_smp_processor_id() != cpu) {
		pr_err("the forks' kthread is not on CPU %u\n", cpu);
		ret = -EINVAL;
	}

	l->w = w;
	if (blitz_parallel_for(0, ISO_LOOP, 4, iso_loop_fn, l))
		ret = -EINVAL;
	for (i = 0; i < ISO_LOOP; i++) {
		if (atomic_read(&l->runs[i]) != 1) {
			pr_err("index %d ran %d times\n", i,
			       atomic_read(&l->runs[i]));
			ret = -EINVAL;
			break;
		}
	}

	blitz_join(fibw_join, &a, fibw_join, &b);
	f.result = a.result + b.result;
	ret = fibw_check(&f, 1, "blitz_join") ?: ret;

	atomic_long_set(&nodes, 0);
	f.result = 0;
	if (blitz_call(t->pool, fibw_join, &f))
		ret = -EINVAL;
	ret = fibw_check(&f, 0, "blitz_call") ?: ret;

	ret = group_where(NULL, w, ISO_GROUP) ?: ret;
	ret = group_where(t->pool, w, ISO_GROUP) ?: ret;
	kfree(l);
	return ret;
}

/*
 * Jobs, loop ranges, join halves and group jobs run only on the
 * housekeeping CPUs, those of unbound work (HK_TYPE_WQ & HK_TYPE_DOMAIN),
 * in the default pool and in a pool of attrs {}: jobs submitted on every
 * CPU, from a task and from hardirq, and fork-join started on the CPUs
 * outside (or on the last CPU, when every CPU keeps house). Without
 * isolated CPUs it tests nothing but the counts, so it is not in "all":
 * selftests/isolated.sh runs it in a guest booted with isolcpus= and
 * nohz_full=.
 */
static int test_isolated(void)
{
	struct iso *t = kzalloc(sizeof(*t), GFP_KERNEL);
	cpumask_var_t hk, outside;
	unsigned int cpu;
	int ret, r, p;

	if (!t)
		return -ENOMEM;
	if (!zalloc_cpumask_var(&hk, GFP_KERNEL) ||
	    !zalloc_cpumask_var(&outside, GFP_KERNEL)) {
		ret = -ENOMEM;
		goto out_mask;
	}
	hk_cpus(hk);
	cpumask_andnot(outside, cpu_online_mask, hk);
	pr_info("isolated: housekeeping CPUs %*pbl, online %*pbl\n",
		cpumask_pr_args(hk), cpumask_pr_args(cpu_online_mask));
	if (cpumask_empty(outside))
		cpumask_set_cpu(cpumask_last(cpu_online_mask), outside);

	t->pool = blitz_pool_create_attrs("selftest-isolated",
					  &(struct blitz_pool_attrs){});
	t->cpus = kcalloc(nr_cpu_ids, sizeof(*t->cpus), GFP_KERNEL);
	ret = IS_ERR(t->pool) ? PTR_ERR(t->pool) : t->cpus ? 0 : -ENOMEM;
	ret = ret ?: where_init(&t->where, hk);
	ret = ret ?: counted_init(&t->c[0], NULL, nr_cpu_ids * 2 * ISO_RANGE);
	ret = ret ?: counted_init(&t->c[1], t->pool,
				  nr_cpu_ids * 2 * ISO_RANGE);
	if (ret)
		goto out;
	for (p = 0; p < 2; p++)
		t->c[p].where = &t->where;
	for_each_possible_cpu(cpu)
		t->cpus[cpu] = (struct iso_cpu){ .t = t, .cpu = cpu };

	ret = on_cpus(cpu_online_mask, iso_submit_fn, t);
	for (p = 0; p < 2; p++) {
		r = counted_wait(&t->c[p]) ?: counted_check(&t->c[p]);
		ret = ret ?: r;
	}
	for_each_online_cpu(cpu) {
		struct iso_cpu *s = &t->cpus[cpu];

		pr_info("isolated: CPU %u submitted %ld jobs from a task, %ld from hardirq\n",
			cpu, s->from_task, s->from_irq);
		if (s->wrong_cpu || s->not_hardirq || !s->from_task ||
		    !s->from_irq) {
			pr_err("CPU %u: wrong CPU %d, not hardirq %d\n", cpu,
			       s->wrong_cpu, s->not_hardirq);
			ret = -EINVAL;
		}
	}

	pr_info("isolated: loop, joins and groups from CPUs %*pbl\n",
		cpumask_pr_args(outside));
	ret = on_cpus(outside, iso_fork_fn, t) ?: ret;
	ret = where_check(&t->where, "isolated") ?: ret;
out:
	counted_free(&t->c[1]);
	counted_free(&t->c[0]);
	where_free(&t->where);
	if (!IS_ERR_OR_NULL(t->pool))
		blitz_pool_destroy(t->pool);
	kfree(t->cpus);
out_mask:
	free_cpumask_var(outside);
	free_cpumask_var(hk);
	kfree(t);
	return ret;
}

/* === Pool attributes === */

#define ATTRS_JOBS	2000
#define HP_CYCLES	4
#define HP_WINDOW	500	/* jobs run in each offline and online window */

/* In a pool of one worker: the second job runs on a spare. */
struct spare_probe {
	struct blitz_job first, second;
	struct completion signal, done;
	struct where *w;
	bool timed_out;
};

static void spare_first(struct blitz_job *job)
{
	struct spare_probe *sp = container_of(job, struct spare_probe, first);

	where_note(sp->w, "job");
	sp->timed_out = !wait_for_completion_timeout(&sp->signal, 10 * HZ);
	complete(&sp->done);
}

static void spare_second(struct blitz_job *job)
{
	struct spare_probe *sp = container_of(job, struct spare_probe, second);

	where_note(sp->w, "spare's job");
	complete(&sp->signal);
}

/*
 * In @pool: ATTRS_JOBS counted jobs from here, a job that runs while the
 * first sleeps (on a spare, with one worker), and fib with a join at every
 * node through blitz_call(); all of them as @w wants.
 */
static int attrs_run(struct blitz_pool *pool, struct where *w,
		     const char *name)
{
	struct spare_probe sp = { .w = w };
	atomic_long_t nodes = ATOMIC_LONG_INIT(0);
	struct fibw f = { w, &nodes, 16 };
	struct counted c;
	unsigned int i;
	int ret;

	ret = counted_init(&c, pool, ATTRS_JOBS);
	if (ret)
		return ret;
	c.where = w;
	for (i = 0; i < ATTRS_JOBS; i++)
		counted_submit(&c, i);
	ret = counted_wait(&c) ?: counted_check(&c);
	counted_free(&c);

	blitz_job_init(&sp.first, spare_first);
	blitz_job_init(&sp.second, spare_second);
	init_completion(&sp.signal);
	init_completion(&sp.done);
	if (blitz_submit(pool, &sp.first))
		return -EINVAL;
	if (blitz_submit(pool, &sp.second)) {
		ret = -EINVAL;
		complete(&sp.signal);
	}
	wait_for_completion(&sp.done);
	if (sp.timed_out) {
		pr_err("%s: a job waited 10 s for the next\n", name);
		ret = -ETIMEDOUT;
	}

	if (blitz_call(pool, fibw_join, &f))
		ret = -EINVAL;
	ret = fibw_check(&f, 0, name) ?: ret;
	return where_check(w, name) ?: ret;
}

/* Each bad attribute set is refused with -EINVAL. */
static int attrs_refused(const char *what,
			 const struct blitz_pool_attrs *attrs)
{
	struct blitz_pool *pool = blitz_pool_create_attrs("selftest-bad", attrs);

	if (PTR_ERR(pool) == -EINVAL)
		return 0;
	pr_err("attrs with %s: %ld, not -EINVAL\n", what,
	       IS_ERR(pool) ? PTR_ERR(pool) : 0);
	if (!IS_ERR(pool))
		blitz_pool_destroy(pool);
	return -EINVAL;
}

struct hp_load {
	struct counted c[2];	/* the one-CPU pool's, the default pool's */
	bool stop;
	struct completion done;
};

static int hp_loader(void *arg)
{
	struct hp_load *l = arg;
	unsigned int i = 0;
	int p;

	while (!READ_ONCE(l->stop)) {
		/* -EBUSY: that one is still queued; on to the next. */
		for (p = 0; p < 2; p++)
			counted_submit(&l->c[p],
				       get_random_u32_below(l->c[p].nr));
		if (!(++i % 64))
			cond_resched();
	}
	complete(&l->done);
	while (!kthread_should_stop())
		schedule_timeout_idle(HZ);
	return 0;
}

/* Wait until @n more jobs of @c ran than @from; -ETIMEDOUT after 10 s. */
static int hp_window(struct counted *c, long from, long n, const char *when)
{
	if (wait_var_event_timeout(&c->executed,
				   atomic_long_read(&c->executed) >= from + n,
				   10 * HZ))
		return 0;
	pr_err("%ld of %ld jobs ran in 10 s %s\n",
	       atomic_long_read(&c->executed) - from, n, when);
	return -ETIMEDOUT;
}

/*
 * A pool whose cpumask is hotplug_cpu alone, under a steady load of
 * counted jobs from a kthread (and the default pool's besides), while
 * that CPU goes offline and online HP_CYCLES times; each window lasts
 * until HP_WINDOW jobs of the pool ran in it. Every job runs once; while
 * the CPU is online, the pool's jobs run only there (offline, its worker
 * runs on the housekeeping CPUs); the default pool's run there
 * throughout. Offline, a pool on that CPU alone is refused.
 */
static int attrs_cpu_hotplug(void)
{
	unsigned int cpu = hotplug_cpu;
	struct task_struct *loader;
	struct where w = {}, dw = {};
	struct blitz_pool *pool;
	atomic_t hotplug = ATOMIC_INIT(0);
	struct hp_load *l;
	cpumask_var_t hk, moved;
	int ret, r, i, p;

	if (cpu == 0 || cpu >= nr_cpu_ids || !cpu_online(cpu)) {
		pr_err("attrs_hotplug: CPU %u is not online, or is 0\n", cpu);
		return -ENODEV;
	}
	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l || !zalloc_cpumask_var(&hk, GFP_KERNEL)) {
		kfree(l);
		return -ENOMEM;
	}
	if (!zalloc_cpumask_var(&moved, GFP_KERNEL)) {
		free_cpumask_var(hk);
		kfree(l);
		return -ENOMEM;
	}
	hk_cpus(hk);
	cpumask_or(moved, hk, cpumask_of(cpu));
	pool = blitz_pool_create_attrs("selftest-hotplug",
				       &(struct blitz_pool_attrs){
					       .cpumask = cpumask_of(cpu) });
	ret = PTR_ERR_OR_ZERO(pool);
	ret = ret ?: where_init(&w, cpumask_of(cpu));
	ret = ret ?: where_init(&dw, hk);
	ret = ret ?: counted_init(&l->c[0], pool, 4096);
	ret = ret ?: counted_init(&l->c[1], NULL, 4096);
	if (ret)
		goto out;
	w.hotplug = &hotplug;
	w.moved = moved;
	l->c[0].where = &w;
	l->c[1].where = &dw;
	init_completion(&l->done);
	loader = kthread_run(hp_loader, l, "blitz_hp_load");
	if (IS_ERR(loader)) {
		ret = PTR_ERR(loader);
		goto out;
	}

	ret = hp_window(&l->c[0], 0, HP_WINDOW, "before the hotplug");
	for (i = 0; i < HP_CYCLES && !ret; i++) {
		/* Odd: the pool's jobs may run on the housekeeping CPUs. */
		atomic_inc_return(&hotplug);
		ret = remove_cpu(cpu);
		if (ret) {
			pr_err("CPU %u did not go offline: %d\n", cpu, ret);
			break;
		}
		if (!i)
			ret = attrs_refused("an offline CPU alone",
					    &(struct blitz_pool_attrs){
						    .cpumask = cpumask_of(cpu) });
		r = hp_window(&l->c[0], atomic_long_read(&l->c[0].executed),
			      HP_WINDOW, "with their CPU offline");
		ret = ret ?: r;
		r = add_cpu(cpu);
		if (r) {
			pr_err("CPU %u did not come back: %d\n", cpu, r);
			ret = ret ?: r;
			break;
		}
		/* Even: back home, only there. */
		atomic_inc_return(&hotplug);
		r = hp_window(&l->c[0], atomic_long_read(&l->c[0].executed),
			      HP_WINDOW, "with their CPU back");
		ret = ret ?: r;
	}
	WRITE_ONCE(l->stop, true);
	wait_for_completion(&l->done);
	kthread_stop(loader);
	for (p = 0; p < 2; p++) {
		r = counted_wait(&l->c[p]) ?: counted_check(&l->c[p]);
		ret = ret ?: r;
	}
	pr_info("attrs_hotplug: %d cycles of CPU %u, %ld + %ld jobs\n", i, cpu,
		atomic_long_read(&l->c[0].executed),
		atomic_long_read(&l->c[1].executed));
	ret = where_check(&w, "attrs_hotplug pool") ?: ret;
	ret = where_check(&dw, "attrs_hotplug default pool") ?: ret;
out:
	counted_free(&l->c[1]);
	counted_free(&l->c[0]);
	where_free(&dw);
	where_free(&w);
	if (!IS_ERR(pool))
		blitz_pool_destroy(pool);
	free_cpumask_var(moved);
	free_cpumask_var(hk);
	kfree(l);
	return ret;
}

/*
 * Pool attributes end to end: the bad sets refused with -EINVAL; a pool
 * of nice 7 runs its jobs, a spare's and its join halves at nice 7; a pool
 * on CPU 0 alone runs them all there; then attrs_cpu_hotplug() above. It takes
 * a CPU offline, so it runs only when named (selftests/isolated.sh).
 */
static int test_attrs_hotplug(void)
{
	const struct {
		const char *name;
		struct blitz_pool_attrs attrs;
		bool nice;
	} good[] = {
		{ "nice 7", { .nr_workers = 1, .nice = 7 }, true },
		{ "CPU 0", { .cpumask = cpumask_of(0) } },
	};
	const struct blitz_pool_attrs *attrs;
	struct blitz_pool *pool;
	struct where w;
	int ret, i;

	ret = attrs_refused("NULL attrs", NULL);
	ret = attrs_refused("nice -21",
			    &(struct blitz_pool_attrs){ .nice = -21 }) ?: ret;
	ret = attrs_refused("nice 20",
			    &(struct blitz_pool_attrs){ .nice = 20 }) ?: ret;
	ret = attrs_refused("an empty cpumask",
			    &(struct blitz_pool_attrs){
				    .cpumask = cpu_none_mask }) ?: ret;
	ret = attrs_refused("flags BIT(5)",
			    &(struct blitz_pool_attrs){ .flags = BIT(5) }) ?: ret;

	for (i = 0; i < ARRAY_SIZE(good); i++) {
		attrs = &good[i].attrs;
		pool = blitz_pool_create_attrs("selftest-attrs", attrs);
		if (IS_ERR(pool)) {
			pr_err("%s: %ld\n", good[i].name, PTR_ERR(pool));
			return PTR_ERR(pool);
		}
		if (where_init(&w, attrs->cpumask ?: cpu_possible_mask)) {
			blitz_pool_destroy(pool);
			return -ENOMEM;
		}
		w.check_nice = good[i].nice;
		w.nice = attrs->nice;
		ret = attrs_run(pool, &w, good[i].name) ?: ret;
		where_free(&w);
		blitz_pool_destroy(pool);
	}
	return attrs_cpu_hotplug() ?: ret;
}

static const struct {
	const char *name;
	int (*fn)(void);
	bool not_in_all;	/* run only when named */
} blitz_tests[] = {
	{ "errors", test_errors },
	{ "busy_shutdown", test_busy_shutdown },
	{ "load", test_load },
	{ "from_jobs", test_from_jobs },
	{ "irq", test_irq },
	{ "destroy_load", test_destroy_load },
	{ "fib", test_fib },
	{ "join_stolen", test_join_stolen },
	{ "parallel_for", test_parallel_for, true },
	{ "group", test_group },
	{ "sleep_later", test_sleep_later },
	{ "sleep_blocked", test_sleep_blocked },
	{ "probe_n1", test_probe_n1 },
	{ "probe_n2", test_probe_n2 },
	{ "probe_n3", test_probe_n3 },
	{ "reduce", test_reduce },
	{ "sort", test_sort },
	{ "isolated", test_isolated, true },
	{ "attrs_hotplug", test_attrs_hotplug, true },
	{ "sleep_hotplug", test_sleep_hotplug, true },
	{ "sleep_away", test_sleep_away, true },
};

static bool selected(const char *name, bool not_in_all)
{
	const char *p = tests;
	size_t len = strlen(name);

	if (!strcmp(tests, "all"))
		return !not_in_all;
	while ((p = strstr(p, name))) {
		if ((p == tests || p[-1] == ',') && (!p[len] || p[len] == ','))
			return true;
		p += len;
	}
	return false;
}

/*
 * kselftest_module.h's loaders run selftest() at load, count through its
 * globals, report with kstm_report() and fail the load if any test failed.
 */
KSTM_MODULE_GLOBALS();

static void __init selftest(void)
{
	int i, ret;

	for (i = 0; i < ARRAY_SIZE(blitz_tests); i++) {
		if (!selected(blitz_tests[i].name, blitz_tests[i].not_in_all))
			continue;
		ret = blitz_tests[i].fn();
		total_tests++;
		if (ret) {
			failed_tests++;
			pr_err("not ok %u - %s (%d)\n", total_tests,
			       blitz_tests[i].name, ret);
		} else {
			pr_info("ok %u - %s\n", total_tests, blitz_tests[i].name);
		}
	}
	if (!total_tests) {
		total_tests++;
		failed_tests++;
		pr_err("not ok 1 - tests=%s selects no test\n", tests);
	}
}

KSTM_MODULE_LOADERS(blitz_selftest);

MODULE_DESCRIPTION("blitz end-to-end tests through the exported API");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
