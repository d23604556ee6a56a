// SPDX-License-Identifier: GPL-2.0
/*
 * Freezable pools (BLITZ_POOL_FREEZABLE) through the system freezer.
 * Loading the module runs three freeze cycles, each pm_suspend(
 * PM_SUSPEND_TO_IDLE), which is what "echo freeze > /sys/power/state"
 * does, stopped at the freezer by /sys/power/pm_test: tasks stay frozen
 * for pm_test_delay (blitz_freeze.sh sets 2 s), then thaw. Without
 * "freezer" selected there, the module skips its tests rather than
 * suspend the machine. It prints one TAP line per test and fails the
 * load if any failed (kselftest_module.h); selftests/blitz_freeze.sh
 * loads it.
 *
 * Where the workers of a freezable pool are frozen is known exactly: the
 * suspend_resume tracepoint fires as freeze_processes ends (every
 * freezable task, kernel threads included, is frozen then, if the
 * freezer is still on) and as thaw_processes begins (none thawed yet).
 * No job of such a pool may start between the two; the PM notifier's
 * PM_SUSPEND_PREPARE and PM_POST_SUSPEND bound that window, and are
 * checked too. Every job is counted and must run exactly once.
 *
 * - load: a kthread (not freezable) submits to a freezable pool and to
 *   the default pool every 2-3 ms, an hrtimer submits to the freezable
 *   pool from hard interrupt context every 2 ms. The freezable pool
 *   starts nothing while frozen and runs what was submitted meanwhile
 *   after the thaw; the default pool keeps running. During the freeze,
 *   a kthread destroys another freezable pool, with jobs queued: destroy
 *   returns only after the thaw, with every job run.
 * - busy: every worker of a freezable pool is in a job when the freezer
 *   comes; the jobs end when they see it, and the jobs queued behind
 *   them start only after the thaw.
 * - idle: a freezable one-worker pool idle, with a parked spare (a job
 *   that blocked made it): the freeze succeeds, worker and spare are
 *   frozen, jobs submitted during the freeze run after the thaw.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched/signal.h>
#include <linux/sort.h>
#include <linux/suspend.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <trace/events/power.h>

#include "kselftest_module.h"
#include "pm_test.h"

static unsigned int min_frozen_ms = 1500;
module_param(min_frozen_ms, uint, 0444);
MODULE_PARM_DESC(min_frozen_ms,
		 "shortest freeze accepted, in ms (default 1500, for a pm_test_delay of 2 s)");

static unsigned int max_gap_ms = 1000;
module_param(max_gap_ms, uint, 0444);
MODULE_PARM_DESC(max_gap_ms,
		 "longest the default pool may start no job during the freeze (default 1000)");

#define FRZ_WAIT	(60 * HZ)	/* for jobs that should run at once */

/* === One freeze cycle === */

/*
 * The times of one pm_suspend(): PM_SUSPEND_PREPARE, the end of the
 * freezing (every freezable task frozen), the start of the thaw, and
 * PM_POST_SUSPEND. Written by the notifier and the tracepoint probe in
 * the suspending task, read once the cycle is over (or, for frozen and
 * thaw, by the kthread that @frozen_done and the thaw's wake-ups order).
 */
struct frz_cycle {
	ktime_t prepare, frozen, thaw, post;
	int ret;
	bool active;
	struct completion frozen_done, during_done;
	void (*during)(void *arg);
	void *arg;
};

static struct frz_cycle frz_cyc;

static void frz_probe(void *data, const char *action, int val, bool start)
{
	struct frz_cycle *c = &frz_cyc;

	if (!READ_ONCE(c->active))
		return;
	if (!start && !strcmp(action, "freeze_processes") && !c->frozen) {
		/*
		 * A freeze that failed has begun the thaw by now: the
		 * freezer's key cannot tell, a test harness may hold it on.
		 */
		if (!c->thaw)
			c->frozen = ktime_get();
		complete(&c->frozen_done);
	} else if (start && !strcmp(action, "thaw_processes") && !c->thaw) {
		c->thaw = ktime_get();
	}
}

