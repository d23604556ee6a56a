// SPDX-License-Identifier: GPL-2.0
/*
 * Pools: creating and destroying them, blitz_submit(), and keeping each
 * worker on its CPU across CPU hotplug.
 *
 * Lock order: cpus_read_lock() -> blitz_pools_lock -> a pool's
 * manage_lock (cm.c). The hotplug callbacks run with the hotplug lock
 * held and take both; the manager takes only manage_lock, so that making
 * a spare never waits for a CPU hotplug operation to end.
 */
#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/ctype.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/random.h>
#include <linux/sched/isolation.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <uapi/linux/sched/types.h>

#include "blitz.h"
#include "sleep.h"

static LIST_HEAD(blitz_pools);
static DEFINE_MUTEX(blitz_pools_lock);
static enum cpuhp_state blitz_cpuhp_state;
/* The housekeeping CPUs, found at load (blitz_hotplug_init()). */
static cpumask_var_t blitz_hk_cpus;

static void blitz_pool_release(struct percpu_ref *ref)
{
	struct blitz_pool *pool = container_of(ref, struct blitz_pool, live);

	complete(&pool->drained);
}

static bool blitz_name_in_use(const char *name)
{
	struct blitz_pool *pool;

	lockdep_assert_held(&blitz_pools_lock);
	list_for_each_entry(pool, &blitz_pools, node)
		if (!strcmp(pool->name, name))
			return true;
	return false;
}

/*
 * A name is a debugfs directory and part of the workers' names: at most
 * BLITZ_POOL_NAME_MAX of [A-Za-z0-9._-], and not "." or "..".
 */
static bool blitz_name_valid(const char *name)
{
	size_t len = name ? strnlen(name, BLITZ_POOL_NAME_MAX + 1) : 0;
	const char *c;

	if (!len || len > BLITZ_POOL_NAME_MAX || !strcmp(name, ".") ||
	    !strcmp(name, ".."))
		return false;
	for (c = name; *c; c++)
		if (!isalnum(*c) && !strchr("._-", *c))
			return false;
	return true;
}

static unsigned int blitz_worker_slice_us = 100;
module_param_named(worker_slice_us, blitz_worker_slice_us, uint, 0444);
MODULE_PARM_DESC(worker_slice_us,
		 "workers' scheduler slice in us, at least 100; 0: the scheduler's (default 100)");

/*
 * Give @task a short slice: EEVDF then lets it preempt the task that woke
 * it, as a kworker woken by queue_work() does, instead of waiting for the
 * waker to block or its slice to end (Documentation/blitz/design.rst,
 * "Kernel adaptations"). Kernels before 6.12 ignore the slice.
 */
static void blitz_set_slice(struct task_struct *task)
{
	struct sched_attr attr = {
		.size = sizeof(attr),
		.sched_policy = SCHED_NORMAL,
		.sched_runtime = (u64)blitz_worker_slice_us * NSEC_PER_USEC,
	};
	int ret;

	if (!blitz_worker_slice_us)
		return;
	/* Harmless if it fails: the worker keeps the default slice. */
	ret = sched_setattr_nocheck(task, &attr);
	if (ret)
		pr_warn_once("blitz: workers keep the default slice: %d\n",
			     ret);
}

/**
 * blitz_worker_alloc - a worker's state, its thread not made yet
 * @pool: its pool
 * @i: its index in @pool's workers
 * @cpu: the CPU it is homed on
 *
 * Context: process context.
 * Return: the worker, or NULL.
 */
struct blitz_worker *blitz_worker_alloc(struct blitz_pool *pool,
					unsigned int i, int cpu)
{
	struct blitz_worker *w;

	w = kzalloc_node(sizeof(*w), GFP_KERNEL, cpu_to_node(cpu));
	if (!w)
		return NULL;
	blitz_deque_init(&w->deque);
	w->pool = pool;
	w->index = i;
	w->cpu = cpu;
	w->rng = get_random_u64() | 1;
	blitz_latch_init(&w->stop);
	blitz_inject_init(&w->inject);
	init_swait_queue_head(&w->idle_wait);
	blitz_share_init(w);
	blitz_cm_worker_init(w);
	return w;
}

