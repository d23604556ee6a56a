// SPDX-License-Identifier: GPL-2.0
/*
 * Concurrency management, as the workqueue's (cmwq): a job that blocks
 * does not idle its CPU's share of the pool. Each worker's preempt
 * notifier sees it block in a job; when no worker homed on that CPU is
 * left running, a spare worker of the pool is put on duty there (where
 * the CPU's workers run, while it is offline), and goes back to its
 * parked list once another worker of that CPU runs again and it finds no
 * work. Documentation/blitz/design.rst, "Jobs that sleep".
 */
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "blitz.h"
#include "sleep.h"

unsigned int blitz_max_spares = 256;
module_param_named(max_spares, blitz_max_spares, uint, 0644);
MODULE_PARM_DESC(max_spares,
		 "spare workers a pool may have, read when it is created (default 256)");

unsigned int blitz_spare_idle_ms = 10000;
module_param_named(spare_idle_ms, blitz_spare_idle_ms, uint, 0644);
MODULE_PARM_DESC(spare_idle_ms,
		 "how long a parked spare worker lives unneeded, in ms (default 10000)");

/* What the notifier leaves to the worker's irq_work. */
enum {
	BLITZ_DEFER_POST,	/* frames promoted: post them */
	BLITZ_DEFER_SPARE,	/* the last running worker of a CPU blocked */
	BLITZ_DEFER_IDLE,	/* an idle worker was preempted */
};

static struct blitz_cm_cpu *blitz_cm_cpu(struct blitz_worker *w)
{
	return per_cpu_ptr(w->pool->cm, w->cpu);
}

static void blitz_manage_soon(struct blitz_pool *pool)
{
	queue_work(system_unbound_wq, &pool->manage);
}

/*
 * The last running worker of @cpu blocked: put a parked spare on duty
 * there, unless one of them runs again meanwhile. When none is left
 * parked, have the manager make one, to be put on duty at once if still
 * needed; not in a pool allowed no spares (max_spares 0), where the
 * manager has nothing to do, though the CPU is marked as wanting one all
 * the same. Hard interrupt, on the CPU where that worker blocked: @cpu,
 * or another while @cpu is offline.
 */
static void blitz_spare_wake(struct blitz_pool *pool, int cpu)
{
	struct blitz_cm_cpu *cm = per_cpu_ptr(pool->cm, cpu);
	struct task_struct *task = NULL;
	struct blitz_worker *s;
	bool manage = false;

	raw_spin_lock(&cm->lock);
	if (!atomic_read(&cm->nr_running)) {
		s = list_first_entry_or_null(&cm->parked, struct blitz_worker,
					     spare_node);
		if (s) {
			list_move(&s->spare_node, &cm->on_duty);
			atomic_inc(&cm->nr_running);
			WRITE_ONCE(s->on_duty, true);
			trace_blitz_spare_start(pool->name, s->index, cpu);
			/*
			 * Read under the lock: once it is dropped the spare
			 * may leave duty, be reaped and its slot taken by a
			 * new spare. Its task is freed a grace period after
			 * it exits, which interrupts off hold off.
			 */
			task = s->task;
		}
		manage = list_empty(&cm->parked);
		if (manage)
			WRITE_ONCE(cm->want, true);
	}
	raw_spin_unlock(&cm->lock);
	/* Pairs with set_current_state() in blitz_spare_wait(). */
	if (task)
		wake_up_process(task);
	if (manage && pool->max_spares)
		blitz_manage_soon(pool);
}

/**
 * blitz_spare_doze - a spare on duty sleeps in the sleep protocol, or wakes
 * @w: the current worker, a spare
 * @doze: whether it goes to sleep
 *
 * Counted, so that a worker of its CPU that runs again wakes it only if
 * it dozes: its sched_in would otherwise take the CPU's lock at every
 * unblock.
 *
 * Context: the spare, in task context.
 */
void blitz_spare_doze(struct blitz_worker *w, bool doze)
{
	struct blitz_cm_cpu *cm = blitz_cm_cpu(w);

	if (doze) {
		atomic_inc(&cm->nr_dozing);
		/*
		 * Orders the count before the spare's look at the running
		 * count; pairs with the fully ordered increment of that
		 * before the look at this in blitz_sched_in()
		 * (litmus/cm-spare-nudge.litmus).
		 */
		smp_mb__after_atomic();
	} else {
		atomic_dec(&cm->nr_dozing);
	}
}

