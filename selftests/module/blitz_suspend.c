// SPDX-License-Identifier: GPL-2.0
/*
 * A suspend that takes CPUs offline while a pool's manager stops a
 * reaped spare. The manager stops a spare left parked for spare_idle_ms
 * with kthread_stop(), holding the pool's manage_lock; a suspend freezes
 * tasks, then takes the secondary CPUs offline, and blitz's offline
 * callback takes manage_lock. Were the reaped spare frozen while it waits
 * to be stopped, the manager would wait for the thaw, the offlining for
 * the manager, and the thaw for the offlining.
 *
 * The test holds the manager there: its probe on blitz_spare_exit, which
 * the manager fires just before it stops the spare, spins until the
 * freezer is done (or has frozen the spare). Meanwhile this (the insmod)
 * task calls pm_suspend(PM_SUSPEND_MEM), stopped by /sys/power/pm_test
 * at "processors": the CPUs go offline for pm_test_delay and come back.
 * The suspend must return, the spare must not have been frozen, and it
 * must have exited. selftests/blitz_suspend.sh loads the module: it sets
 * pm_test, a short spare_idle_ms, and keeps unbound work items off CPU 0,
 * where it runs the insmod: the probe may not spin on the suspend's CPU.
 * On the deadlock, pm_suspend() does not return: the kernel's last words
 * are "Disabling non-boot CPUs ...".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/suspend.h>
#include <trace/events/blitz.h>
#include <trace/events/power.h>

#include "kselftest_module.h"
#include "pm_test.h"

#define SUS_POOL	"susp"
#define SUS_WAIT	(30 * HZ)	/* for what should happen at once */

/*
 * Set before the probes can run, or by them: the probes' writes are
 * read after complete(&held) and after pm_suspend() returns.
 */
static struct sus_state {
	struct task_struct *spare;	/* referenced */
	unsigned int spare_index;
	int suspend_cpu;
	bool armed;		/* the next stop of our spare is held */
	bool freeze_over;	/* freeze_processes() ended */
	int held_cpu;		/* where the manager was held */
	bool held_to_end;	/* held until the freezer was done */
	bool spare_frozen;	/* frozen as the hold ended */
	struct completion held;
} sus;

static bool sus_spare_frozen(void)
{
	/* frozen(), which 6.12 does not export. */
	return READ_ONCE(sus.spare->__state) & TASK_FROZEN;
}

static void sus_power_probe(void *data, const char *action, int val,
			    bool start)
{
	if (!start && !strcmp(action, "freeze_processes"))
		WRITE_ONCE(sus.freeze_over, true);
}

/* In the manager, with manage_lock held and preemption off. */
static void sus_exit_probe(void *data, const char *pool, unsigned int worker,
			   int cpu)
{
	unsigned long until = jiffies + SUS_WAIT;

	/* Pairs with smp_store_release() in test_reap_suspend(). */
	if (!smp_load_acquire(&sus.armed) || strcmp(pool, SUS_POOL) ||
	    worker != sus.spare_index)
		return;
	WRITE_ONCE(sus.armed, false);
	sus.held_cpu = raw_smp_processor_id();
	complete(&sus.held);
	/* Spinning there would keep the suspend from running. */
	if (sus.held_cpu == sus.suspend_cpu)
		return;
	while (!READ_ONCE(sus.freeze_over) && !sus_spare_frozen() &&
	       time_before(jiffies, until))
		cpu_relax();
	sus.held_to_end = READ_ONCE(sus.freeze_over) || sus_spare_frozen();
	sus.spare_frozen = sus_spare_frozen();
}

struct sus_pair {
	struct blitz_job first, second;
	struct completion started, signal, done;
};

/* Blocks until the job submitted after it runs: a spare runs that. */
static void sus_pair_first(struct blitz_job *job)
{
	struct sus_pair *p = container_of(job, struct sus_pair, first);

	complete(&p->started);
	if (!wait_for_completion_timeout(&p->signal, SUS_WAIT)) {
		pr_err("the first job waited in vain for the second\n");
		/* The pair is on its submitter's stack: the second is queued. */
		wait_for_completion(&p->signal);
	}
	complete(&p->done);
}

/*
 * On the spare: it takes its task and arms the probe before it parks,
 * so that the reap, spare_idle_ms after, is held however late the test's
 * task gets to run. Only a spare of the expected slot arms it.
 */
static void sus_pair_second(struct blitz_job *job)
{
	struct sus_pair *p = container_of(job, struct sus_pair, second);
	char comm[TASK_COMM_LEN];

	snprintf(comm, sizeof(comm), "blitz/%s/%u", SUS_POOL, sus.spare_index);
	if (!strcmp(current->comm, comm)) {
		sus.spare = get_task_struct(current);
		/*
		 * Pairs with smp_load_acquire() in sus_exit_probe(), which
		 * then reads sus.spare.
		 */
		smp_store_release(&sus.armed, true);
	}
	complete(&p->signal);
}