/**
 * blitz_worker_create - make a worker's thread, bound to its CPU
 * @w: the worker
 *
 * The thread is not woken. Bound to its home CPU, which must be online
 * when it is woken, or moved first (blitz_worker_bind()).
 *
 * Context: process context.
 * Return: 0, or the error kthread creation gave.
 */
int blitz_worker_create(struct blitz_worker *w)
{
	struct task_struct *task;

	task = kthread_create_on_node(blitz_worker_fn, w, cpu_to_node(w->cpu),
				      "blitz/%s/%u", w->pool->name, w->index);
	if (IS_ERR(task))
		return PTR_ERR(task);
	/* Not kthread_create_on_cpu(): hotplug moves us, it does not park. */
	kthread_bind(task, w->cpu);
	blitz_set_slice(task);
	/* After the slice: sched_setattr() sets the nice value too. */
	set_user_nice(task, w->pool->nice);
	/* kthread_stop() after the worker has returned needs the task. */
	w->task = get_task_struct(task);
	/* Read by tasks whose hint still names a spare this slot held. */
	WRITE_ONCE(w->forks.task, task);
	return 0;
}

static void blitz_free_bits(struct blitz_pool *pool)
{
	free_percpu(pool->cm);
	free_percpu(pool->credits);
	bitmap_free(pool->queued);
	bitmap_free(pool->sleepers);
	kfree(pool->cpu_worker);
	free_cpumask_var(pool->online);
	free_cpumask_var(pool->cpumask);
	kfree(pool->name);
	kfree(pool);
}

/*
 * Stop the workers, which must have nothing left to run, and free all.
 * The manager makes and reaps no more spares.
 */
static void blitz_free_pool(struct blitz_pool *pool)
{
	struct blitz_worker *w;
	unsigned int i, nr;

	blitz_cm_pool_stop(pool);
	nr = pool->nr_slots;
	for (i = 0; i < nr; i++) {
		w = pool->workers[i];
		if (!w->task)
			continue;
		if (blitz_latch_set(&w->stop))
			blitz_wake_worker(w);
		/* A spare may wait parked, off the sleep protocol. */
		if (w->spare) {
			blitz_spare_stopping(w);
			wake_up_process(w->task);
		}
	}
	/* All stopped before any is freed: they look at each other. */
	for (i = 0; i < nr; i++)
		if (pool->workers[i]->task)
			kthread_stop(pool->workers[i]->task);
	for (i = 0; i < nr; i++)
		irq_work_sync(&pool->workers[i]->irq_work);
	/* Queued by a spare that was reaped, or by an irq_work. */
	blitz_cm_pool_exit(pool);
	for (i = 0; i < nr; i++) {
		w = pool->workers[i];
		blitz_share_exit(w);
		if (w->task)
			put_task_struct(w->task);
		/*
		 * The worker cleared the hints that named it as it exited,
		 * but a task may have read one and not yet looked at it, with
		 * preemption off (__blitz_hinted_forks()).
		 */
		kfree_rcu(w, rcu);
	}
	percpu_ref_exit(&pool->live);
	blitz_free_bits(pool);
}

/* Each CPU injects into the list of a worker on that CPU, if it has one. */
static void blitz_map_cpus(struct blitz_pool *pool)
{
	unsigned int cpu, i;

	for_each_possible_cpu(cpu)
		pool->cpu_worker[cpu] = cpu % pool->nr_workers;
	for (i = pool->nr_workers; i-- > 0; )
		pool->cpu_worker[pool->workers[i]->cpu] = i;
}

/*
 * The housekeeping CPUs: those the workqueue runs unbound work on, the
 * possible CPUs narrowed as workqueue_init_early() narrows them, each
 * housekeeping set only where it leaves a CPU. The CPUs of a pool made
 * without a cpumask, and where a pool with no CPU online runs.
 */