static int frz_pm_notify(struct notifier_block *nb, unsigned long action,
			 void *data)
{
	struct frz_cycle *c = &frz_cyc;

	if (!READ_ONCE(c->active))
		return NOTIFY_DONE;
	if (action == PM_SUSPEND_PREPARE && !c->prepare)
		c->prepare = ktime_get();
	else if (action == PM_POST_SUSPEND && !c->post)
		c->post = ktime_get();
	return NOTIFY_DONE;
}

static struct notifier_block frz_pm_nb = {
	.notifier_call = frz_pm_notify,
};

/* Not freezable (kthreads are not, unless they ask): runs c->during. */
static int frz_during_fn(void *arg)
{
	struct frz_cycle *c = arg;

	wait_for_completion(&c->frozen_done);
	/* Freezing failed, or never began: the cycle's check reports it. */
	if (c->frozen && !READ_ONCE(c->thaw) && c->during)
		c->during(c->arg);
	complete(&c->during_done);
	return 0;
}

static bool frz_in_window(ktime_t t)
{
	return ktime_compare(t, frz_cyc.frozen) >= 0 &&
	       ktime_compare(t, frz_cyc.thaw) <= 0;
}

static s64 frz_ms(ktime_t from, ktime_t to)
{
	return ktime_ms_delta(to, from);
}

/*
 * Run one freeze cycle from this (the insmod) task, as the write to
 * /sys/power/state would; @during runs in a kthread once every freezable
 * task is frozen, and may outlast the freeze.
 */
static void frz_run_cycle(void (*during)(void *arg), void *arg)
{
	struct frz_cycle *c = &frz_cyc;
	struct task_struct *t;

	init_completion(&c->frozen_done);
	init_completion(&c->during_done);
	c->during = during;
	c->arg = arg;
	t = kthread_run(frz_during_fn, c, "blitz_frz_during");
	if (IS_ERR(t)) {
		c->ret = PTR_ERR(t);
		return;
	}
	WRITE_ONCE(c->active, true);
	c->ret = pm_suspend(PM_SUSPEND_TO_IDLE);
	WRITE_ONCE(c->active, false);
	complete(&c->frozen_done);	/* if the freezing never began */
	wait_for_completion(&c->during_done);
}

/* Forget the last cycle: jobs of the next may look at its times. */
static void frz_cycle_reset(void)
{
	memset(&frz_cyc, 0, sizeof(frz_cyc));
}

/* Whether the cycle froze and thawed in order, long enough. */
static bool frz_cycle_ok(const char *name)
{
	struct frz_cycle *c = &frz_cyc;
	bool ok = !c->ret && c->prepare && c->frozen && c->thaw && c->post &&
		  ktime_compare(c->prepare, c->frozen) <= 0 &&
		  ktime_compare(c->frozen, c->thaw) < 0 &&
		  ktime_compare(c->thaw, c->post) <= 0 &&
		  frz_ms(c->frozen, c->thaw) >= min_frozen_ms;

	pr_info("%s: pm_suspend() %d; frozen %lld ms after PM_SUSPEND_PREPARE, for %lld ms; PM_POST_SUSPEND %lld ms after the thaw began\n",
		name, c->ret, frz_ms(c->prepare, c->frozen),
		frz_ms(c->frozen, c->thaw), frz_ms(c->thaw, c->post));
	if (!ok)
		pr_err("%s: the freeze cycle failed, or was shorter than %u ms\n",
		       name, min_frozen_ms);
	return ok;
}

/* The threads whose name starts with a prefix: how many, in what state. */
struct frz_threads {
	unsigned int nr, frozen, asleep;
};

