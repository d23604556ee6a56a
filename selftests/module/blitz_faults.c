// SPDX-License-Identifier: GPL-2.0
/*
 * Fault injection into blitz_pool_create(), for a kernel with failslab
 * (the debug guest kernel). Loading the module runs two sweeps; each makes
 * the n-th fault point of one task fail, for n = 1, 2, ... until a create
 * no longer reaches the n-th:
 *
 *   task      the creating task: the pool, its name and CPU map, the
 *             percpu_ref, each worker, each request that
 *             kthread_create_on_node() hands to kthreadd, and the debugfs
 *             directory;
 *   kthreadd  the task that forks the workers: kthread creation itself.
 *
 * fail-nth (current->fail_nth, /proc/<pid>/fail-nth) counts every fault
 * point a task passes, so the sweep needs no knowledge of blitz's
 * allocations. Each create must return ERR_PTR(-ENOMEM), for kthreadd
 * also ERR_PTR(-EAGAIN) (copy_process() gives it when the allocation of
 * the new kthread's struct kthread fails), or a pool that works: a fault
 * can land where failure is tolerated, such as a debugfs file, or
 * kmemleak's record of an allocation (it falls back to a reserve). After
 * a failed create, the name must be free again. Leaks are the business of
 * kmemleak, which debug_leaks.sh runs after unloading everything.
 *
 * Each sweep prints one line of counts; the load fails with -EINVAL if a
 * create returned anything else, if a sweep injected nothing (failslab
 * not armed: /sys/kernel/debug/failslab/ignore-gfp-wait must be N), or if
 * a sweep did not end.
 *
 * Loaded with spare=1, it runs one case instead: a spare that cannot be
 * made. In a pool of one worker, a job waits for a job submitted after
 * it, which a spare must run, while the caller (debug_faults.sh) has
 * failslab fail the first allocation made under the spare manager,
 * blitz_manage(), and only that one. The manager must make the spare
 * again later; the load fails if the first job waited 5 s. The caller
 * checks that failslab injected its fault.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/err.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/pid.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>

#define FAULTS_POOL	"faults"
#define FAULTS_WORKERS	2
/* Far more fault points than one create passes: a sweep that ends. */
#define FAULTS_MAX_NTH	2000

static bool spare;
module_param(spare, bool, 0444);
MODULE_PARM_DESC(spare, "only the spare that cannot be made, failslab armed by the caller");

struct faults_sweep {
	const char *name;
	struct task_struct *task;	/* whose n-th fault point fails */
	unsigned int injected;		/* creates that hit their fault */
	unsigned int survived;		/* ... and still gave a pool */
	unsigned int enomem;		/* ... and gave -ENOMEM */
	unsigned int eagain;		/* ... and gave -EAGAIN */
	unsigned int bad;		/* anything else */
};

static void faults_mark(void *arg)
{
	*(bool *)arg = true;
}

/* The pool works: a function runs in it. Then it goes. */
static int faults_use(struct blitz_pool *pool)
{
	bool ran = false;
	int ret;

	ret = blitz_call(pool, faults_mark, &ran);
	blitz_pool_destroy(pool);
	return ret ?: (ran ? 0 : -EIO);
}

/*
 * One create with the n-th fault point of @s->task armed. Return 1 when
 * the fault was injected, 0 when the create ended before the n-th, or a
 * negative error when it returned what it must not.
 */
static int faults_try(struct faults_sweep *s, unsigned int nth)
{
	struct blitz_pool *pool;
	bool injected;
	int err;

	WRITE_ONCE(s->task->fail_nth, nth);
	pool = blitz_pool_create(FAULTS_POOL, FAULTS_WORKERS);
	/* fail_nth counts down to 0 as it injects; disarm it either way. */
	injected = !xchg(&s->task->fail_nth, 0);

	if (!IS_ERR(pool)) {
		err = faults_use(pool);
		if (err) {
			pr_err("%s: n=%u: the pool did not work (%d)\n",
			       s->name, nth, err);
			return err;
		}
		s->survived += injected;
		return injected;
	}

	err = PTR_ERR(pool);
	if (!injected) {
		pr_err("%s: n=%u: no fault, yet error %d\n", s->name, nth, err);
		return err;
	}
	if (err == -ENOMEM) {
		s->enomem++;
	} else if (err == -EAGAIN && s->task != current) {
		s->eagain++;	/* copy_process(): set_kthread_struct() */
	} else {
		s->bad++;
		pr_err("%s: n=%u: error %d\n", s->name, nth, err);
	}

	/* Nothing of the failed pool is left: its name is free. */
	pool = blitz_pool_create(FAULTS_POOL, FAULTS_WORKERS);
	if (IS_ERR(pool)) {
		pr_err("%s: n=%u: create after the failure: %ld\n",
		       s->name, nth, PTR_ERR(pool));
		return PTR_ERR(pool);
	}
	return faults_use(pool) ?: 1;
}