static void blitz_housekeeping(struct cpumask *mask)
{
	static const enum hk_type types[] = { HK_TYPE_WQ, HK_TYPE_DOMAIN };
	unsigned int i;

	cpumask_copy(mask, cpu_possible_mask);
	for (i = 0; i < ARRAY_SIZE(types); i++)
		if (cpumask_intersects(mask, housekeeping_cpumask(types[i])))
			cpumask_and(mask, mask, housekeeping_cpumask(types[i]));
}

/**
 * blitz_pool_create_attrs - create a pool of workers, with attributes
 * @name: unique name; also the pool's directory under debugfs blitz/
 * @attrs: the workers: how many, their nice value, their CPUs, and flags
 *
 * Worker i is homed on the i-th online CPU of @attrs->cpumask (of the
 * housekeeping CPUs when it is NULL), wrapping around when there are
 * more workers than such CPUs, and runs there. While its home CPU is
 * offline it runs on the online CPUs of the mask, or on the housekeeping
 * CPUs when none is, where the workqueue runs an offline CPU's workers.
 * While every worker of a CPU is blocked in a job, a spare worker runs
 * where they run: the pool makes up to max_spares (a module parameter,
 * read now) as they are needed, at the same nice value.
 *
 * With %BLITZ_POOL_FREEZABLE, the workers freeze with the system freezer:
 * idle ones at once, busy ones when their job returns. No job of the pool
 * starts while they are frozen; jobs submitted meanwhile, from any
 * context, run after the thaw.
 *
 * Context: process context; sleeps.
 * Return: the pool; ERR_PTR(-EINVAL) for NULL @attrs, a nice value outside
 * -20..19, a cpumask with no online CPU, an unknown flag, a NULL or empty
 * name, a name longer than 63 characters or with characters other than
 * letters, digits, '.', '_' and '-', the names "." and "..", or more
 * workers than possible CPUs; ERR_PTR(-EEXIST) for a name already in use;
 * ERR_PTR(-ENOMEM); the error kthread creation gave for a worker
 * (copy_process() gives -EAGAIN for some allocation failures; -EINTR if
 * the caller was killed meanwhile); or the error debugfs gave for the
 * pool's directory. A failed create leaves nothing behind: the name is
 * free again.
 */