static void frz_count_threads(const char *prefix, struct frz_threads *t)
{
	struct task_struct *g, *p;
	size_t len = strlen(prefix);
	unsigned int state;

	memset(t, 0, sizeof(*t));
	rcu_read_lock();
	for_each_process_thread(g, p) {
		if (!(p->flags & PF_KTHREAD) || strncmp(p->comm, prefix, len))
			continue;
		t->nr++;
		state = READ_ONCE(p->__state);
		/* frozen() itself is not exported before 6.13. */
		if (state & TASK_FROZEN)
			t->frozen++;
		if (state != TASK_RUNNING)
			t->asleep++;
	}
	rcu_read_unlock();
}

/* === Counted jobs === */

struct frz_job {
	struct blitz_job job;
	struct frz_src *src;
	ktime_t submitted, started;
	atomic_t runs;
	bool accepted;
	bool saw_freezing;
};

/* One submitter's jobs into one pool, each used once. */
struct frz_src {
	const char *name;
	struct blitz_pool *pool;	/* NULL: the default pool */
	void (*body)(struct frz_job *j);
	struct frz_job *jobs;
	unsigned int nr, used, refused, short_of;
	atomic_t accepted, started, ran;
};

static void frz_job_fn(struct blitz_job *job)
{
	struct frz_job *j = container_of(job, struct frz_job, job);
	struct frz_src *src = j->src;

	if (atomic_inc_return(&j->runs) == 1)
		j->started = ktime_get();
	atomic_inc(&src->started);
	wake_up_var(&src->started);
	if (src->body)
		src->body(j);
	/* Last: once counted, the test may free the jobs. */
	atomic_inc(&src->ran);
	wake_up_var(&src->ran);
}

static int frz_src_init(struct frz_src *src, const char *name,
			struct blitz_pool *pool, unsigned int nr,
			void (*body)(struct frz_job *j))
{
	unsigned int i;

	memset(src, 0, sizeof(*src));
	src->name = name;
	src->pool = pool;
	src->body = body;
	src->nr = nr;
	src->jobs = vcalloc(nr, sizeof(*src->jobs));
	if (!src->jobs)
		return -ENOMEM;
	for (i = 0; i < nr; i++) {
		blitz_job_init(&src->jobs[i].job, frz_job_fn);
		src->jobs[i].src = src;
	}
	return 0;
}

static void frz_src_free(struct frz_src *src)
{
	vfree(src->jobs);
	src->jobs = NULL;
}

/* Submit the next unused job of @src: any context, one submitter. */
static void frz_src_submit(struct frz_src *src)
{
	struct frz_job *j;

	if (src->used == src->nr) {
		src->short_of++;
		return;
	}
	j = &src->jobs[src->used++];
	j->submitted = ktime_get();
	j->accepted = true;
	if (blitz_submit(src->pool, &j->job)) {
		j->accepted = false;
		src->refused++;
		return;
	}
	atomic_inc(&src->accepted);
}

/* Wait until every accepted job of @src ran; false after FRZ_WAIT. */
static bool frz_src_wait(struct frz_src *src)
{
	if (wait_var_event_timeout(&src->ran, atomic_read(&src->ran) >=
				   atomic_read(&src->accepted), FRZ_WAIT))
		return true;
	pr_err("%s: %d jobs accepted, %d ran\n", src->name,
	       atomic_read(&src->accepted), atomic_read(&src->ran));
	return false;
}

/*
 * Every job of @src accepted ran exactly once, none refused, none
 * unaccepted ran. With @frozen_pool, no job started while the pool was
 * frozen, and those submitted since the freeze began started after the
 * thaw. Returns how many were submitted during the freeze; -1 on error.
 */