/* What the notifier could not do under the runqueue lock. */
static void blitz_deferred_fn(struct irq_work *work)
{
	struct blitz_worker *w = container_of(work, struct blitz_worker,
					      irq_work);
	unsigned long defer = atomic_long_xchg(&w->deferred, 0);
	struct task_struct *kick;

	if (defer & BIT(BLITZ_DEFER_POST))
		blitz_new_jobs(w->pool, w->index + 1);
	/*
	 * A joiner, a worker of our pool: kicked, its latch no longer wakes
	 * it when set, so it waits for this wake-up before it can go on.
	 */
	kick = xchg(&w->kick, NULL);
	if (kick)
		wake_up_process(kick);
	if (defer & BIT(BLITZ_DEFER_IDLE))
		blitz_idle_handoff(w->pool,
				   blitz_counters_load(&w->pool->counters),
				   w->index + 1);
	if (defer & BIT(BLITZ_DEFER_SPARE))
		blitz_spare_wake(w->pool, w->cpu);
}

void blitz_cm_worker_init(struct blitz_worker *w)
{
	INIT_LIST_HEAD(&w->spare_node);
	w->irq_work = IRQ_WORK_INIT_HARD(blitz_deferred_fn);
}

#ifdef CONFIG_PREEMPT_NOTIFIERS
/*
 * @next, switched in as @w blocks, is a worker of @w's pool and CPU that
 * blocked and has been woken: its sched_in, next on this CPU, counts it
 * running again, so no spare is needed: one woken (here, at home) would
 * start first, the irq_work running before that sched_in, only to find
 * it running and park again.
 *
 * An exiting kthread of ours may still be switched in after its pool
 * freed its worker, and the memory may hold another worker by then:
 * PF_EXITING is set before kthread_stop() returns, and the worker is
 * freed a grace period after that. Not seeing the flag, we run in a
 * read-side section (interrupts off) that the grace period waits for
 * (litmus/cm-next-exiting.litmus).
 */
static bool blitz_next_unblocks(struct blitz_worker *w,
				struct task_struct *next)
{
	struct blitz_worker *n;

	/* Set by @next itself before it exits: a stable read here. */
	if (READ_ONCE(next->flags) & PF_EXITING ||
	    kthread_func(next) != blitz_worker_fn)
		return false;
	/* NULL while a new thread is preempted in kthread() before its data. */
	n = kthread_data(next);
	return n && n->pool == w->pool && n->cpu == w->cpu && n->blocked;
}

/*
 * The worker is switched out, with the runqueue lock held and interrupts
 * off: nothing here may wake a task, the irq_work does (hard, also on
 * PREEMPT_RT; it runs as soon as this CPU enables interrupts). The
 * worker counts for its home CPU wherever it runs: away from it (the CPU
 * going or gone), a block of its still has a spare run that CPU's share,
 * where the CPU's workers run (blitz_worker_bind()).
 *
 * A worker whose task is not runnable blocked; one that is was
 * preempted. A worker preempted between set_current_state() and
 * schedule() counts as blocked until it runs again: a spare runs
 * meanwhile. A wait for a PREEMPT_RT spinlock is not counted, as the
 * workqueue does not count it, nor is a freeze: its pool is frozen.
 */
static void blitz_sched_out(struct preempt_notifier *pn,
			    struct task_struct *next)
{
	struct blitz_worker *w = container_of(pn, struct blitz_worker,
					      notifier);
	unsigned int state = READ_ONCE(current->__state);
	enum blitz_cm_state cm = READ_ONCE(w->cm);
	bool block = state != TASK_RUNNING && state != TASK_RTLOCK_WAIT &&
		     !(state & TASK_FROZEN) && cm == BLITZ_CM_RUNNING;
	unsigned long defer = 0;
	u64 c;