struct blitz_pool *blitz_pool_create_attrs(const char *name,
					   const struct blitz_pool_attrs *attrs)
{
	unsigned int i, bits, spares, nr_workers;
	struct blitz_pool *pool;
	struct blitz_worker *w;
	cpumask_var_t mask;
	int cpu, ret;

	might_sleep();
	if (!attrs || attrs->nice < MIN_NICE || attrs->nice > MAX_NICE ||
	    attrs->flags & ~BLITZ_POOL_FREEZABLE || !blitz_name_valid(name) ||
	    attrs->nr_workers > num_possible_cpus() ||
	    attrs->nr_workers > BLITZ_MAX_WORKERS)
		return ERR_PTR(-EINVAL);
	if (!alloc_cpumask_var(&mask, GFP_KERNEL))
		return ERR_PTR(-ENOMEM);
	if (attrs->cpumask)
		cpumask_and(mask, attrs->cpumask, cpu_possible_mask);
	else
		cpumask_copy(mask, blitz_hk_cpus);

	cpus_read_lock();
	mutex_lock(&blitz_pools_lock);
	ret = -EINVAL;
	if (!cpumask_intersects(mask, cpu_online_mask))
		goto unlock;
	ret = -EEXIST;
	if (blitz_name_in_use(name))
		goto unlock;
	nr_workers = attrs->nr_workers ?: cpumask_weight_and(mask,
							       cpu_online_mask);
	/* Every worker, spares too, in the counter word's 16-bit fields. */
	spares = min(READ_ONCE(blitz_max_spares),
		     BLITZ_MAX_WORKERS - nr_workers);

	ret = -ENOMEM;
	pool = kzalloc(struct_size(pool, workers, nr_workers + spares),
		       GFP_KERNEL);
	if (!pool)
		goto unlock;
	if (!alloc_cpumask_var(&pool->cpumask, GFP_KERNEL) ||
	    !alloc_cpumask_var(&pool->online, GFP_KERNEL)) {
		blitz_free_bits(pool);
		goto unlock;
	}
	cpumask_copy(pool->cpumask, mask);
	/* No hotplug until we unlock; its callbacks keep it from then on. */
	cpumask_and(pool->online, mask, cpu_online_mask);
	pool->capacity = nr_workers + spares;
	pool->nr_workers = nr_workers;
	pool->max_spares = spares;
	pool->nice = attrs->nice;
	pool->flags = attrs->flags;
	pool->name = kstrdup(name, GFP_KERNEL);
	pool->cpu_worker = kcalloc(nr_cpu_ids, sizeof(*pool->cpu_worker),
				   GFP_KERNEL);
	/*
	 * Each bitmap on whole cache lines of its own (kmalloc() aligns a
	 * power-of-two size, one line up to 512 workers, to its size):
	 * posters read the sleepers bitmap, injections and takes write
	 * the queued one.
	 */
	bits = round_up(pool->capacity, SMP_CACHE_BYTES * BITS_PER_BYTE);
	pool->sleepers = bitmap_zalloc(bits, GFP_KERNEL);
	pool->queued = bitmap_zalloc(bits, GFP_KERNEL);
	pool->credits = alloc_percpu(long);
	if (!pool->name || !pool->cpu_worker || !pool->sleepers ||
	    !pool->queued || !pool->credits ||
	    blitz_cm_pool_init(pool) ||
	    percpu_ref_init(&pool->live, blitz_pool_release, 0, GFP_KERNEL)) {
		blitz_free_bits(pool);
		goto unlock;
	}
	blitz_counters_init(&pool->counters);
	init_completion(&pool->drained);

	cpu = -1;
	for (i = 0; i < nr_workers; i++) {
		cpu = cpumask_next_and(cpu, pool->cpumask, cpu_online_mask);
		if (cpu >= nr_cpu_ids)
			cpu = cpumask_first_and(pool->cpumask, cpu_online_mask);
		w = blitz_worker_alloc(pool, i, cpu);
		ret = w ? blitz_worker_create(w) : -ENOMEM;
		if (ret) {
			kfree(w);
			blitz_free_pool(pool);
			goto unlock;
		}
		pool->workers[i] = w;
		pool->nr_slots = i + 1;
		/* On duty, running: counted as such from the start (cm.c). */
		w->cm = BLITZ_CM_RUNNING;
		atomic_inc(&per_cpu_ptr(pool->cm, cpu)->nr_running);
	}
	blitz_map_cpus(pool);
	ret = blitz_debugfs_add_pool(pool);
	if (ret) {
		blitz_free_pool(pool);
		goto unlock;
	}
	list_add(&pool->node, &blitz_pools);
	for (i = 0; i < nr_workers; i++)
		wake_up_process(pool->workers[i]->task);
	ret = 0;
unlock:
	mutex_unlock(&blitz_pools_lock);
	cpus_read_unlock();
	free_cpumask_var(mask);
	return ret ? ERR_PTR(ret) : pool;
}
EXPORT_SYMBOL_NS_GPL(blitz_pool_create_attrs, BLITZ_NS);

/**
 * blitz_pool_create - create a pool of workers on the housekeeping CPUs
 * @name: unique name; also the pool's directory under debugfs blitz/
 * @nr_workers: number of workers, 0 for one per online housekeeping CPU
 *
 * blitz_pool_create_attrs() with @nr_workers alone: nice 0, the
 * housekeeping CPUs, not freezable.
 *
 * Context: process context; sleeps.
 * Return: as blitz_pool_create_attrs().
 */
struct blitz_pool *blitz_pool_create(const char *name, unsigned int nr_workers)
{
	struct blitz_pool_attrs attrs = { .nr_workers = nr_workers };