static int frz_src_check(struct frz_src *src, bool frozen_pool)
{
	unsigned int i, during = 0, bad_runs = 0, in_window = 0, early = 0;
	ktime_t last_before = 0, first_after = 0;

	for (i = 0; i < src->nr; i++) {
		struct frz_job *j = &src->jobs[i];
		int runs = atomic_read(&j->runs);

		if (runs != (j->accepted ? 1 : 0)) {
			if (!bad_runs++)
				pr_err("%s: job %u accepted %d ran %d times\n",
				       src->name, i, j->accepted, runs);
			continue;
		}
		if (!runs)
			continue;
		if (ktime_compare(j->submitted, frz_cyc.frozen) >= 0 &&
		    ktime_compare(j->submitted, frz_cyc.thaw) < 0) {
			during++;
			if (frozen_pool &&
			    ktime_compare(j->started, frz_cyc.thaw) <= 0)
				early++;
		}
		if (!frozen_pool)
			continue;
		if (frz_in_window(j->started)) {
			if (!in_window++)
				pr_err("%s: job %u started %lld ms into the freeze\n",
				       src->name, i,
				       frz_ms(frz_cyc.frozen, j->started));
		} else if (ktime_before(j->started, frz_cyc.frozen)) {
			if (ktime_after(j->started, last_before))
				last_before = j->started;
		} else if (!first_after || ktime_before(j->started, first_after)) {
			first_after = j->started;
		}
	}
	pr_info("%s: %u used, %d accepted, %u refused, %d ran, %u submitted during the freeze\n",
		src->name, src->used, atomic_read(&src->accepted),
		src->refused, atomic_read(&src->ran), during);
	if (frozen_pool && last_before && first_after)
		pr_info("%s: no job started for %lld ms, from %lld ms before the freeze to %lld ms after the thaw\n",
			src->name, frz_ms(last_before, first_after),
			frz_ms(last_before, frz_cyc.frozen),
			frz_ms(frz_cyc.thaw, first_after));
	if (in_window || early)
		pr_err("%s: %u jobs started while frozen; %u submitted during the freeze started before the thaw\n",
		       src->name, in_window, early);
	if (src->refused || src->short_of)
		pr_err("%s: %u refused, %u not submitted for want of jobs\n",
		       src->name, src->refused, src->short_of);
	if (bad_runs || in_window || early || src->refused || src->short_of)
		return -1;
	return during;
}

/* === TAP === */

KSTM_MODULE_GLOBALS();

static void __init frz_report(bool ok, const char *what)
{
	total_tests++;
	if (ok) {
		pr_info("ok %u - %s\n", total_tests, what);
	} else {
		failed_tests++;
		pr_err("not ok %u - %s\n", total_tests, what);
	}
}

static void __init frz_skip(const char *what, const char *why)
{
	total_tests++;
	skipped_tests++;
	pr_info("ok %u - %s # SKIP %s\n", total_tests, what, why);
}

/* === load: submitters through the freeze, and a destroy during it === */

struct frz_load {
	struct frz_src kt, def, irq, dst;
	struct blitz_pool *doomed;
	struct hrtimer hrtimer;
	bool stop;
	/* From the kthread that runs during the freeze. */
	struct frz_threads frz_threads, frzd_threads, def_threads;
	ktime_t destroy_called, destroy_returned;
	int ran_at_return;
};

static int frz_load_fn(void *arg)
{
	struct frz_load *l = arg;

	while (!kthread_should_stop()) {
		frz_src_submit(&l->kt);
		frz_src_submit(&l->def);
		usleep_range(2000, 3000);
	}
	return 0;
}

static enum hrtimer_restart frz_load_hrtimer(struct hrtimer *t)
{
	struct frz_load *l = container_of(t, struct frz_load, hrtimer);

	if (READ_ONCE(l->stop))
		return HRTIMER_NORESTART;
	frz_src_submit(&l->irq);
	hrtimer_forward_now(t, ms_to_ktime(2));
	return HRTIMER_RESTART;
}