	/*
	 * Latent frames, for whoever may take them: a spare, if we block;
	 * else an idle worker, or the one that asked. A kick not yet woken
	 * holds them back for the next time.
	 */
	if (w->forks.published < w->forks.depth && !READ_ONCE(w->kick) &&
	    (block || (READ_ONCE(w->forks.share) & BLITZ_SHARE_ASK) ||
	     blitz_inactive(blitz_counters_load(&w->pool->counters))) &&
	    blitz_promote_switched_out(w))
		defer |= BIT(BLITZ_DEFER_POST);
	if (block) {
		w->blocked = true;
		blitz_stat_inc(w, BLITZ_STAT_BLOCKS);
		trace_blitz_block(w->pool->name, w->index);
		if (atomic_dec_and_test(&blitz_cm_cpu(w)->nr_running) &&
		    !blitz_next_unblocks(w, next))
			defer |= BIT(BLITZ_DEFER_SPARE);
	} else if (state == TASK_RUNNING && cm == BLITZ_CM_LOOKING) {
		/*
		 * Counted idle, but it cannot look until it runs again: not
		 * an awake idle worker that posters may count on. As
		 * blitz_idle_work_found(), with the hand-off deferred.
		 */
		c = blitz_sub_inactive(&w->pool->counters);
		w->idle_out = true;
		if (blitz_sleeping(c) && !blitz_awake_idle(c))
			defer |= BIT(BLITZ_DEFER_IDLE);
	}
	if (defer) {
		atomic_long_or(defer, &w->deferred);
		irq_work_queue(&w->irq_work);
	}
}

/*
 * A worker of @cm's CPU runs again: wake the spares on duty there that
 * doze in the sleep protocol, to look whether they are still needed
 * (blitz_sleep()). From sched_in, which holds no runqueue lock.
 */
static void blitz_spare_nudge(struct blitz_cm_cpu *cm)
{
	struct blitz_worker *s;
	unsigned long flags;

	raw_spin_lock_irqsave(&cm->lock, flags);
	list_for_each_entry(s, &cm->on_duty, spare_node)
		swake_up_one(&s->idle_wait);
	raw_spin_unlock_irqrestore(&cm->lock, flags);
}

/*
 * The worker runs again: undo what its switch-out counted. Spares on
 * duty at its CPU may not be needed any more: it wakes those that doze.
 * With preemption off and no runqueue lock: it may wake tasks.
 */
static void blitz_sched_in(struct preempt_notifier *pn, int cpu)
{
	struct blitz_worker *w = container_of(pn, struct blitz_worker,
					      notifier);
	struct blitz_cm_cpu *cm = blitz_cm_cpu(w);

	this_cpu_write(blitz_hint, &w->forks);
	if (w->blocked) {
		w->blocked = false;
		trace_blitz_unblock(w->pool->name, w->index);
		/*
		 * Fully ordered before the look at the dozing count: pairs
		 * with blitz_spare_doze() (litmus/cm-spare-nudge.litmus).
		 */
		if (atomic_inc_return(&cm->nr_running) > 1 &&
		    atomic_read(&cm->nr_dozing))
			blitz_spare_nudge(cm);
	}
	if (w->idle_out) {
		w->idle_out = false;
		blitz_add_inactive(&w->pool->counters);
	}
}

static struct preempt_ops blitz_cm_ops = {
	.sched_in = blitz_sched_in,
	.sched_out = blitz_sched_out,
};

/* The notifiers' static key: on while blitz is loaded. */
void blitz_cm_init(void)
{
	preempt_notifier_inc();
}

void blitz_cm_exit(void)
{
	preempt_notifier_dec();
}

/**
 * blitz_cm_start - the current worker starts: watch its switches
 * @w: the current worker
 *
 * Context: the worker, in task context, before it runs a job.
 */
void blitz_cm_start(struct blitz_worker *w)
{
	preempt_notifier_init(&w->notifier, &blitz_cm_ops);
	preempt_disable();
	preempt_notifier_register(&w->notifier);
	preempt_enable();
}

/**
 * blitz_cm_stop - the current worker exits: its switches count no more
 * @w: the current worker
 *
 * Context: the worker, in task context, with no job left to run.
 */
void blitz_cm_stop(struct blitz_worker *w)
{
	/* Marked: its notifier may read it in an interrupt's preemption. */
	WRITE_ONCE(w->cm, BLITZ_CM_OFF);
	preempt_disable();
	preempt_notifier_unregister(&w->notifier);
	preempt_enable();
}
#else
void blitz_cm_init(void)
{
	pr_info("blitz: no CONFIG_PREEMPT_NOTIFIERS: a job that blocks keeps its worker\n");
}