	return blitz_pool_create_attrs(name, &attrs);
}
EXPORT_SYMBOL_NS_GPL(blitz_pool_create, BLITZ_NS);

/*
 * A job's reference on its pool comes from a per-CPU stock of credits,
 * taken BLITZ_CREDITS at a time, not a percpu_ref call per submit (an
 * RCU read section and, under PREEMPT_RCU, two calls each). Taken with
 * preemption off, and only by a submitter that saw no shutdown: destroy
 * gives the stock back after a grace period (blitz_return_credits()),
 * and only then kills the reference, so a refill cannot fail. An
 * interrupt may take and refill between our decrement and its undo: the
 * count is never above the credits there, only below, by decrements that
 * found none and are not yet undone, and one that leaves it non-negative
 * took a credit.
 */
#define BLITZ_CREDITS	64

/* The stock was empty: a reference for our job, and a stock's worth. */
static void blitz_refill_credits(struct blitz_pool *pool)
{
	percpu_ref_get_many(&pool->live, BLITZ_CREDITS + 1);
	this_cpu_add(*pool->credits, BLITZ_CREDITS);
}

static __always_inline void blitz_take_credit(struct blitz_pool *pool)
{
	if (likely(this_cpu_dec_return(*pool->credits) >= 0))
		return;
	blitz_race_window(BLITZ_RACE_CREDIT_UNDO);
	this_cpu_inc(*pool->credits);
	blitz_refill_credits(pool);
}

/* After shutdown and a grace period: nobody takes credits any more. */
static void blitz_return_credits(struct blitz_pool *pool)
{
	long n = 0;
	int cpu;

	for_each_possible_cpu(cpu)
		n += *per_cpu_ptr(pool->credits, cpu);
	if (n)
		percpu_ref_put_many(&pool->live, n);
}

/**
 * blitz_pool_destroy - drain a pool, stop its workers and free it
 * @pool: the pool; NULL or an error pointer is ignored, as kfree() ignores
 *	  NULL (the default pool is the module's, never a caller's)
 *
 * From the call on, submissions from outside the pool fail with
 * -ESHUTDOWN. Every job already accepted runs, and so does every job those
 * jobs submit; then the workers stop and the pool is freed.
 *
 * Context: process context, not a job of @pool; sleeps until the pool is
 * drained.
 */
void blitz_pool_destroy(struct blitz_pool *pool)
{
	struct blitz_worker *self = blitz_current_worker();

	might_sleep();
	if (IS_ERR_OR_NULL(pool) || WARN_ON_ONCE(self && self->pool == pool))
		return;

	/*
	 * Outside submissions are refused from here on: a submitter that
	 * saw shutdown, or read it after one that did, sees it again.
	 */
	WRITE_ONCE(pool->shutdown, true);
	/*
	 * Credits are taken with preemption off, by submitters that saw no
	 * shutdown: after a grace period, none is left to take one, and the
	 * reference can be killed, with its stock given back; a refill came
	 * before. (litmus/destroy-credits-return.litmus,
	 * litmus/destroy-refill-before-kill.litmus)
	 */
	synchronize_rcu();
	blitz_return_credits(pool);
	percpu_ref_kill(&pool->live);
	blitz_race_window(BLITZ_RACE_DESTROY_DRAIN);
	wait_for_completion(&pool->drained);
	/* A submitter may still be looking at the pool, with preemption off. */
	synchronize_rcu();

	/* Both at once: a create of the same name gets its directory. */
	mutex_lock(&blitz_pools_lock);
	blitz_debugfs_remove_pool(pool);
	list_del(&pool->node);
	mutex_unlock(&blitz_pools_lock);
	blitz_free_pool(pool);
}
EXPORT_SYMBOL_NS_GPL(blitz_pool_destroy, BLITZ_NS);

/*
 * Take the job's reference on @pool, with preemption off: a credit, while
 * we see no shutdown. A job of the pool holds a reference while it runs,
 * so what it submits is accepted even while the pool drains. @w is the
 * worker of @pool that the hint names, or NULL: a worker the hint missed
 * (without preempt notifiers, another worker ran on its CPU during its
 * job) is looked up only when the pool refuses, and then goes on as
 * itself.
 */