/* Once frozen: who is frozen, then destroy the doomed pool, jobs queued. */
static void frz_load_during(void *arg)
{
	struct frz_load *l = arg;
	unsigned int i;

	frz_count_threads("blitz/frz/", &l->frz_threads);
	frz_count_threads("blitz/frzd/", &l->frzd_threads);
	frz_count_threads("blitz/default/", &l->def_threads);
	for (i = 0; i < l->dst.nr; i++)
		frz_src_submit(&l->dst);
	l->destroy_called = ktime_get();
	blitz_pool_destroy(l->doomed);
	l->doomed = NULL;
	l->destroy_returned = ktime_get();
	l->ran_at_return = atomic_read(&l->dst.ran);
}

/* The default pool's job starts during the freeze, sorted, and the gaps. */
static int frz_cmp_ktime(const void *a, const void *b)
{
	return ktime_compare(*(const ktime_t *)a, *(const ktime_t *)b);
}

static bool __init frz_default_ran(struct frz_src *def)
{
	unsigned int i, n = 0;
	s64 gap, max_gap = 0, window = frz_ms(frz_cyc.frozen, frz_cyc.thaw);
	ktime_t *t, prev = frz_cyc.frozen;

	t = kvmalloc_array(def->used + 1, sizeof(*t), GFP_KERNEL);
	if (!t)
		return false;
	for (i = 0; i < def->used; i++)
		if (atomic_read(&def->jobs[i].runs) &&
		    frz_in_window(def->jobs[i].started))
			t[n++] = def->jobs[i].started;
	sort(t, n, sizeof(*t), frz_cmp_ktime, NULL);
	t[n] = frz_cyc.thaw;
	for (i = 0; i <= n; i++) {
		gap = frz_ms(prev, t[i]);
		max_gap = max(max_gap, gap);
		prev = t[i];
	}
	kvfree(t);
	pr_info("default: %u jobs started during the %lld ms freeze, at most %lld ms apart\n",
		n, window, max_gap);
	/* At least one per 100 ms on average, no pause over max_gap_ms. */
	return n >= window / 100 && max_gap <= max_gap_ms;
}

static void frz_load_free(struct frz_load *l)
{
	/* NULL and error pointers are ignored. */
	blitz_pool_destroy(l->doomed);
	frz_src_free(&l->kt);
	frz_src_free(&l->irq);
	frz_src_free(&l->def);
	frz_src_free(&l->dst);
	kfree(l);
}