static int faults_sweep(struct faults_sweep *s)
{
	unsigned int nth;
	int ret;

	for (nth = 1; nth <= FAULTS_MAX_NTH; nth++) {
		ret = faults_try(s, nth);
		if (ret < 0)
			return ret;
		if (ret) {
			s->injected++;
			continue;
		}
		pr_info("%s: %u creates with a fault injected: %u gave a working pool, %u -ENOMEM, %u -EAGAIN, %u other; create %u ran clean\n",
			s->name, s->injected, s->survived, s->enomem,
			s->eagain, s->bad, nth);
		if (!s->injected) {
			pr_err("%s: nothing injected: is failslab armed?\n",
			       s->name);
			return -ENODEV;
		}
		return s->bad ? -EINVAL : 0;
	}
	pr_err("%s: still injecting at n=%u\n", s->name, nth);
	return -E2BIG;
}

struct faults_later {
	struct blitz_job first, second;
	struct completion signal, done;
	bool timed_out;
};

static void faults_first(struct blitz_job *job)
{
	struct faults_later *l = container_of(job, struct faults_later, first);

	l->timed_out = !wait_for_completion_timeout(&l->signal, 5 * HZ);
	complete(&l->done);
}

static void faults_second(struct blitz_job *job)
{
	complete(&container_of(job, struct faults_later, second)->signal);
}

static int faults_spare(void)
{
	struct blitz_pool *pool = blitz_pool_create(FAULTS_POOL, 1);
	struct faults_later l;

	if (IS_ERR(pool)) {
		pr_err("spare: create: %ld\n", PTR_ERR(pool));
		return PTR_ERR(pool);
	}
	blitz_job_init(&l.first, faults_first);
	blitz_job_init(&l.second, faults_second);
	init_completion(&l.signal);
	init_completion(&l.done);
	WARN_ON(blitz_submit(pool, &l.first));
	WARN_ON(blitz_submit(pool, &l.second));
	wait_for_completion(&l.done);
	/* Drains: the second job has run. */
	blitz_pool_destroy(pool);
	pr_info("spare: the first job %s\n",
		l.timed_out ? "waited 5 s for the second" : "saw the second run");
	return l.timed_out ? -ETIMEDOUT : 0;
}

static int __init blitz_faults_init(void)
{
	struct faults_sweep task = { .name = "task", .task = current };
	struct faults_sweep kthreadd = { .name = "kthreadd" };
	int ret;

	if (spare)
		return faults_spare() ? -EINVAL : 0;

	ret = faults_sweep(&task);
	if (ret)
		return -EINVAL;

	/* kthreadd is pid 2 of the initial namespace, and never exits. */
	rcu_read_lock();
	kthreadd.task = pid_task(find_pid_ns(2, &init_pid_ns), PIDTYPE_PID);
	if (kthreadd.task)
		get_task_struct(kthreadd.task);
	rcu_read_unlock();
	if (!kthreadd.task || !(kthreadd.task->flags & PF_KTHREAD)) {
		pr_err("no kthreadd at pid 2\n");
		ret = -ESRCH;
	} else {
		ret = faults_sweep(&kthreadd);
	}
	if (kthreadd.task)
		put_task_struct(kthreadd.task);
	return ret ? -EINVAL : 0;
}

static void __exit blitz_faults_exit(void)
{
}

module_init(blitz_faults_init);
module_exit(blitz_faults_exit);

MODULE_DESCRIPTION("blitz: fault injection into pool creation and spares");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