static __always_inline bool blitz_submit_get(struct blitz_pool *pool,
					     struct blitz_worker **w)
{
	if (likely(!READ_ONCE(pool->shutdown))) {
		blitz_take_credit(pool);
		return true;
	}
	if (!*w) {
		*w = blitz_current_worker();
		if (*w && (*w)->pool != pool)
			*w = NULL;
	}
	return *w && percpu_ref_tryget(&pool->live);
}

/*
 * Queue @job on an injection list and wake a worker for it. The caller
 * keeps @pool alive throughout: the job may run, and drop the last
 * reference, as soon as it is on the list.
 *
 * Only a job that finds the list empty marks it in the pool's queued
 * bitmap, where takers look (inject.h), and is posted to the sleep
 * protocol. One that finds jobs there rides along with them: the fully
 * ordered add read the list's head, so the llist_del_all() that takes
 * that job comes after ours and takes ours too, and that job was posted,
 * by whoever added the first job since the list was last emptied.
 * Preemption is off (the caller's) from the add to the post, so that a
 * submitter is never held up between the two while later jobs count on
 * its post (litmus/inject-ride-along.litmus). A burst from one CPU thus
 * reads no shared word after its first job, except while the worker it
 * woke, homed here, cannot run: then each job is posted, so that another
 * worker is woken (blitz_wake_for_job()).
 *
 * A job that rides along on a list nobody has taken for over a tick
 * wakes a sleeper, whatever the count of awake idle workers says: one
 * counted there may have been woken on a CPU that a task holds without
 * yielding (a busy loop under voluntary preemption, a SCHED_FIFO task),
 * and the first job's post counted on it (blitz_wake_stale()).
 *
 * From an interrupt of an idle CPU, the worker homed there can run the
 * job as soon as the interrupt returns: if it sleeps, wake it, even when
 * awake idle workers elsewhere would find the job. They may not be
 * running (a vCPU its host has descheduled), and a hardirq submitter saw
 * its jobs wait for them for milliseconds. Claiming the worker is fully
 * ordered, after the fully ordered queueing, and the woken flag a
 * release: the woken worker sees the job (litmus/inject-idle-wake.litmus).
 */
static __always_inline void blitz_inject(struct blitz_pool *pool,
					 struct blitz_job *job)
{
	unsigned int cpu, i;
	struct blitz_worker *w;
	bool first;

	lockdep_assert_preemption_disabled();
	/* Any CPU will do; ours keeps the list's cache line local. */
	cpu = smp_processor_id();
	i = pool->cpu_worker[cpu];
	w = pool->workers[i];
	first = blitz_inject_add(&w->inject, &job->node);
	blitz_race_window(BLITZ_RACE_INJECT_WAKE);
	if (first) {
		WRITE_ONCE(w->inject.since, jiffies);
		blitz_inject_mark(pool->queued, i);
	}
	if (blitz_on_idle_task() && w->cpu == cpu &&
	    test_bit(i, pool->sleepers) && blitz_wake_worker(w))
		return;
	/* blitz_inject_add() is fully ordered: no barrier of our own. */
	if (first || blitz_woken_behind_us(w))
		__blitz_new_jobs(pool, i);
	else if (unlikely(blitz_inject_stale(&w->inject)))
		blitz_wake_stale(pool, i);
}

/*
 * Queue @job on the injection list of @w, the current worker: a job it
 * submitted that its deque has no room for, or one it moves off its deque
 * to reach what is below. A group wait of @w looks for its group's jobs
 * there (group.c), whatever CPU @w runs on: the list of the worker homed
 * on this CPU is another's after a hotplug move or when workers share a
 * CPU, and that worker may be waiting too. Posted as blitz_inject() does;
 * the current worker is never woken behind us.
 */