static void __init test_load(void)
{
	const struct blitz_pool_attrs frz_attrs = {
		.flags = BLITZ_POOL_FREEZABLE,
	};
	const struct blitz_pool_attrs doomed_attrs = {
		.nr_workers = 2,
		.flags = BLITZ_POOL_FREEZABLE,
	};
	struct task_struct *loader;
	struct blitz_pool *frz;
	struct frz_load *l;
	int kt, irq, dst, def;
	bool cycle, waited;
	s64 window;

	l = kzalloc(sizeof(*l), GFP_KERNEL);
	if (!l) {
		frz_report(false, "load: setup failed");
		return;
	}
	frz = blitz_pool_create_attrs("frz", &frz_attrs);
	l->doomed = blitz_pool_create_attrs("frzd", &doomed_attrs);
	if (IS_ERR(frz) || IS_ERR(l->doomed) ||
	    frz_src_init(&l->kt, "frz from a kthread", frz, 16384, NULL) ||
	    frz_src_init(&l->irq, "frz from hardirq", frz, 16384, NULL) ||
	    frz_src_init(&l->def, "default", NULL, 16384, NULL) ||
	    frz_src_init(&l->dst, "frzd, destroyed frozen", l->doomed, 64,
			 NULL)) {
		pr_err("load: pools %ld %ld, or no memory\n", PTR_ERR(frz),
		       PTR_ERR(l->doomed));
		goto fail;
	}
	loader = kthread_run(frz_load_fn, l, "blitz_frz_load");
	if (IS_ERR(loader))
		goto fail;
	hrtimer_init(&l->hrtimer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	l->hrtimer.function = frz_load_hrtimer;
	hrtimer_start(&l->hrtimer, ms_to_ktime(2), HRTIMER_MODE_REL_HARD);

	/* The load runs for half a second before the freeze and after. */
	msleep(500);
	frz_run_cycle(frz_load_during, l);
	msleep(500);
	WRITE_ONCE(l->stop, true);
	hrtimer_cancel(&l->hrtimer);
	kthread_stop(loader);
	waited = frz_src_wait(&l->kt) & frz_src_wait(&l->irq) &
		 frz_src_wait(&l->def) & frz_src_wait(&l->dst);
	blitz_pool_destroy(frz);

	cycle = frz_cycle_ok("load");
	frz_report(cycle, "load: the freeze cycle (pm_suspend() returned 0, frozen long enough)");
	if (!cycle) {
		frz_report(false, "load: skipped, the cycle failed");
		frz_load_free(l);
		return;
	}
	window = frz_ms(frz_cyc.frozen, frz_cyc.thaw);

	pr_info("load: during the freeze, %u of %u threads of frz frozen, %u of %u of frzd, %u of %u of the default pool\n",
		l->frz_threads.frozen, l->frz_threads.nr,
		l->frzd_threads.frozen, l->frzd_threads.nr,
		l->def_threads.frozen, l->def_threads.nr);
	frz_report(l->frz_threads.nr &&
		   l->frz_threads.frozen == l->frz_threads.nr &&
		   l->frzd_threads.nr >= 2 &&
		   l->frzd_threads.frozen == l->frzd_threads.nr &&
		   l->def_threads.nr && !l->def_threads.frozen,
		   "load: the freezable pools' workers frozen, the default pool's not");

	kt = frz_src_check(&l->kt, true);
	irq = frz_src_check(&l->irq, true);
	frz_report(waited && kt >= window / 100 && irq >= window / 100,
		   "load: the freezable pool started no job while frozen; those submitted meanwhile (kthread, hardirq) ran after the thaw, each once");

	def = frz_src_check(&l->def, false);
	frz_report(def >= 0 && frz_default_ran(&l->def),
		   "load: the default pool ran jobs throughout the freeze, each once");

	dst = frz_src_check(&l->dst, true);
	pr_info("load: frzd's destroy called %lld ms into the freeze, returned %lld ms after the thaw began (%lld ms after PM_POST_SUSPEND), %d of %d jobs run\n",
		frz_ms(frz_cyc.frozen, l->destroy_called),
		frz_ms(frz_cyc.thaw, l->destroy_returned),
		frz_ms(frz_cyc.post, l->destroy_returned),
		l->ran_at_return, atomic_read(&l->dst.accepted));
	frz_report(dst == l->dst.nr && frz_in_window(l->destroy_called) &&
		   ktime_after(l->destroy_returned, frz_cyc.thaw) &&
		   l->ran_at_return == l->dst.nr,
		   "load: destroy of a frozen pool returned after the thaw, every job run");

	frz_load_free(l);
	return;

fail:
	blitz_pool_destroy(frz);
	frz_load_free(l);
	frz_report(false, "load: setup failed");
}

/* === busy: every worker in a job when the freezer comes === */

/*
 * A job that keeps its worker busy until the freezer asks the worker to
 * freeze, which only a freezable worker is asked: then it ends, and its
 * worker must freeze before its next job.
 */
static void frz_hold_body(struct frz_job *j)
{
	unsigned long deadline = jiffies + 30 * HZ;

	/* Not past the freeze: a worker that does not freeze misses it. */
	while (!freezing(current) && !READ_ONCE(frz_cyc.frozen) &&
	       time_before(jiffies, deadline))
		cond_resched();
	j->saw_freezing = freezing(current);
}

static void frz_busy_during(void *arg)
{
	frz_count_threads("blitz/frzb/", arg);
}

/* How many jobs of @src started before the thaw began. */
static unsigned int frz_started_before_thaw(struct frz_src *src)
{
	unsigned int i, n = 0;

	for (i = 0; i < src->used; i++)
		if (atomic_read(&src->jobs[i].runs) &&
		    ktime_compare(src->jobs[i].started, frz_cyc.thaw) <= 0)
			n++;
	return n;
}

static void __init test_busy(void)
{
	unsigned int nr = num_online_cpus(), i, saw = 0, early;
	struct frz_threads threads;
	const struct blitz_pool_attrs attrs = {
		.nr_workers = nr,
		.flags = BLITZ_POOL_FREEZABLE,
	};
	struct frz_src hold, queued;
	struct blitz_pool *pool;
	bool cycle, ok;
	int q;

	pool = blitz_pool_create_attrs("frzb", &attrs);
	if (IS_ERR(pool)) {
		pr_err("blitz_pool_create_attrs(frzb) returned %ld\n",
		       PTR_ERR(pool));
		frz_report(false, "busy: setup failed");
		return;
	}
	if (frz_src_init(&hold, "frzb, busy until the freezer", pool, nr,
			 frz_hold_body) ||
	    frz_src_init(&queued, "frzb, queued behind", pool, 4 * nr, NULL)) {
		frz_src_free(&hold);
		blitz_pool_destroy(pool);
		frz_report(false, "busy: setup failed");
		return;
	}
	for (i = 0; i < nr; i++)
		frz_src_submit(&hold);
	/* One hold job per worker: every worker is busy now. */
	ok = wait_var_event_timeout(&hold.started,
				    atomic_read(&hold.started) == nr, FRZ_WAIT);
	if (!ok)
		pr_err("busy: %d of %u hold jobs started\n",
		       atomic_read(&hold.started), nr);
	for (i = 0; i < queued.nr; i++)
		frz_src_submit(&queued);
	frz_run_cycle(frz_busy_during, &threads);
	ok &= frz_src_wait(&hold) & frz_src_wait(&queued);
	blitz_pool_destroy(pool);

	cycle = frz_cycle_ok("busy");
	frz_report(cycle, "busy: the freeze cycle, every worker in a job when it came");
	for (i = 0; i < nr; i++)
		saw += hold.jobs[i].saw_freezing;
	pr_info("busy: %u of %u hold jobs ended when the freezer came; %u of %u threads frozen\n",
		saw, nr, threads.frozen, threads.nr);
	q = frz_src_check(&queued, true);
	early = frz_started_before_thaw(&queued);
	pr_info("busy: %u of the %u jobs queued behind started before the thaw\n",
		early, queued.nr);
	frz_report(cycle && ok && saw == nr && frz_src_check(&hold, true) >= 0 &&
		   q == 0 && !early && threads.nr >= nr &&
		   threads.frozen == threads.nr,
		   "busy: the workers froze between jobs, the jobs queued behind ran after the thaw, each once");
	frz_src_free(&hold);
	frz_src_free(&queued);
}

/* === idle: an idle one-worker pool with a parked spare === */

struct frz_pair {
	struct blitz_job first, second;
	struct completion started, signal;
	bool signalled;
	atomic_t done;
};

/* Blocks until a job submitted after it runs: only a spare can run it. */
static void frz_pair_first(struct blitz_job *job)
{
	struct frz_pair *p = container_of(job, struct frz_pair, first);

	complete(&p->started);
	p->signalled = wait_for_completion_timeout(&p->signal, FRZ_WAIT);
	atomic_inc(&p->done);
}

static void frz_pair_second(struct blitz_job *job)
{
	struct frz_pair *p = container_of(job, struct frz_pair, second);

	complete(&p->signal);
	atomic_inc(&p->done);
}

struct frz_idle {
	struct frz_src late;
	struct frz_threads threads;
};

static void frz_idle_during(void *arg)
{
	struct frz_idle *d = arg;
	unsigned int i;

	frz_count_threads("blitz/frzs/", &d->threads);
	for (i = 0; i < d->late.nr; i++)
		frz_src_submit(&d->late);
}

static void __init test_idle(void)
{
	const struct blitz_pool_attrs attrs = {
		.nr_workers = 1,
		.flags = BLITZ_POOL_FREEZABLE,
	};
	struct frz_pair pair = {
		.first = BLITZ_JOB_INIT(frz_pair_first),
		.second = BLITZ_JOB_INIT(frz_pair_second),
	};
	struct frz_threads before = {};
	unsigned long deadline;
	struct blitz_pool *pool;
	struct frz_idle d = {};
	bool cycle, ok = true;
	int late;

	init_completion(&pair.started);
	init_completion(&pair.signal);
	pool = blitz_pool_create_attrs("frzs", &attrs);
	if (IS_ERR(pool)) {
		pr_err("blitz_pool_create_attrs(frzs) returned %ld\n",
		       PTR_ERR(pool));
		frz_report(false, "idle: setup failed");
		return;
	}
	if (frz_src_init(&d.late, "frzs, submitted frozen", pool, 16, NULL)) {
		blitz_pool_destroy(pool);
		frz_report(false, "idle: setup failed");
		return;
	}
	/* The first job blocks its worker; a spare runs the second. */
	if (blitz_submit(pool, &pair.first)) {
		ok = false;
	} else {
		wait_for_completion(&pair.started);
		if (blitz_submit(pool, &pair.second)) {
			ok = false;
			complete(&pair.signal);
		}
	}
	/*
	 * Both jobs done, the worker runs again, and the spare goes back to
	 * its parked list: wait, for up to 10 s, until both sleep.
	 */
	deadline = jiffies + 10 * HZ;
	while (ok && time_before(jiffies, deadline)) {
		if (atomic_read(&pair.done) == 2) {
			frz_count_threads("blitz/frzs/", &before);
			if (before.nr >= 2 && before.asleep == before.nr)
				break;
		}
		msleep(20);
	}
	pr_info("idle: the blocked job was signalled: %d; %u of %u threads asleep\n",
		pair.signalled, before.asleep, before.nr);
	ok &= before.nr >= 2 && before.asleep == before.nr;
	frz_run_cycle(frz_idle_during, &d);
	ok &= frz_src_wait(&d.late);
	blitz_pool_destroy(pool);

	cycle = frz_cycle_ok("idle");
	frz_report(cycle && ok && pair.signalled,
		   "idle: the freeze cycle, the worker and a spare asleep");
	pr_info("idle: %u of %u threads frozen (worker and spares)\n",
		d.threads.frozen, d.threads.nr);
	late = frz_src_check(&d.late, true);
	frz_report(cycle && d.threads.nr >= 2 &&
		   d.threads.frozen == d.threads.nr &&
		   late == d.late.nr,
		   "idle: worker and spare frozen; jobs submitted during the freeze ran after the thaw, each once");
	frz_src_free(&d.late);
}

/* === The run === */

static void __init selftest(void)
{
	int ret;

	if (!blitz_pm_test_selected("[freezer]")) {
		frz_skip("load, busy, idle",
			 "/sys/power/pm_test is missing or not set to freezer");
		return;
	}
	ret = register_trace_suspend_resume(frz_probe, NULL);
	if (ret) {
		pr_err("register_trace_suspend_resume() returned %d\n", ret);
		frz_report(false, "the suspend_resume tracepoint");
		return;
	}
	ret = register_pm_notifier(&frz_pm_nb);
	if (ret) {
		pr_err("register_pm_notifier() returned %d\n", ret);
		frz_report(false, "the PM notifier");
		goto out_trace;
	}
	frz_cycle_reset();
	test_load();
	frz_cycle_reset();
	test_busy();
	frz_cycle_reset();
	test_idle();
	unregister_pm_notifier(&frz_pm_nb);
out_trace:
	unregister_trace_suspend_resume(frz_probe, NULL);
	tracepoint_synchronize_unregister();
}

KSTM_MODULE_LOADERS(blitz_freeze);

MODULE_DESCRIPTION("blitz freezable pools through the system freezer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