void blitz_cm_exit(void)
{
}

void blitz_cm_start(struct blitz_worker *w)
{
}

void blitz_cm_stop(struct blitz_worker *w)
{
	WRITE_ONCE(w->cm, BLITZ_CM_OFF);
}
#endif /* CONFIG_PREEMPT_NOTIFIERS */

/**
 * blitz_spare_leave - park the current spare if its CPU runs another
 * @w: the current worker, a spare on duty, between jobs, not counted idle
 *
 * Context: task context.
 * Return: true when @w is parked: it must drop what it holds of the
 * pool, and wait in blitz_spare_wait().
 */
bool blitz_spare_leave(struct blitz_worker *w)
{
	struct blitz_cm_cpu *cm = blitz_cm_cpu(w);
	bool leave;

	if (!blitz_spare_surplus(w))
		return false;
	blitz_race_window(BLITZ_RACE_SPARE_LEAVE);
	raw_spin_lock_irq(&cm->lock);
	leave = atomic_add_unless(&cm->nr_running, -1, 1);
	if (leave) {
		WRITE_ONCE(w->cm, BLITZ_CM_OFF);
		WRITE_ONCE(w->on_duty, false);
		list_move(&w->spare_node, &cm->parked);
	}
	raw_spin_unlock_irq(&cm->lock);
	if (leave)
		trace_blitz_spare_stop(w->pool->name, w->index, w->cpu);
	return leave;
}

/**
 * blitz_spare_wait - wait parked until put on duty
 * @w: the current worker, a spare, parked
 *
 * A spare left parked for spare_idle_ms leaves its list and has the
 * manager stop it.
 *
 * Context: task context.
 * Return: true when @w is on duty; false when it is to exit: the pool
 * stops, or the manager reaps it.
 */
bool blitz_spare_wait(struct blitz_worker *w)
{
	struct blitz_cm_cpu *cm = blitz_cm_cpu(w);
	long left = msecs_to_jiffies(READ_ONCE(blitz_spare_idle_ms));
	bool reap;

	blitz_race_window(BLITZ_RACE_SPARE_PARK);
	for (;;) {
		/*
		 * Orders our state before the look at on_duty; pairs with the
		 * wake-up after the waker's store of it (blitz_spare_wake()).
		 */
		/* Frozen here with its pool, thawed to look again. */
		set_current_state(TASK_IDLE | TASK_FREEZABLE);
		if (READ_ONCE(w->on_duty) || blitz_latch_probe(&w->stop))
			break;
		left = schedule_timeout(left);
		if (left)
			continue;
		blitz_race_window(BLITZ_RACE_SPARE_REAP);
		/*
		 * Not once the pool stops: its destroyer's kthread_stop()
		 * reads our task's flags, after blitz_spare_stopping().
		 */
		raw_spin_lock_irq(&cm->lock);
		reap = !w->on_duty && !blitz_latch_probe(&w->stop);
		if (reap) {
			list_del_init(&w->spare_node);
			/* Out of the freezer's reach (blitz_worker_fn()). */
			current->flags |= PF_NOFREEZE;
		}
		raw_spin_unlock_irq(&cm->lock);
		if (reap) {
			__set_current_state(TASK_RUNNING);
			/*
			 * Orders that write of our task's flags before the
			 * manager's kthread_stop(), which reads them; pairs
			 * with smp_load_acquire() in blitz_spares_reap()
			 * (litmus/cm-spare-reap-flags.litmus).
			 */
			smp_store_release(&w->reap, true);
			blitz_manage_soon(w->pool);
			return false;
		}
		left = msecs_to_jiffies(READ_ONCE(blitz_spare_idle_ms));
	}
	__set_current_state(TASK_RUNNING);
	if (blitz_latch_probe(&w->stop))
		return false;
	WRITE_ONCE(w->cm, BLITZ_CM_RUNNING);
	return true;
}

/**
 * blitz_spare_stopping - a stopping spare decides to be reaped no more
 * @w: a spare, its stop latch set
 *
 * Its CPU's lock, taken and dropped, orders it with the reap decision in
 * blitz_spare_wait(): one taken before has written the task's flags, and
 * one taken after sees the latch (litmus/cm-spare-stop-flags.litmus).
 * The caller's kthread_stop() then reads the flags in no data race.
 *
 * Context: process context.
 */