void blitz_requeue(struct blitz_worker *w, struct blitz_job *job)
{
	preempt_disable();
	/* blitz_inject_add() is fully ordered: no barrier of our own. */
	if (blitz_inject_add(&w->inject, &job->node)) {
		blitz_inject_mark(w->pool->queued, w->index);
		__blitz_new_jobs(w->pool, w->index + 1);
	}
	preempt_enable();
}

/*
 * blitz_submit(), and blitz_group_submit() with @group: once the job is
 * ours (PENDING), it is counted in @group before it is queued. Inlined
 * into each, and without asking the kthread whether we are a worker:
 * the hint chooses between our deque and injection, and a worker it
 * misses injects, like any other task; but for a group's job, see below.
 */
static __always_inline int __blitz_submit(struct blitz_pool *pool,
					  struct blitz_job *job,
					  struct blitz_group *group)
{
	struct blitz_worker *w;
	int ret = 0;

	if (!job || !job->func || WARN_ON_ONCE(in_nmi()))
		return -EINVAL;
	if (!pool)
		pool = blitz_default_pool;

	/*
	 * A job of a group, from a worker of its pool, must go on that
	 * worker's own queues, where its blitz_group_wait() runs it: ask the
	 * kthread if the hint misses (the worker moved to another CPU while
	 * its own was offline, or, without preempt notifiers, another worker
	 * ran on this CPU since). Injected on this CPU's list, it could wait
	 * there for a free worker while every worker waits for a group
	 * (found by blitztorture with CPU hotplug).
	 */
	w = group ? blitz_current_worker() : blitz_hinted_worker();
	if (w && w->pool != pool)
		w = NULL;
	/*
	 * The job takes a reference, which it drops once it has run. From
	 * outside, the job may run and drop it before we are done waking:
	 * with preemption off, we keep the pool until then, as destroy
	 * waits for a grace period after the last reference.
	 */
	preempt_disable();
	RCU_LOCKDEP_WARN(!rcu_is_watching(),
			 "blitz_submit() where RCU is not watching");
	if (!blitz_submit_get(pool, &w)) {
		ret = -ESHUTDOWN;
		goto unlock;
	}
	/*
	 * Fully ordered; pairs with test_and_clear_bit() in blitz_execute().
	 * (litmus/submit-execute-pending.litmus)
	 */
	if (test_and_set_bit(BLITZ_JOB_PENDING, &job->state)) {
		percpu_ref_put(&pool->live);
		ret = -EBUSY;
		goto unlock;
	}
	job->group = group;
	if (group)
		atomic_long_inc(&group->pending);
	trace_blitz_submit(pool->name, job, w);

	if (!w) {
		blitz_inject(pool, job);
		goto unlock;
	}
	/* Switched out, we could see our CPU push too (promote.c). */
	if (blitz_deque_push(&w->deque, job)) {
		blitz_new_jobs(pool, w->index + 1);
	} else {
		blitz_stat_inc(w, BLITZ_STAT_OVERFLOWS);
		blitz_requeue(w, job);
	}
unlock:
	preempt_enable();
	return ret;
}

/**
 * blitz_submit - queue a job on a pool
 * @pool: the pool, or NULL for the default pool
 * @job: the job, initialised with BLITZ_JOB_INIT() or blitz_job_init()
 *
 * From a worker of @pool, in task context, the job goes on that worker's
 * own deque, or, when that is full, on its own injection list. When the
 * per-CPU hint misses it (on a kernel without preempt notifiers, another
 * worker ran on its CPU during the current job), a job of no group is
 * injected as from anywhere else: on the list of the worker this CPU
 * injects into, and a sleeping worker is woken if no awake one is idle.
 * The job runs once; from the moment its function starts it may be
 * submitted again or freed.
 *
 * Context: any: process, softirq or hardirq, with spinlocks held (but not
 * from NMI, nor holding a runqueue or pi_lock: it may wake a worker, nor
 * where RCU is not watching). Never sleeps, never allocates.
 * Return: 0 when queued; -EINVAL for a NULL @job or function; -EBUSY when
 * @job is queued and has not started yet; -ESHUTDOWN when @pool is being
 * destroyed (from inside one of its jobs, submissions are still accepted
 * while the pool drains).
 */