KSTM_MODULE_GLOBALS();

static void __init sus_report(bool ok, const char *what)
{
	total_tests++;
	if (ok) {
		pr_info("ok %u - %s\n", total_tests, what);
	} else {
		failed_tests++;
		pr_err("not ok %u - %s\n", total_tests, what);
	}
}

/* Makes the pool's first spare, which arms the probe: whether it did. */
static bool __init sus_make_spare(struct blitz_pool *pool)
{
	struct sus_pair pair = {
		.first = BLITZ_JOB_INIT(sus_pair_first),
		.second = BLITZ_JOB_INIT(sus_pair_second),
	};

	init_completion(&pair.started);
	init_completion(&pair.signal);
	init_completion(&pair.done);
	if (blitz_submit(pool, &pair.first))
		return false;
	wait_for_completion(&pair.started);
	if (blitz_submit(pool, &pair.second))
		complete(&pair.signal);
	/* The first completes it after the second ran, or failed to submit. */
	wait_for_completion(&pair.done);
	return sus.spare;
}

static void __init test_reap_suspend(void)
{
	const struct blitz_pool_attrs attrs = {
		.nr_workers = 1,
		.flags = BLITZ_POOL_FREEZABLE,
	};
	unsigned long deadline;
	struct blitz_pool *pool;
	bool exited = false;
	int ret = -EAGAIN;

	/* Its first spare takes the slot after its one worker. */
	sus.spare_index = 1;
	sus.suspend_cpu = raw_smp_processor_id();
	init_completion(&sus.held);
	pool = blitz_pool_create_attrs(SUS_POOL, &attrs);
	if (IS_ERR(pool)) {
		pr_err("blitz_pool_create_attrs() returned %ld\n", PTR_ERR(pool));
		sus_report(false, "setup: a freezable pool");
		return;
	}
	if (!sus_make_spare(pool)) {
		blitz_pool_destroy(pool);
		sus_report(false, "setup: a job that blocks makes a spare, in slot 1");
		return;
	}
	/* Parked, it is reaped after spare_idle_ms (the script sets 1 s). */
	if (wait_for_completion_timeout(&sus.held, SUS_WAIT) &&
	    sus.held_cpu != sus.suspend_cpu)
		ret = pm_suspend(PM_SUSPEND_MEM);
	WRITE_ONCE(sus.armed, false);
	pr_info("manager held on CPU %d (suspend on CPU %d) until the freezer was done: %d; spare frozen: %d; pm_suspend() %d\n",
		sus.held_cpu, sus.suspend_cpu, sus.held_to_end,
		sus.spare_frozen, ret);
	sus_report(ret != -EAGAIN && sus.held_to_end,
		   "the manager held about to stop a reaped spare, until the freezer was done, away from the suspend's CPU");

	/* kthread_stop() has returned; do_exit() is nearly done. */
	deadline = jiffies + SUS_WAIT;
	while (!(exited = READ_ONCE(sus.spare->exit_state)) &&
	       time_before(jiffies, deadline))
		msleep(20);
	sus_report(!ret && !sus.spare_frozen && exited,
		   "the reaped spare was not frozen; the suspend took CPUs offline and returned 0; the spare exited");
	put_task_struct(sus.spare);
	blitz_pool_destroy(pool);
}

static void __init selftest(void)
{
	int ret;

	if (!blitz_pm_test_selected("[processors]")) {
		pr_err("/sys/power/pm_test is missing or not set to processors\n");
		sus_report(false, "setup: pm_test");
		return;
	}
	ret = register_trace_suspend_resume(sus_power_probe, NULL);
	if (ret) {
		pr_err("register_trace_suspend_resume() returned %d\n", ret);
		sus_report(false, "setup: the suspend_resume tracepoint");
		return;
	}
	ret = register_trace_blitz_spare_exit(sus_exit_probe, NULL);
	if (ret) {
		pr_err("register_trace_blitz_spare_exit() returned %d\n", ret);
		sus_report(false, "setup: the blitz_spare_exit tracepoint");
		goto out;
	}
	test_reap_suspend();
	unregister_trace_blitz_spare_exit(sus_exit_probe, NULL);
out:
	unregister_trace_suspend_resume(sus_power_probe, NULL);
	tracepoint_synchronize_unregister();
}

KSTM_MODULE_LOADERS(blitz_suspend);

MODULE_DESCRIPTION("blitz: a suspend that offlines CPUs while a reaped spare is stopped");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
