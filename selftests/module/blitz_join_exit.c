// SPDX-License-Identifier: GPL-2.0
/*
 * The owner of a join, a spare, returns and exits while the thief that
 * ran its b has yet to wake it. The thief sets b's latch, then wakes the
 * owner if it slept: in between, a spurious wake-up can let the owner see
 * the latch and return; a spare may then leave duty, be reaped and exit,
 * and its task be freed, while the thief still holds it. blitz_join_stolen()
 * wakes it inside an RCU read-side section, which holds off the free.
 *
 * Each round, in a one-worker pool: a job blocks, so a spare comes on
 * duty; the job submitted next runs on that spare and joins a with b. a
 * waits until b runs elsewhere (on the next spare: the owner's latent
 * frame is promoted while it is switched out); b waits until the owner
 * sleeps in the join, then returns. The blocked job is released, so that
 * the spares are no longer needed, and this task wakes the owner until
 * it has returned: it sees the latch set, and parks. The probe on
 * blitz_spare_exit sees the manager stop it.
 * selftests/blitz_join_exit.sh loads blitz.ko with spare_idle_ms=1 and
 * the race window BLITZ_RACE_JOIN_WAKE open on every pass, so that the
 * thief waits between the latch and the wake-up: inside the read-side
 * section it spins for up to 50 ms, through which only a preemptible
 * kernel lets the owner, on the thief's CPU, run. Without the section the
 * thief may sleep there, for up to 1 s, and then wakes a freed task:
 * slab poisoning or KASAN shows it. Whether a passing round's thief was
 * still in the window when the owner was reaped, the module cannot see.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/jiffies.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <trace/events/blitz.h>

#include "kselftest_module.h"

#define JX_POOL		"jx"
#define JX_ROUNDS	8
#define JX_WAIT		(30 * HZ)	/* for what should happen at once */

struct jx_round {
	struct blitz_job blocker, owner;
	struct completion blocker_started, release, blocker_done;
	struct completion b_started, b_returning, owner_done;
	/* Not referenced: its free is what the test is about. */
	struct task_struct *owner_task;
	unsigned int owner_index;	/* UINT_MAX: not a worker's name */
	bool b_elsewhere;	/* b ran on another task than the owner */
	bool owner_slept;	/* b saw the owner asleep in the join */
	bool owner_returned;	/* set before the owner can exit */
};

/* The spare whose stop the probe waits for; UINT_MAX for none. */
static unsigned int jx_reap_index = UINT_MAX;
static DECLARE_COMPLETION(jx_reaped);

/* In the manager, with manage_lock held. */
static void jx_exit_probe(void *data, const char *pool, unsigned int worker,
			  int cpu)
{
	if (!strcmp(pool, JX_POOL) && worker == READ_ONCE(jx_reap_index))
		complete(&jx_reaped);
}

/* Until the owner's release: a spare takes the CPU meanwhile. */
static void jx_blocker_fn(struct blitz_job *job)
{
	struct jx_round *r = container_of(job, struct jx_round, blocker);

	complete(&r->blocker_started);
	if (!wait_for_completion_timeout(&r->release, JX_WAIT)) {
		pr_err("the blocking job waited in vain for its release\n");
		/* The round is on its submitter's stack: wait for it. */
		wait_for_completion(&r->release);
	}
	complete(&r->blocker_done);
}

/* Sleeps until b runs elsewhere: the owner's next spare takes it. */
static void jx_a(void *arg)
{
	struct jx_round *r = arg;

	if (!wait_for_completion_timeout(&r->b_started, JX_WAIT))
		pr_err("b was not stolen\n");
}

static bool jx_owner_asleep(struct jx_round *r)
{
	struct task_struct *owner = r->owner_task;

	return READ_ONCE(owner->__state) == TASK_IDLE &&
	       !READ_ONCE(owner->on_cpu);
}

/* Returns once the owner sleeps in the join, waiting for it. */
static void jx_b(void *arg)
{
	struct jx_round *r = arg;
	unsigned long until = jiffies + JX_WAIT;

	r->b_elsewhere = current != r->owner_task;
	complete(&r->b_started);
	if (r->b_elsewhere) {
		while (!jx_owner_asleep(r) && time_before(jiffies, until)) {
			cpu_relax();
			cond_resched();
		}
		r->owner_slept = jx_owner_asleep(r);
	}
	complete(&r->b_returning);
}