int blitz_submit(struct blitz_pool *pool, struct blitz_job *job)
{
	return __blitz_submit(pool, job, NULL);
}
EXPORT_SYMBOL_NS_GPL(blitz_submit, BLITZ_NS);

/* For blitz_group_submit() (group.c). */
int blitz_submit_group(struct blitz_pool *pool, struct blitz_job *job,
		       struct blitz_group *group)
{
	return __blitz_submit(pool, job, group);
}

/* === CPU hotplug === */

/**
 * blitz_worker_bind - allow a worker's thread where it runs now
 * @w: the worker, with a thread
 *
 * On its home CPU while the hotplug callbacks count that CPU online;
 * else on the pool's CPUs that they count online; else, the pool having
 * none, on the housekeeping CPUs, where the workqueue's unbind_worker()
 * puts an offline CPU's workers, or on any CPU if none of those is
 * online. Nothing on the worker's queues is stranded.
 *
 * Context: under the pool's manage_lock, under which the hotplug
 * callbacks change @pool->online and bind the pool's workers.
 */
void blitz_worker_bind(struct blitz_worker *w)
{
	struct blitz_pool *pool = w->pool;
	const struct cpumask *mask = blitz_hk_cpus;

	lockdep_assert_held(&pool->manage_lock);
	if (cpumask_test_cpu(w->cpu, pool->online))
		mask = cpumask_of(w->cpu);
	else if (!cpumask_empty(pool->online))
		mask = pool->online;
	/* Not @w's own thread: fails only if none of @mask is online. */
	if (set_cpus_allowed_ptr(w->task, mask))
		WARN_ON_ONCE(set_cpus_allowed_ptr(w->task, cpu_possible_mask));
}

/*
 * @cpu comes online (@online) or goes. The workers homed there, spares
 * too, follow; so do those of the pool's offline CPUs, which run on its
 * online ones (blitz_worker_bind()). Runs on @cpu, online in both calls.
 */
static void blitz_rehome(unsigned int cpu, bool online)
{
	struct blitz_pool *pool;
	struct blitz_worker *w;
	unsigned int i;

	mutex_lock(&blitz_pools_lock);
	list_for_each_entry(pool, &blitz_pools, node) {
		if (!cpumask_test_cpu(cpu, pool->cpumask))
			continue;
		/* Against the manager, which makes and binds spares. */
		mutex_lock(&pool->manage_lock);
		if (online)
			cpumask_set_cpu(cpu, pool->online);
		else
			cpumask_clear_cpu(cpu, pool->online);
		for (i = 0; i < pool->nr_slots; i++) {
			w = pool->workers[i];
			if (!w->task || (w->cpu != cpu &&
					 cpumask_test_cpu(w->cpu, pool->online)))
				continue;
			blitz_worker_bind(w);
		}
		mutex_unlock(&pool->manage_lock);
	}
	mutex_unlock(&blitz_pools_lock);
}

static int blitz_cpu_online(unsigned int cpu)
{
	blitz_rehome(cpu, true);
	return 0;
}

static int blitz_cpu_offline(unsigned int cpu)
{
	blitz_rehome(cpu, false);
	return 0;
}

/* The housekeeping CPUs, and the hotplug callbacks; before any pool. */
int blitz_hotplug_init(void)
{
	int ret;

	if (!alloc_cpumask_var(&blitz_hk_cpus, GFP_KERNEL))
		return -ENOMEM;
	blitz_housekeeping(blitz_hk_cpus);
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "blitz:online",
				blitz_cpu_online, blitz_cpu_offline);
	if (ret < 0) {
		free_cpumask_var(blitz_hk_cpus);
		return ret;
	}
	blitz_cpuhp_state = ret;
	return 0;
}

void blitz_hotplug_exit(void)
{
	cpuhp_remove_state(blitz_cpuhp_state);
	free_cpumask_var(blitz_hk_cpus);
}