void blitz_spare_stopping(struct blitz_worker *w)
{
	struct blitz_cm_cpu *cm = blitz_cm_cpu(w);

	raw_spin_lock_irq(&cm->lock);
	raw_spin_unlock_irq(&cm->lock);
}

/*
 * A slot whose spare exited, one of @cpu's if there is one, else another
 * CPU's moved to @cpu: the exited thread has been stopped and its
 * irq_work synced, so only the hotplug callbacks (excluded by
 * manage_lock), debugfs and hints (blitz_woken_behind_us(),
 * blitz_next_unblocks(), which find it is not theirs) read the slot's CPU.
 */
static struct blitz_worker *blitz_spare_slot(struct blitz_pool *pool,
					     int cpu)
{
	struct blitz_worker *w, *other = NULL;
	unsigned int i;

	for (i = pool->nr_workers; i < pool->nr_slots; i++) {
		w = pool->workers[i];
		if (w->task)
			continue;
		if (w->cpu == cpu)
			return w;
		other = other ?: w;
	}
	if (other)
		WRITE_ONCE(other->cpu, cpu);
	return other;
}

/*
 * A spare for @cpu, in a slot whose spare exited or a new one, put on
 * duty if @cpu has no worker running, else parked. Bound where its
 * CPU's workers run: @cpu may be offline, or have gone since it asked. Its
 * thread has nothing to look up before it runs: it is woken at once.
 * Fails with -ENOSPC at the bound: a free slot exists whenever fewer
 * spares than the bound are alive.
 */
static int blitz_spare_create(struct blitz_pool *pool, int cpu)
{
	struct blitz_cm_cpu *cm = per_cpu_ptr(pool->cm, cpu);
	unsigned int i = pool->nr_slots;
	struct blitz_worker *w;
	bool on_duty;
	int ret;

	lockdep_assert_held(&pool->manage_lock);
	if (pool->nr_spares >= pool->max_spares)
		return -ENOSPC;
	w = blitz_spare_slot(pool, cpu);
	if (w) {
		i = w->index;
	} else {
		w = blitz_worker_alloc(pool, i, cpu);
		if (!w)
			return -ENOMEM;
		w->spare = true;
	}
	ret = blitz_worker_create(w);
	if (ret) {
		if (i == pool->nr_slots)
			kfree(w);
		return ret;
	}
	if (!cpumask_test_cpu(cpu, pool->online))
		blitz_worker_bind(w);
	if (i == pool->nr_slots) {
		pool->workers[i] = w;
		/* Pairs with smp_load_acquire() in blitz_nr_slots(). */
		smp_store_release(&pool->nr_slots, i + 1);
	}
	pool->nr_spares++;

	blitz_race_window(BLITZ_RACE_SPARE_MADE);
	raw_spin_lock_irq(&cm->lock);
	on_duty = !atomic_read(&cm->nr_running);
	WRITE_ONCE(w->on_duty, on_duty);
	if (on_duty) {
		atomic_inc(&cm->nr_running);
		list_add(&w->spare_node, &cm->on_duty);
	} else {
		list_add(&w->spare_node, &cm->parked);
	}
	WRITE_ONCE(cm->want, false);
	raw_spin_unlock_irq(&cm->lock);
	if (on_duty)
		trace_blitz_spare_start(pool->name, w->index, cpu);
	wake_up_process(w->task);
	return 0;
}

/*
 * Stop the spares that waited parked too long. Their slots stay, for
 * later spares: lockless readers walk every slot up to nr_slots. A
 * reaped spare waits for kthread_stop() unfreezable (blitz_worker_fn()):
 * a suspend freezes tasks, then takes CPUs offline, whose callbacks wait
 * for manage_lock. No grace period before a slot is taken again: a task
 * that still holds a hint naming the slot compares the spare's task, old
 * or new, with itself, and is neither (__blitz_hinted_forks()); the old
 * task is freed only a grace period after it exits.
 */