static void jx_owner_fn(struct blitz_job *job)
{
	struct jx_round *r = container_of(job, struct jx_round, owner);
	const char *index = strrchr(current->comm, '/');

	r->owner_task = current;
	if (!index || kstrtouint(index + 1, 10, &r->owner_index))
		r->owner_index = UINT_MAX;
	/* The thief's wake-up may come at once: we may be reaped soon. */
	WRITE_ONCE(jx_reap_index, r->owner_index);
	blitz_join(jx_a, r, jx_b, r);
	/* Read under rcu_read_lock() by jx_wake_owner(). */
	WRITE_ONCE(r->owner_returned, true);
	complete(&r->owner_done);
}

/*
 * Wake the owner, as a spurious wake-up would, until it has returned. A
 * task that had not returned when we looked cannot be freed before the
 * read-side section ends.
 */
static bool jx_wake_owner(struct jx_round *r)
{
	unsigned long until = jiffies + JX_WAIT;
	bool returned;

	for (;;) {
		rcu_read_lock();
		returned = READ_ONCE(r->owner_returned);
		if (!returned)
			wake_up_process(r->owner_task);
		rcu_read_unlock();
		if (returned || time_after(jiffies, until))
			return returned;
		usleep_range(500, 1000);
	}
}

static bool __init jx_wait(struct completion *c, const char *what)
{
	if (wait_for_completion_timeout(c, JX_WAIT))
		return true;
	pr_err("round: %s did not happen\n", what);
	return false;
}

/* One round; true if every step of it happened. */
static bool __init jx_round(void)
{
	struct jx_round r = {
		.blocker = BLITZ_JOB_INIT(jx_blocker_fn),
		.owner = BLITZ_JOB_INIT(jx_owner_fn),
	};
	struct blitz_pool *pool;
	bool ok = false;

	init_completion(&r.blocker_started);
	init_completion(&r.release);
	init_completion(&r.blocker_done);
	init_completion(&r.b_started);
	init_completion(&r.b_returning);
	init_completion(&r.owner_done);
	reinit_completion(&jx_reaped);
	pool = blitz_pool_create(JX_POOL, 1);
	if (IS_ERR(pool)) {
		pr_err("blitz_pool_create() returned %ld\n", PTR_ERR(pool));
		return false;
	}
	if (blitz_submit(pool, &r.blocker))
		goto out;
	if (!jx_wait(&r.blocker_started, "the blocking job's start") ||
	    blitz_submit(pool, &r.owner)) {
		complete(&r.release);
		goto out;
	}
	jx_wait(&r.b_returning, "b's return");
	complete(&r.release);
	jx_wait(&r.blocker_done, "the blocking job's return");
	ok = r.owner_index != 0 && r.owner_index != UINT_MAX &&
	     r.b_elsewhere && r.owner_slept && jx_wake_owner(&r) &&
	     jx_wait(&r.owner_done, "the owner's return") &&
	     jx_wait(&jx_reaped, "the owner's reap");
	if (!ok)
		pr_err("round: owner worker %u, b elsewhere %d, owner slept %d, returned %d\n",
		       r.owner_index, r.b_elsewhere, r.owner_slept,
		       READ_ONCE(r.owner_returned));
out:
	/* Waits for the thief, and for the jobs: the round is on our stack. */
	blitz_pool_destroy(pool);
	WRITE_ONCE(jx_reap_index, UINT_MAX);
	return ok;
}

KSTM_MODULE_GLOBALS();

static void __init selftest(void)
{
	unsigned int i, done = 0;
	int ret;

	ret = register_trace_blitz_spare_exit(jx_exit_probe, NULL);
	if (ret) {
		pr_err("register_trace_blitz_spare_exit() returned %d\n", ret);
		total_tests++;
		failed_tests++;
		return;
	}
	for (i = 0; i < JX_ROUNDS; i++)
		done += jx_round();
	unregister_trace_blitz_spare_exit(jx_exit_probe, NULL);
	tracepoint_synchronize_unregister();
	pr_info("%u of %u rounds: a spare slept in a join whose b another ran, was woken by us as the thief set the latch, returned and was reaped\n",
		done, JX_ROUNDS);
	total_tests++;
	if (done != JX_ROUNDS)
		failed_tests++;
}

KSTM_MODULE_LOADERS(blitz_join_exit);

MODULE_DESCRIPTION("blitz: a join's owner exits while its thief is to wake it");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