static void blitz_spares_reap(struct blitz_pool *pool)
{
	struct blitz_worker *w;
	unsigned int i;

	for (i = pool->nr_workers; i < pool->nr_slots; i++) {
		w = pool->workers[i];
		/* Pairs with smp_store_release() in blitz_spare_wait(). */
		if (!w->task || !smp_load_acquire(&w->reap))
			continue;
		trace_blitz_spare_exit(pool->name, w->index, w->cpu);
		kthread_stop(w->task);
		irq_work_sync(&w->irq_work);
		put_task_struct(w->task);
		w->task = NULL;
		WRITE_ONCE(w->reap, false);
		pool->nr_spares--;
	}
}

/* Until a failed spare is tried again: memory may be short. */
#define BLITZ_MANAGE_RETRY	msecs_to_jiffies(10)

/*
 * The manager: stops the spares that waited too long, and makes one for
 * each CPU that has none parked, never on a path that must not sleep. A
 * work item: one runs at a time. Not under the hotplug lock: a job that
 * waits for another must not wait for a CPU hotplug operation too, nor
 * deadlock with one that waits for the job. manage_lock, which the
 * hotplug callbacks take to move the pool's workers, orders each spare's
 * binding with them. An offline CPU gets its spares too, bound where its
 * workers run, away from it. A spare it failed to make, other than at
 * the bound, it tries again later: the CPU that wants it may have all
 * its workers blocked, and nothing else would ask again.
 */
static void blitz_manage(struct work_struct *work)
{
	struct blitz_pool *pool = container_of(work, struct blitz_pool,
					       manage);
	bool retry = false;
	int cpu, ret;

	mutex_lock(&pool->manage_lock);
	if (pool->stopping)
		goto unlock;
	blitz_spares_reap(pool);
	/* Workers, spares too, are homed on CPUs of the mask only. */
	for_each_cpu(cpu, pool->cpumask) {
		if (!READ_ONCE(per_cpu_ptr(pool->cm, cpu)->want))
			continue;
		ret = blitz_spare_create(pool, cpu);
		if (ret == -ENOSPC)
			break;
		if (ret)
			retry = true;
	}
	if (retry)
		queue_delayed_work(system_unbound_wq, &pool->manage_retry,
				   BLITZ_MANAGE_RETRY);
unlock:
	mutex_unlock(&pool->manage_lock);
}

static void blitz_manage_retry(struct work_struct *work)
{
	blitz_manage_soon(container_of(to_delayed_work(work),
				       struct blitz_pool, manage_retry));
}

/**
 * blitz_cm_pool_init - concurrency management for a new pool
 * @pool: the pool, before its workers are made
 *
 * Context: process context.
 * Return: 0 or -ENOMEM.
 */
int blitz_cm_pool_init(struct blitz_pool *pool)
{
	struct blitz_cm_cpu *cm;
	int cpu;

	pool->cm = alloc_percpu(struct blitz_cm_cpu);
	if (!pool->cm)
		return -ENOMEM;
	for_each_possible_cpu(cpu) {
		cm = per_cpu_ptr(pool->cm, cpu);
		raw_spin_lock_init(&cm->lock);
		INIT_LIST_HEAD(&cm->on_duty);
		INIT_LIST_HEAD(&cm->parked);
	}
	INIT_WORK(&pool->manage, blitz_manage);
	INIT_DELAYED_WORK(&pool->manage_retry, blitz_manage_retry);
	mutex_init(&pool->manage_lock);
	return 0;
}

/**
 * blitz_cm_pool_stop - no spare is made or reaped any more
 * @pool: the pool, drained
 *
 * Context: process context; sleeps until the manager is done.
 */
void blitz_cm_pool_stop(struct blitz_pool *pool)
{
	mutex_lock(&pool->manage_lock);
	pool->stopping = true;
	mutex_unlock(&pool->manage_lock);
}

/**
 * blitz_cm_pool_exit - wait for the manager's work items
 * @pool: the pool, stopped, its workers stopped and their irq_works synced
 *
 * The retry queues the manager, and a stopped manager queues nothing:
 * the retry is cancelled first.
 *
 * Context: process context; sleeps.
 */
void blitz_cm_pool_exit(struct blitz_pool *pool)
{
	cancel_delayed_work_sync(&pool->manage_retry);
	cancel_work_sync(&pool->manage);
}
