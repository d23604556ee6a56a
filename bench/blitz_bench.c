// SPDX-License-Identifier: GPL-2.0
/*
 * blitz benchmarks, side by side with what kernel code uses instead, in
 * the style of lib/test_objpool.c: each workload runs in the same boot as
 * its alternatives, results go to the kernel log as one table row each
 * ("bench: <workload> <variant> <value> <unit>"). Unlike lib/test_objpool.c
 * its init does not fail on purpose to unload itself: busybox insmod
 * retries a failed finit_module() with init_module(), which ran every
 * benchmark twice. tools/bench unloads it.
 *
 * Workloads (select with workloads=a,b,...; default all):
 *   fib       fork-join overhead: fib(n) with blitz_join() at every node,
 *             one worker and all workers, vs plain recursion
 *   tree      binary-tree sum, 1023 nodes and 2^tree_log2 nodes, vs
 *             sequential recursion
 *   burst     burst_jobs no-op jobs from one thread in a tight loop, no
 *             yields (as users write it), until all have run: ns per job
 *   percpu    the same from one thread per online CPU at once; and,
 *             before each repetition, the round trip of a cache line
 *             between the first two online CPUs, which the jobs' shared
 *             lines pay (the completion count every job decrements)
 *   hardirq   irq_per_fire jobs every irq_period_us from an hrtimer, in
 *             hard interrupt context: submit-to-start latency, p50, p99
 *   irqburst  burst_jobs no-op jobs from an hrtimer, in hard interrupt
 *             context, irq_burst at each fire, fires irq_gap_us apart:
 *             ns per job in the fires (the submit rate) and until all
 *             have run
 *   overload  one submitter per CPU, for overload_ms, of jobs that each
 *             busy-wait overload_job_us, faster than they run: the age of
 *             the oldest job at its start, in each half of the run
 *   scale     burst into private pools of 4, 16 and 64 workers (as many
 *             as there are possible CPUs)
 *   pfor      parallel_for over a compute-bound loop at several grains,
 *             vs N work items on system_unbound_wq + completion, vs
 *             sequential
 *   wake      latency from submit to start with all workers asleep
 *             (p50, p99 of wake_samples)
 *   mixed     mixed_jobs jobs from one thread, one pool: every other one
 *             sleeps mixed_sleep_us, the others compute mixed_compute_us;
 *             the total time, and the computing jobs' p99 from submit to
 *             end; mixed_reps repetitions
 *   block     a job that blocks with the next one queued behind it on its
 *             CPU (a pool of one worker, or the same CPU of system_wq):
 *             from the block until the next starts (p50, p99 of
 *             block_samples)
 *   idle      busy time of all CPUs for idle_secs while idle, and with one
 *             job every 1 ms and 10 ms, vs the same through system_wq, in
 *             parts per 10000 of all CPUs
 *
 * Every workload runs its variants (blitz; queue_work() on system_wq and
 * system_unbound_wq; plain code) reps times, interleaved: A B C A B C
 * ..., so that drift hits every variant alike, and reports the median,
 * min and max of each; ratios are of medians.
 */
#define pr_fmt(fmt) "bench: " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/tick.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/random.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "../selftests/fib.h"

static char *workloads = "all";
module_param(workloads, charp, 0444);
static unsigned int fib_n = 27;
module_param(fib_n, uint, 0444);
static unsigned int tree_log2 = 24;
module_param(tree_log2, uint, 0444);
static unsigned int tree_small_loops = 1000;
module_param(tree_small_loops, uint, 0444);
MODULE_PARM_DESC(tree_small_loops, "sums of tree1023 per timed run");
static unsigned int burst_jobs = 200000;
module_param(burst_jobs, uint, 0444);
MODULE_PARM_DESC(burst_jobs, "jobs per run of burst, percpu, irqburst and scale");
#define BENCH_MAX_REPS	15
static unsigned int reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "interleaved repetitions of each variant (at most 15)");
static unsigned int irq_jobs = 2000;
module_param(irq_jobs, uint, 0444);
static unsigned int irq_per_fire = 8;
module_param(irq_per_fire, uint, 0444);
static unsigned int irq_period_us = 100;
module_param(irq_period_us, uint, 0444);
static unsigned int irq_burst = 1000;
module_param(irq_burst, uint, 0444);
MODULE_PARM_DESC(irq_burst, "jobs submitted per fire of irqburst's hrtimer");
static unsigned int irq_gap_us = 10;
module_param(irq_gap_us, uint, 0444);
MODULE_PARM_DESC(irq_gap_us, "from the end of one fire of irqburst to the next");
static unsigned int overload_ms = 2000;
module_param(overload_ms, uint, 0444);
static unsigned int overload_job_us = 20;
module_param(overload_job_us, uint, 0444);
static unsigned int overload_slots = 2048;
module_param(overload_slots, uint, 0444);
MODULE_PARM_DESC(overload_slots, "jobs each overload submitter cycles through");
static unsigned int pfor_n = 1 << 16;
module_param(pfor_n, uint, 0444);
static unsigned int pfor_work = 500;
module_param(pfor_work, uint, 0444);
MODULE_PARM_DESC(pfor_work, "inner iterations per parallel_for index");
static unsigned int group_jobs = 4096;
module_param(group_jobs, uint, 0444);
static unsigned int reduce_log2 = 20;
module_param(reduce_log2, uint, 0444);
static unsigned int sort_n = 1000000;
module_param(sort_n, uint, 0444);
static unsigned int idle_secs = 2;
module_param(idle_secs, uint, 0444);
static unsigned int wake_samples = 100;
module_param(wake_samples, uint, 0444);
static unsigned int mixed_jobs = 512;
module_param(mixed_jobs, uint, 0444);
static unsigned int mixed_sleep_us = 1000;
module_param(mixed_sleep_us, uint, 0444);
static unsigned int mixed_compute_us = 50;
module_param(mixed_compute_us, uint, 0444);
static unsigned int mixed_reps = 15;
module_param(mixed_reps, uint, 0444);
MODULE_PARM_DESC(mixed_reps,
		 "interleaved repetitions of mixed (at most 15): a short workload");
static unsigned int block_samples = 200;
module_param(block_samples, uint, 0444);

static void report(const char *workload, const char *variant, u64 value,
		   const char *unit)
{
	pr_info("%s %s %llu %s\n", workload, variant, value, unit);
}

static bool selected(const char *name)
{
	const char *p = workloads;
	size_t len = strlen(name);

	if (!strcmp(workloads, "all"))
		return true;
	while ((p = strstr(p, name))) {
		if ((p == workloads || p[-1] == ',') &&
		    (!p[len] || p[len] == ','))
			return true;
		p += len;
	}
	return false;
}

/* === Interleaved repetitions === */

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

/* @nr repetitions asked for, within 1..BENCH_MAX_REPS. */
static unsigned int bench_nr_reps(unsigned int nr)
{
	return clamp(nr, 1U, (unsigned int)BENCH_MAX_REPS);
}

/* Repetitions of each variant: reps, within 1..BENCH_MAX_REPS. */
static unsigned int bench_reps(void)
{
	return bench_nr_reps(reps);
}

/*
 * Report the median, min and max of the @nr values of @variant (sorting
 * them) as <variant>_median, _min and _max; return the median.
 */
static u64 report_stats(const char *workload, const char *variant,
			u64 *vals, unsigned int nr, const char *unit)
{
	char name[64];

	sort(vals, nr, sizeof(*vals), cmp_u64, NULL);
	snprintf(name, sizeof(name), "%s_median", variant);
	report(workload, name, vals[nr / 2], unit);
	snprintf(name, sizeof(name), "%s_min", variant);
	report(workload, name, vals[0], unit);
	snprintf(name, sizeof(name), "%s_max", variant);
	report(workload, name, vals[nr - 1], unit);
	return vals[nr / 2];
}

/* @num / @den, x 100. */
static void report_ratio(const char *workload, const char *name, u64 num,
			 u64 den)
{
	report(workload, name, num * 100 / max(den, 1ULL), "x/100");
}

#define BENCH_MAX_VARIANTS	5

/* One way of doing a workload's work: one timed run, in @unit. */
struct bench_variant {
	const char *name;
	u64 (*run)(void *arg);
	const char *unit;
};

/*
 * Run each of @nr variants reps times, interleaved, A B C A B C ...: drift
 * hits every variant alike. Report each one's median, min and max, and
 * return the medians in @med.
 */
static void bench_interleave(const char *workload,
			     const struct bench_variant *v, unsigned int nr,
			     void *arg, u64 *med)
{
	u64 vals[BENCH_MAX_VARIANTS][BENCH_MAX_REPS];
	unsigned int r, i;

	for (r = 0; r < bench_reps(); r++)
		for (i = 0; i < nr; i++)
			vals[i][r] = v[i].run(arg);
	for (i = 0; i < nr; i++)
		med[i] = report_stats(workload, v[i].name, vals[i],
				      bench_reps(), v[i].unit);
}

/*
 * The floor of a fork-join with blitz_join()'s signature: a join that
 * calls a, then b, inline, as blitz_join()'s fast path does, and nothing
 * else (Chili's join_no_overhead). The same recursions through it show
 * what the shape of the API costs (arguments and results in memory, a
 * call for each half) apart from what blitz does.
 */
static __always_inline void bench_calls(void (*a)(void *arg), void *a_arg,
					void (*b)(void *arg), void *b_arg)
{
	a(a_arg);
	b(b_arg);
}

/* === fib === */

struct fib_bench {
	struct blitz_pool *one;
	unsigned long want;
};

/* fib_join() (selftests/fib.h) through bench_calls(). */
static void fib_calls(void *arg)
{
	struct fib *f = arg;
	struct fib a = { f->n - 1 }, b = { f->n - 2 };

	if (f->n < 2) {
		f->result = f->n;
		return;
	}
	bench_calls(fib_calls, &a, fib_calls, &b);
	f->result = a.result + b.result;
}

static u64 fib_calls_us(void *arg)
{
	struct fib_bench *b = arg;
	struct fib f = { fib_n };
	u64 t0 = ktime_get_ns();

	fib_calls(&f);
	if (f.result != b->want)
		pr_err("fib mismatch\n");
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static u64 fib_plain_us(void *arg)
{
	struct fib_bench *b = arg;
	u64 t0 = ktime_get_ns();

	if (fib_plain(fib_n) != b->want)
		pr_err("fib mismatch\n");
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static u64 fib_join_us(struct blitz_pool *pool, unsigned long want)
{
	struct fib f = { fib_n };
	u64 t0 = ktime_get_ns();

	blitz_call(pool, fib_join, &f);
	if (f.result != want)
		pr_err("fib mismatch\n");
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static u64 fib_one_us(void *arg)
{
	struct fib_bench *b = arg;

	return fib_join_us(b->one, b->want);
}

static u64 fib_all_us(void *arg)
{
	struct fib_bench *b = arg;

	return fib_join_us(NULL, b->want);
}

/* (@us - @base_us) / @joins, in ps, or 0. */
static u64 ps_per_join(u64 us, u64 base_us, unsigned long joins)
{
	return us > base_us ? (us - base_us) * 1000000 / joins : 0;
}

/*
 * ps per join: overhead, (time in a one-worker pool - plain time) /
 * joins; floor, the same for bench_calls(); bookkeeping, the difference.
 */
static void bench_fib(void)
{
	static const struct bench_variant v[] = {
		{ "plain_us", fib_plain_us, "us" },
		{ "calls_us", fib_calls_us, "us" },
		{ "join_1worker_us", fib_one_us, "us" },
		{ "join_allworkers_us", fib_all_us, "us" },
	};
	unsigned long joins = fib_plain(fib_n + 1) - 1;
	struct fib_bench b = { .want = fib_plain(fib_n) };
	u64 med[ARRAY_SIZE(v)];

	b.one = blitz_pool_create("bench-one", 1);
	if (IS_ERR(b.one))
		return;
	bench_interleave("fib", v, ARRAY_SIZE(v), &b, med);
	blitz_pool_destroy(b.one);
	report("fib", "overhead_1worker_ps_per_join",
	       ps_per_join(med[2], med[0], joins), "ps");
	report("fib", "floor_ps_per_join", ps_per_join(med[1], med[0], joins),
	       "ps");
	report("fib", "bookkeeping_ps_per_join",
	       ps_per_join(med[2], med[1], joins), "ps");
	report_ratio("fib", "speedup_allworkers_x100", med[0], med[3]);
	report_ratio("fib", "speedup_vs_1worker_x100", med[2], med[3]);
}

/* === Binary-tree sum (Spice / Chili benchmark) === */

struct tree_node {
	struct tree_node *left, *right;
	long value;
};

static struct tree_node *tree_build(struct tree_node *nodes, unsigned long *next,
				    unsigned int depth)
{
	struct tree_node *n = &nodes[(*next)++];

	n->value = *next;
	n->left = depth ? tree_build(nodes, next, depth - 1) : NULL;
	n->right = depth ? tree_build(nodes, next, depth - 1) : NULL;
	return n;
}

static long tree_sum_seq(struct tree_node *n)
{
	long s = n->value;

	if (n->left)
		s += tree_sum_seq(n->left);
	if (n->right)
		s += tree_sum_seq(n->right);
	return s;
}

struct tree_arg {
	struct tree_node *node;
	long sum;
};

static void tree_sum_join(void *arg)
{
	struct tree_arg *t = arg;
	struct tree_arg l = { t->node->left }, r = { t->node->right };

	if (!l.node) {
		t->sum = t->node->value;
		return;
	}
	blitz_join(tree_sum_join, &l, tree_sum_join, &r);
	t->sum = t->node->value + l.sum + r.sum;
}

/* tree_sum_join() through bench_calls(). */
static void tree_sum_calls(void *arg)
{
	struct tree_arg *t = arg;
	struct tree_arg l = { t->node->left }, r = { t->node->right };

	if (!l.node) {
		t->sum = t->node->value;
		return;
	}
	bench_calls(tree_sum_calls, &l, tree_sum_calls, &r);
	t->sum = t->node->value + l.sum + r.sum;
}

struct tree_bench {
	struct tree_node *root;
	long want;
	unsigned int loops;
	u64 ns;
	struct blitz_pool *one;
};

/* ns per sum of @loops sums by @sum, which fills a struct tree_arg. */
static u64 tree_loop_ns(struct tree_bench *b, void (*sum)(void *arg))
{
	struct tree_arg t = { b->root };
	u64 t0 = ktime_get_ns();
	unsigned int i;

	for (i = 0; i < b->loops; i++) {
		sum(&t);
		if (t.sum != b->want)
			pr_err("tree sum mismatch\n");
		/* Each sum is made: none is hoisted out of the loop. */
		barrier();
	}
	return (ktime_get_ns() - t0) / b->loops;
}

static void tree_sum_seq_arg(void *arg)
{
	struct tree_arg *t = arg;

	t->sum = tree_sum_seq(t->node);
}

static u64 tree_seq_ns(void *arg)
{
	return tree_loop_ns(arg, tree_sum_seq_arg);
}

static u64 tree_calls_ns(void *arg)
{
	return tree_loop_ns(arg, tree_sum_calls);
}

/* In a worker, as a recursion of the pool's own runs it. */
static void tree_blitz_loop(void *arg)
{
	struct tree_bench *b = arg;

	b->ns = tree_loop_ns(b, tree_sum_join);
}

static u64 tree_blitz_in(struct tree_bench *b, struct blitz_pool *pool)
{
	blitz_call(pool, tree_blitz_loop, b);
	return b->ns;
}

static u64 tree_blitz_one_ns(void *arg)
{
	struct tree_bench *b = arg;

	return tree_blitz_in(b, b->one);
}

static u64 tree_blitz_ns(void *arg)
{
	return tree_blitz_in(arg, NULL);
}

/*
 * One sum from a plain task, as a user calls it: blitz_call() into a
 * sleeping pool, and the wake-ups there and back.
 */
static u64 tree_blitz_call_ns(void *arg)
{
	struct tree_bench *b = arg;
	struct tree_arg t = { b->root };
	u64 t0 = ktime_get_ns();

	blitz_call(NULL, tree_sum_join, &t);
	if (t.sum != b->want)
		pr_err("tree sum mismatch\n");
	return ktime_get_ns() - t0;
}

/*
 * A tree of 2^(@depth + 1) - 1 nodes, summed @loops times per timed run
 * (a small tree's sum is shorter than a clock tick in UML).
 */
static void bench_tree_one(unsigned int depth, unsigned int loops,
			   const char *name, struct blitz_pool *one)
{
	static const struct bench_variant v[] = {
		{ "sequential_ns", tree_seq_ns, "ns" },
		{ "calls_ns", tree_calls_ns, "ns" },
		{ "blitz_1worker_ns", tree_blitz_one_ns, "ns" },
		{ "blitz_ns", tree_blitz_ns, "ns" },
		{ "blitz_call_ns", tree_blitz_call_ns, "ns" },
	};
	unsigned long nr = (1UL << (depth + 1)) - 1, next = 0;
	struct tree_bench b = { .one = one, .loops = max(loops, 1U) };
	struct tree_node *nodes;
	u64 med[ARRAY_SIZE(v)];

	nodes = vmalloc(array_size(nr, sizeof(*nodes)));
	if (!nodes)
		return;
	b.root = tree_build(nodes, &next, depth);
	b.want = tree_sum_seq(b.root);
	bench_interleave(name, v, ARRAY_SIZE(v), &b, med);
	report_ratio(name, "calls_vs_seq_x100", med[1], med[0]);
	report_ratio(name, "blitz_1worker_vs_seq_x100", med[2], med[0]);
	report_ratio(name, "blitz_vs_seq_x100", med[3], med[0]);
	report_ratio(name, "blitz_call_vs_seq_x100", med[4], med[0]);
	report_ratio(name, "blitz_1worker_vs_calls_x100", med[2], med[1]);
	report_ratio(name, "blitz_vs_calls_x100", med[3], med[1]);
	report_ratio(name, "speedup_x100", med[0], med[3]);
	report_ratio(name, "speedup_vs_1worker_x100", med[2], med[3]);
	vfree(nodes);
}

/* Sums of 1023 nodes (all workers, one) and of 2^tree_log2 - 1. */
static void bench_tree(void)
{
	struct blitz_pool *one = blitz_pool_create("bench-one", 1);
	char name[24];

	if (IS_ERR(one))
		return;
	bench_tree_one(9, tree_small_loops, "tree1023", one);
	snprintf(name, sizeof(name), "tree2^%u", tree_log2);
	bench_tree_one(tree_log2 - 1, 1, name, one);
	blitz_pool_destroy(one);
}

/* === Submitting jobs: blitz against the system workqueues === */

enum bench_target {
	BENCH_BLITZ,
	BENCH_SYSTEM_WQ,
	BENCH_UNBOUND_WQ,
	BENCH_NR_TARGETS,
};

static const char *const target_names[BENCH_NR_TARGETS] = {
	"blitz", "system_wq", "system_unbound_wq",
};

/* Either kind of job, with room for what a workload records. */
struct bench_job {
	union {
		struct blitz_job job;
		struct work_struct work;
	};
	u64 queued, started;
	atomic_t busy;
};

/* Make @nr jobs ready to be queued through @how, again and again. */
static void bench_init(struct bench_job *jobs, unsigned int nr,
		       enum bench_target how,
		       void (*job_fn)(struct blitz_job *job),
		       void (*work_fn)(struct work_struct *work))
{
	unsigned int i;

	for (i = 0; i < nr; i++) {
		if (how == BENCH_BLITZ)
			blitz_job_init(&jobs[i].job, job_fn);
		else
			INIT_WORK(&jobs[i].work, work_fn);
	}
}

/* Queue @j through @how; blitz jobs go to @pool (NULL: the default). */
static void bench_queue(struct bench_job *j, enum bench_target how,
			struct blitz_pool *pool)
{
	if (how == BENCH_BLITZ)
		blitz_submit(pool, &j->job);
	else
		queue_work(how == BENCH_SYSTEM_WQ ? system_wq :
			   system_unbound_wq, &j->work);
}

/* === Threads on every online CPU, started together === */

/*
 * Start @fn on a kthread bound to each online CPU, the k-th with argument
 * @args + k * @size, into @tasks. Returns how many started: all online
 * CPUs, or fewer on a failure. bench_threads_stop() stops them.
 */
static unsigned int bench_threads_start(int (*fn)(void *arg), void *args,
					size_t size, struct task_struct **tasks)
{
	unsigned int k = 0;
	int cpu;

	for_each_online_cpu(cpu) {
		tasks[k] = kthread_create_on_node(fn, args + k * size,
						  cpu_to_node(cpu),
						  "bench/%d", cpu);
		if (IS_ERR(tasks[k]))
			break;
		kthread_bind(tasks[k], cpu);
		wake_up_process(tasks[k++]);
	}
	return k;
}

static void bench_threads_stop(struct task_struct **tasks, unsigned int nr)
{
	while (nr--)
		kthread_stop(tasks[nr]);
}

/* A bench thread is done: it is module code, so it waits to be stopped. */
static int bench_thread_done(void)
{
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

/*
 * Report each target's @what (median, min, max of @nr repetitions), and
 * how many times better blitz's median is than each other's, x 100, as
 * blitz_vs_<target>_<what>_x100: lower is better unless @more_is_better.
 */
static void report_targets_nr(const char *workload, const char *what,
			      u64 vals[BENCH_NR_TARGETS][BENCH_MAX_REPS],
			      unsigned int nr, const char *unit,
			      bool more_is_better)
{
	u64 med[BENCH_NR_TARGETS];
	char name[64];
	int how;

	for (how = 0; how < BENCH_NR_TARGETS; how++) {
		snprintf(name, sizeof(name), "%s_%s", target_names[how], what);
		med[how] = report_stats(workload, name, vals[how], nr, unit);
	}
	for (how = BENCH_SYSTEM_WQ; how < BENCH_NR_TARGETS; how++) {
		snprintf(name, sizeof(name), "blitz_vs_%s_%s_x100",
			 target_names[how], what);
		if (more_is_better)
			report_ratio(workload, name, med[BENCH_BLITZ], med[how]);
		else
			report_ratio(workload, name, med[how], med[BENCH_BLITZ]);
	}
}

/* The same, of bench_reps() repetitions. */
static void report_targets(const char *workload, const char *what,
			   u64 vals[BENCH_NR_TARGETS][BENCH_MAX_REPS],
			   const char *unit, bool more_is_better)
{
	report_targets_nr(workload, what, vals, bench_reps(), unit,
			  more_is_better);
}

static atomic_t noop_left;
static DECLARE_COMPLETION(noop_done);

static void noop_done_one(void)
{
	if (atomic_dec_and_test(&noop_left))
		complete(&noop_done);
}

static void noop_job(struct blitz_job *job)
{
	noop_done_one();
}

static void noop_work(struct work_struct *work)
{
	noop_done_one();
}

static void noop_expect(unsigned int nr)
{
	atomic_set(&noop_left, nr);
	reinit_completion(&noop_done);
}

/*
 * One submitter, a tight loop with no yield (as users write it): @nr
 * no-op jobs through @how, until all have run. Returns ns per job.
 */
static u64 burst_run(struct bench_job *jobs, unsigned int nr,
		     enum bench_target how, struct blitz_pool *pool)
{
	unsigned int i;
	u64 t0;

	bench_init(jobs, nr, how, noop_job, noop_work);
	noop_expect(nr);
	t0 = ktime_get_ns();
	for (i = 0; i < nr; i++)
		bench_queue(&jobs[i], how, pool);
	wait_for_completion(&noop_done);
	return (ktime_get_ns() - t0) / nr;
}

static void bench_burst(void)
{
	struct bench_job *jobs = vcalloc(burst_jobs, sizeof(*jobs));
	u64 ns[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	unsigned int r;
	int how;

	if (!jobs || !burst_jobs)
		goto out;
	/* Interleaved, A B C A B C ...: drift hits every variant alike. */
	for (r = 0; r < bench_reps(); r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			ns[how][r] = burst_run(jobs, burst_jobs, how, NULL);
	report_targets("burst", "ns_per_job", ns, "ns", false);
out:
	vfree(jobs);
}

/* One submitter per online CPU, bound there, all started at once. */
struct percpu_submitter {
	struct bench_job *jobs;
	unsigned int nr;
	enum bench_target how;
	struct completion *go;
};

static int percpu_submit_fn(void *arg)
{
	struct percpu_submitter *s = arg;
	unsigned int i;

	wait_for_completion(s->go);
	for (i = 0; i < s->nr; i++)
		bench_queue(&s->jobs[i], s->how, NULL);
	return bench_thread_done();
}

/* ns per job until all have run, or 0 if a thread failed to start. */
static u64 percpu_run(struct bench_job *jobs, enum bench_target how,
		      struct percpu_submitter *subs, struct task_struct **tasks)
{
	unsigned int ncpu = num_online_cpus(), per = burst_jobs / ncpu, k, i;
	DECLARE_COMPLETION_ONSTACK(go);
	u64 t0, ns;

	bench_init(jobs, per * ncpu, how, noop_job, noop_work);
	noop_expect(per * ncpu);
	for (k = 0; k < ncpu; k++)
		subs[k] = (struct percpu_submitter){
			&jobs[k * per], per, how, &go
		};
	k = bench_threads_start(percpu_submit_fn, subs, sizeof(*subs), tasks);
	if (k < ncpu) {
		/* Release those that started, with nothing to submit. */
		for (i = 0; i < k; i++)
			subs[i].nr = 0;
		complete_all(&go);
		bench_threads_stop(tasks, k);
		return 0;
	}
	t0 = ktime_get_ns();
	complete_all(&go);
	wait_for_completion(&noop_done);
	ns = (ktime_get_ns() - t0) / (per * ncpu);
	bench_threads_stop(tasks, k);
	return ns;
}

/*
 * A cache line's round trip between the first two online CPUs: a thread
 * on each writes the next count when it sees the other's,
 * BENCH_RTT_ROUNDS times or for BENCH_RTT_NS, whichever ends first (a
 * vCPU preempted on the host stalls the other).
 */
#define BENCH_RTT_ROUNDS	10000
#define BENCH_RTT_NS		(20 * NSEC_PER_MSEC)

struct rtt_arg {
	long *line;
	unsigned int role;	/* 0 times, 1 answers, others idle */
	struct completion *go, *done;
	u64 ns;
};

/* Wait until *@line is @want, or less than 0; false after @end (ns). */
static bool rtt_wait(long *line, long want, u64 end)
{
	unsigned int spins = 0;
	long seen;

	while ((seen = READ_ONCE(*line)) != want) {
		if (seen < 0 || (!(++spins % 64) && ktime_get_ns() > end))
			return false;
		cpu_relax();
	}
	return true;
}

static int rtt_fn(void *arg)
{
	struct rtt_arg *a = arg;
	u64 t0, end;
	long i;

	/* Not before all are started: the starter may share our CPU. */
	wait_for_completion(a->go);
	t0 = ktime_get_ns();
	end = t0 + BENCH_RTT_NS;
	if (a->role == 1) {
		/*
		 * Answer each odd count with the next, until told to stop:
		 * not over the stop, which may come as we answer.
		 */
		for (i = 1; rtt_wait(a->line, i, U64_MAX); i += 2)
			cmpxchg(a->line, i, i + 1);
	} else if (a->role == 0) {
		for (i = 0; i < BENCH_RTT_ROUNDS; i++) {
			WRITE_ONCE(*a->line, 2 * i + 1);
			if (!rtt_wait(a->line, 2 * i + 2, end))
				break;
		}
		a->ns = (ktime_get_ns() - t0) / max(i, 1L);
		WRITE_ONCE(*a->line, -1);
		complete(a->done);
	}
	return bench_thread_done();
}

/* The round trip in ns, or 0 if a thread failed to start. */
static u64 rtt_run(struct rtt_arg *args, struct task_struct **tasks)
{
	unsigned int ncpu = num_online_cpus(), k;
	DECLARE_COMPLETION_ONSTACK(go);
	DECLARE_COMPLETION_ONSTACK(done);
	u64 ns = 0;

	WRITE_ONCE(*args[0].line, 0);
	for (k = 0; k < ncpu; k++)
		args[k] = (struct rtt_arg){
			.line = args[0].line, .role = k, .go = &go, .done = &done
		};
	k = bench_threads_start(rtt_fn, args, sizeof(*args), tasks);
	complete_all(&go);
	/*
	 * The timing thread stops the answering one, or, alone, gives up
	 * after BENCH_RTT_NS; a thread stopped before it first ran never
	 * runs rtt_fn().
	 */
	if (k)
		wait_for_completion(&done);
	bench_threads_stop(tasks, k);
	if (k == ncpu)
		ns = args[0].ns;
	return ns;
}

static void bench_percpu(void)
{
	unsigned int ncpu = num_online_cpus(), r;
	struct bench_job *jobs = vcalloc(burst_jobs, sizeof(*jobs));
	struct percpu_submitter *subs = kcalloc(ncpu, sizeof(*subs),
						GFP_KERNEL);
	struct task_struct **tasks = kcalloc(ncpu, sizeof(*tasks), GFP_KERNEL);
	struct rtt_arg *rtt = kcalloc(ncpu, sizeof(*rtt), GFP_KERNEL);
	long *line = kzalloc(L1_CACHE_BYTES, GFP_KERNEL);
	u64 ns[BENCH_NR_TARGETS][BENCH_MAX_REPS], rtt_ns[BENCH_MAX_REPS];
	int how;

	if (!jobs || !subs || !tasks || !rtt || !line || burst_jobs < ncpu)
		goto out;
	rtt[0].line = line;
	for (r = 0; r < bench_reps(); r++) {
		if (ncpu > 1)
			rtt_ns[r] = rtt_run(rtt, tasks);
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			ns[how][r] = percpu_run(jobs, how, subs, tasks);
	}
	report_targets("percpu", "ns_per_job", ns, "ns", false);
	if (ncpu > 1)
		report_stats("percpu", "cpu_rtt_ns", rtt_ns, bench_reps(),
			     "ns");
out:
	kfree(line);
	kfree(rtt);
	kfree(tasks);
	kfree(subs);
	vfree(jobs);
}

/*
 * A hardirq submitter: an hrtimer, every irq_period_us, submits
 * irq_per_fire jobs; each job records when it started. Latency from
 * submit to start, p50 and p99.
 */
struct irq_submitter {
	struct hrtimer timer;
	struct bench_job *jobs;
	unsigned int next, nr;
	enum bench_target how;
};

/*
 * Sort @nr latencies in ns; return their p50 and p99 in us, by nearest
 * rank: of 100 samples, the 50th and the 99th smallest (not the largest).
 */
static void latency_percentiles(u64 *lat, unsigned int nr, u64 *p50,
				u64 *p99)
{
	sort(lat, nr, sizeof(*lat), cmp_u64, NULL);
	*p50 = lat[DIV_ROUND_UP(nr * 50, 100) - 1] / NSEC_PER_USEC;
	*p99 = lat[DIV_ROUND_UP(nr * 99, 100) - 1] / NSEC_PER_USEC;
}

static void stamp_done(struct bench_job *j)
{
	j->started = ktime_get_ns();
	noop_done_one();
}

static void stamp_job(struct blitz_job *job)
{
	stamp_done(container_of(job, struct bench_job, job));
}

static void stamp_work(struct work_struct *work)
{
	stamp_done(container_of(work, struct bench_job, work));
}

static enum hrtimer_restart irq_submit_fire(struct hrtimer *t)
{
	struct irq_submitter *s = container_of(t, struct irq_submitter, timer);
	unsigned int k;

	for (k = 0; k < irq_per_fire && s->next < s->nr; k++, s->next++) {
		s->jobs[s->next].queued = ktime_get_ns();
		bench_queue(&s->jobs[s->next], s->how, NULL);
	}
	if (s->next == s->nr)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime((u64)irq_period_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void irq_run(struct bench_job *jobs, u64 *lat, enum bench_target how,
		    u64 *p50, u64 *p99)
{
	struct irq_submitter s = {
		.jobs = jobs, .nr = irq_jobs, .how = how,
	};
	unsigned int i;

	bench_init(jobs, irq_jobs, how, stamp_job, stamp_work);
	noop_expect(irq_jobs);
	hrtimer_init_on_stack(&s.timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	s.timer.function = irq_submit_fire;
	hrtimer_start(&s.timer, ns_to_ktime((u64)irq_period_us * NSEC_PER_USEC),
		      HRTIMER_MODE_REL_HARD);
	wait_for_completion(&noop_done);
	hrtimer_cancel(&s.timer);
	destroy_hrtimer_on_stack(&s.timer);
	for (i = 0; i < irq_jobs; i++)
		lat[i] = jobs[i].started - jobs[i].queued;
	latency_percentiles(lat, irq_jobs, p50, p99);
}

static void bench_hardirq(void)
{
	struct bench_job *jobs = vcalloc(irq_jobs, sizeof(*jobs));
	u64 *lat = vcalloc(irq_jobs, sizeof(*lat));
	u64 p50[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 p99[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	unsigned int r;
	int how;

	if (!jobs || !lat || !irq_jobs || !irq_per_fire)
		goto out;
	for (r = 0; r < bench_reps(); r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			irq_run(jobs, lat, how, &p50[how][r], &p99[how][r]);
	report_targets("hardirq", "p50_us", p50, "us", false);
	report_targets("hardirq", "p99_us", p99, "us", false);
out:
	vfree(lat);
	vfree(jobs);
}

/*
 * The burst from hard interrupt context: an hrtimer submits irq_burst
 * no-op jobs at each fire, in a tight loop, and fires again irq_gap_us
 * after it is done (not a period: fires never queue up behind a slow
 * one), until burst_jobs have been submitted. Measured: the time until
 * all have run, per job, which includes the gaps and the timer's own
 * cost, the same for every target (hence many jobs per fire); and the
 * time in the fires alone, per job: what a submit costs the CPU it
 * interrupts.
 */
struct irq_burst {
	struct hrtimer timer;
	struct bench_job *jobs;
	unsigned int next, nr;
	enum bench_target how;
	u64 in_irq_ns;
};

static enum hrtimer_restart irq_burst_fire(struct hrtimer *t)
{
	struct irq_burst *s = container_of(t, struct irq_burst, timer);
	u64 t0 = ktime_get_ns();
	unsigned int k;

	for (k = 0; k < irq_burst && s->next < s->nr; k++, s->next++)
		bench_queue(&s->jobs[s->next], s->how, NULL);
	s->in_irq_ns += ktime_get_ns() - t0;
	if (s->next == s->nr)
		return HRTIMER_NORESTART;
	hrtimer_set_expires(t, ktime_add_us(ktime_get(), irq_gap_us));
	return HRTIMER_RESTART;
}

static void irq_burst_run(struct bench_job *jobs, enum bench_target how,
			  u64 *submit_ns, u64 *ns)
{
	struct irq_burst s = {
		.jobs = jobs, .nr = burst_jobs, .how = how,
	};
	u64 t0;

	bench_init(jobs, burst_jobs, how, noop_job, noop_work);
	noop_expect(burst_jobs);
	hrtimer_init_on_stack(&s.timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	s.timer.function = irq_burst_fire;
	t0 = ktime_get_ns();
	hrtimer_start(&s.timer, 0, HRTIMER_MODE_REL_HARD);
	wait_for_completion(&noop_done);
	*ns = (ktime_get_ns() - t0) / burst_jobs;
	hrtimer_cancel(&s.timer);
	destroy_hrtimer_on_stack(&s.timer);
	*submit_ns = s.in_irq_ns / burst_jobs;
}

static void bench_irqburst(void)
{
	struct bench_job *jobs = vcalloc(burst_jobs, sizeof(*jobs));
	u64 submit_ns[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 ns[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	unsigned int r;
	int how;

	if (!jobs || !burst_jobs || !irq_burst)
		goto out;
	for (r = 0; r < bench_reps(); r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			irq_burst_run(jobs, how, &submit_ns[how][r],
				      &ns[how][r]);
	report_targets("irqburst", "submit_ns_per_job", submit_ns, "ns", false);
	report_targets("irqburst", "ns_per_job", ns, "ns", false);
out:
	vfree(jobs);
}

/*
 * A sustained overload: one submitter per online CPU, for overload_ms,
 * submits jobs that each busy-wait overload_job_us, faster than they can
 * run, cycling through its own overload_slots jobs and skipping a slot
 * whose job has not run yet. Each job records its age (start - submit):
 * the oldest age seen in the first and in the second half of the run
 * shows whether the backlog's age is bounded or grows, as it would if
 * some job starved.
 */
struct overload {
	u64 t0;
	atomic64_t oldest[2];
	atomic_t outstanding;
	atomic_long_t ran;
	bool stop;
};

static struct overload *overload_now;

static void overload_ran(struct bench_job *j)
{
	struct overload *ov = overload_now;
	u64 now = ktime_get_ns(), age = now - j->queued;
	atomic64_t *oldest = &ov->oldest[now - ov->t0 >= overload_ms *
					 NSEC_PER_MSEC / 2];
	s64 old = atomic64_read(oldest);

	while (age > old && !atomic64_try_cmpxchg(oldest, &old, age))
		;
	ndelay(overload_job_us * NSEC_PER_USEC);
	if (now - ov->t0 < overload_ms * NSEC_PER_MSEC)
		atomic_long_inc(&ov->ran);
	atomic_set_release(&j->busy, 0);
	/* Uses the address only: ov may be gone once it is seen zero. */
	if (atomic_dec_and_test(&ov->outstanding))
		wake_up_var(&ov->outstanding);
}

static void overload_job(struct blitz_job *job)
{
	overload_ran(container_of(job, struct bench_job, job));
}

static void overload_work(struct work_struct *work)
{
	overload_ran(container_of(work, struct bench_job, work));
}

struct overload_submitter {
	struct bench_job *slots;
	enum bench_target how;
	struct completion *go;
};

static int overload_submit_fn(void *arg)
{
	struct overload_submitter *s = arg;
	struct overload *ov = overload_now;
	struct bench_job *j;
	unsigned int i = 0;

	wait_for_completion(s->go);
	while (!READ_ONCE(ov->stop)) {
		j = &s->slots[i++ % overload_slots];
		/* Acquire: pairs with the release in overload_ran(). */
		if (!atomic_read_acquire(&j->busy)) {
			atomic_set(&j->busy, 1);
			atomic_inc(&ov->outstanding);
			j->queued = ktime_get_ns();
			bench_queue(j, s->how, NULL);
		}
		cond_resched();
	}
	return bench_thread_done();
}

struct overload_result {
	u64 oldest[2], per_s;
};

static void overload_run(struct bench_job *slots, enum bench_target how,
			 struct overload_submitter *subs,
			 struct task_struct **tasks, struct overload_result *res)
{
	unsigned int ncpu = num_online_cpus(), k;
	DECLARE_COMPLETION_ONSTACK(go);
	struct overload ov = {};
	long ran;

	bench_init(slots, overload_slots * ncpu, how, overload_job,
		   overload_work);
	overload_now = &ov;
	for (k = 0; k < ncpu; k++)
		subs[k] = (struct overload_submitter){
			&slots[k * overload_slots], how, &go
		};
	k = bench_threads_start(overload_submit_fn, subs, sizeof(*subs),
				tasks);
	ov.t0 = ktime_get_ns();
	complete_all(&go);
	msleep(overload_ms);
	WRITE_ONCE(ov.stop, true);
	bench_threads_stop(tasks, k);
	wait_var_event(&ov.outstanding, !atomic_read(&ov.outstanding));
	ran = atomic_long_read(&ov.ran);
	res->oldest[0] = atomic64_read(&ov.oldest[0]) / NSEC_PER_USEC;
	res->oldest[1] = atomic64_read(&ov.oldest[1]) / NSEC_PER_USEC;
	res->per_s = ran * MSEC_PER_SEC / max(overload_ms, 1U);
}

static void bench_overload(void)
{
	unsigned int ncpu = num_online_cpus(), r;
	struct bench_job *slots = vcalloc(overload_slots * ncpu,
					  sizeof(*slots));
	struct overload_submitter *subs = kcalloc(ncpu, sizeof(*subs),
						  GFP_KERNEL);
	struct task_struct **tasks = kcalloc(ncpu, sizeof(*tasks), GFP_KERNEL);
	u64 first[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 second[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 per_s[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	struct overload_result res;
	int how;

	if (!slots || !subs || !tasks || !overload_slots)
		goto out;
	for (r = 0; r < bench_reps(); r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++) {
			overload_run(slots, how, subs, tasks, &res);
			first[how][r] = res.oldest[0];
			second[how][r] = res.oldest[1];
			per_s[how][r] = res.per_s;
		}
	report_targets("overload", "oldest_first_half_us", first, "us",
		       false);
	report_targets("overload", "oldest_second_half_us", second, "us",
		       false);
	report_targets("overload", "jobs_per_s", per_s, "1/s", true);
out:
	kfree(tasks);
	kfree(subs);
	vfree(slots);
}

/*
 * The tight-loop burst into private pools of 4, 16 and 64 workers (as
 * many as there are possible CPUs; the guest gets maxcpus=64 for this):
 * what a submit and its run cost as the pool grows.
 */
static void bench_scale(void)
{
	static const unsigned int sizes[] = { 4, 16, 64 };
	struct bench_job *jobs = vcalloc(burst_jobs, sizeof(*jobs));
	struct blitz_pool *pools[ARRAY_SIZE(sizes)] = {};
	u64 ns[ARRAY_SIZE(sizes)][BENCH_MAX_REPS], med[ARRAY_SIZE(sizes)];
	unsigned int nr = 0, i, r;
	char name[32];

	if (!jobs || !burst_jobs)
		goto out;
	for (nr = 0; nr < ARRAY_SIZE(sizes) &&
	     sizes[nr] <= num_possible_cpus(); nr++) {
		snprintf(name, sizeof(name), "bench-scale%u", sizes[nr]);
		pools[nr] = blitz_pool_create(name, sizes[nr]);
		if (IS_ERR(pools[nr]))
			break;
	}
	for (r = 0; r < bench_reps(); r++)
		for (i = 0; i < nr; i++)
			ns[i][r] = burst_run(jobs, burst_jobs, BENCH_BLITZ,
					     pools[i]);
	for (i = 0; i < nr; i++) {
		snprintf(name, sizeof(name), "workers%u_ns_per_job", sizes[i]);
		med[i] = report_stats("scale", name, ns[i], bench_reps(), "ns");
	}
	if (nr > 1) {
		snprintf(name, sizeof(name), "workers%u_vs_workers4_x100",
			 sizes[nr - 1]);
		report_ratio("scale", name, med[nr - 1], med[0]);
	}
	for (i = 0; i < nr; i++)
		blitz_pool_destroy(pools[i]);
out:
	vfree(jobs);
}

/* === parallel_for vs workqueue fan-out === */

static unsigned long pfor_sink;

static void pfor_body(unsigned long lo, unsigned long hi, void *arg)
{
	unsigned long i, k, h = 0;

	for (i = lo; i < hi; i++)
		for (k = 0; k < pfor_work; k++)
			h = h * 31 + i + k;
	WRITE_ONCE(pfor_sink, h);
}

struct fanout {
	struct work_struct work;
	unsigned long lo, hi;
	atomic_t *left;
	struct completion *done;
};

static void fanout_work(struct work_struct *work)
{
	struct fanout *f = container_of(work, struct fanout, work);

	pfor_body(f->lo, f->hi, NULL);
	if (atomic_dec_and_test(f->left))
		complete(f->done);
}

/* The hand-rolled pattern: one work item per grain, wait on a completion. */
static int pfor_fanout(unsigned long n, unsigned long grain)
{
	unsigned long nr = DIV_ROUND_UP(n, grain), i;
	DECLARE_COMPLETION_ONSTACK(done);
	struct fanout *items;
	atomic_t left;

	items = kvcalloc(nr, sizeof(*items), GFP_KERNEL);
	if (!items)
		return -ENOMEM;
	atomic_set(&left, nr);
	for (i = 0; i < nr; i++) {
		INIT_WORK(&items[i].work, fanout_work);
		items[i].lo = i * grain;
		items[i].hi = min(n, (i + 1) * grain);
		items[i].left = &left;
		items[i].done = &done;
		queue_work(system_unbound_wq, &items[i].work);
	}
	wait_for_completion(&done);
	kvfree(items);
	return 0;
}

/* The grain of the run: 0 for the plain loop's bench_variant too. */
static unsigned long pfor_grain;

static u64 pfor_seq_us(void *arg)
{
	u64 t0 = ktime_get_ns();

	pfor_body(0, pfor_n, NULL);
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static u64 pfor_blitz_us(void *arg)
{
	u64 t0 = ktime_get_ns();

	blitz_parallel_for(0, pfor_n, pfor_grain, pfor_body, NULL);
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static u64 pfor_wq_us(void *arg)
{
	u64 t0 = ktime_get_ns();

	pfor_fanout(pfor_n, pfor_grain);
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

/* At each grain: the plain loop, parallel_for and the fan-out. */
static void bench_pfor(void)
{
	static const unsigned long grains[] = { 0, 16, 64, 256, 1024, 4096 };
	static const struct bench_variant v[] = {
		{ "sequential_us", pfor_seq_us, "us" },
		{ "blitz_us", pfor_blitz_us, "us" },
		{ "wq_fanout_us", pfor_wq_us, "us" },
	};
	u64 med[ARRAY_SIZE(v)];
	char name[24];
	int g;

	for (g = 0; g < ARRAY_SIZE(grains); g++) {
		pfor_grain = grains[g];
		snprintf(name, sizeof(name), "pfor_grain%lu", pfor_grain);
		/* Grain 0 is automatic: parallel_for only. */
		bench_interleave(name, v, pfor_grain ? 3 : 2, NULL, med);
		report_ratio(name, "blitz_speedup_x100", med[0], med[1]);
		if (pfor_grain)
			report_ratio(name, "wq_speedup_x100", med[0], med[2]);
	}
}

/* === A group of jobs, waited for, against work items and a completion === */

struct group_bench {
	struct blitz_group group;
	struct fanout *items;
	struct blitz_job *jobs;
};

static void group_job(struct blitz_job *job)
{
	pfor_body(0, 1, NULL);
}

static u64 group_blitz_us(void *arg)
{
	struct group_bench *b = arg;
	u64 t0 = ktime_get_ns();
	unsigned int i;

	for (i = 0; i < group_jobs; i++) {
		blitz_job_init(&b->jobs[i], group_job);
		blitz_group_submit(&b->group, &b->jobs[i]);
	}
	blitz_group_wait(&b->group);
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

/* The hand-rolled pattern: group_jobs one-index work items. */
static u64 group_wq_us(void *arg)
{
	u64 t0 = ktime_get_ns();

	pfor_fanout(group_jobs, 1);
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static void bench_group(void)
{
	static const struct bench_variant v[] = {
		{ "blitz_group_us", group_blitz_us, "us" },
		{ "wq_completion_us", group_wq_us, "us" },
	};
	struct group_bench b = {};
	u64 med[ARRAY_SIZE(v)];

	b.jobs = vcalloc(group_jobs, sizeof(*b.jobs));
	if (!b.jobs || !group_jobs)
		goto out;
	blitz_group_init(&b.group, NULL);
	bench_interleave("group", v, ARRAY_SIZE(v), &b, med);
	report_ratio("group", "blitz_vs_wq_x100", med[1], med[0]);
out:
	vfree(b.jobs);
}

/* === parallel_reduce: a sum, against a loop === */

static u64 *reduce_data;

static void sum_init(void *acc, void *arg)
{
	*(u64 *)acc = 0;
}

static void sum_fn(unsigned long lo, unsigned long hi, void *acc, void *arg)
{
	u64 s = 0;

	for (; lo < hi; lo++)
		s += reduce_data[lo];
	*(u64 *)acc += s;
}

static void sum_combine(void *acc, const void *right, void *arg)
{
	*(u64 *)acc += *(const u64 *)right;
}

static u64 reduce_seq_us(void *arg)
{
	u64 t0 = ktime_get_ns(), sum;

	sum_init(&sum, NULL);
	sum_fn(0, 1UL << reduce_log2, &sum, NULL);
	if (sum != *(u64 *)arg)
		pr_err("reduce mismatch\n");
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static u64 reduce_blitz_us(void *arg)
{
	u64 t0 = ktime_get_ns(), sum;

	blitz_parallel_reduce(0, 1UL << reduce_log2, 0, &sum, sizeof(sum),
			      sum_init, sum_fn, sum_combine, NULL);
	if (sum != *(u64 *)arg)
		pr_err("reduce mismatch\n");
	return (ktime_get_ns() - t0) / NSEC_PER_USEC;
}

static void bench_reduce(void)
{
	static const struct bench_variant v[] = {
		{ "sequential_us", reduce_seq_us, "us" },
		{ "blitz_us", reduce_blitz_us, "us" },
	};
	unsigned long i, n = 1UL << reduce_log2;
	u64 med[ARRAY_SIZE(v)], want = 0;

	reduce_data = vmalloc(array_size(n, sizeof(*reduce_data)));
	if (!reduce_data)
		return;
	for (i = 0; i < n; i++) {
		reduce_data[i] = i * 2654435761UL;
		want += reduce_data[i];
	}
	bench_interleave("reduce", v, ARRAY_SIZE(v), &want, med);
	report_ratio("reduce", "speedup_x100", med[0], med[1]);
	vfree(reduce_data);
}

/* === blitz_sort against sort() === */

struct sort_bench {
	u32 *master, *work;
};

static int sort_cmp_u32(const void *a, const void *b)
{
	u32 x = *(const u32 *)a, y = *(const u32 *)b;

	return x < y ? -1 : x > y;
}

static u64 sort_run_us(struct sort_bench *b,
		       void (*fn)(void *base, size_t num, size_t size,
				  cmp_func_t cmp, swap_func_t swap))
{
	u64 t0;

	memcpy(b->work, b->master, sort_n * sizeof(*b->work));
	t0 = ktime_get_ns();
	fn(b->work, sort_n, sizeof(*b->work), sort_cmp_u32, NULL);
	t0 = ktime_get_ns() - t0;
	if (sort_n > 1 && b->work[0] > b->work[sort_n / 2])
		pr_err("sort mismatch\n");
	return t0 / NSEC_PER_USEC;
}

static u64 sort_lib_us(void *arg)
{
	return sort_run_us(arg, sort);
}

static u64 sort_blitz_us(void *arg)
{
	return sort_run_us(arg, blitz_sort);
}

static void bench_sort(void)
{
	static const struct bench_variant v[] = {
		{ "sort_us", sort_lib_us, "us" },
		{ "blitz_sort_us", sort_blitz_us, "us" },
	};
	struct sort_bench b;
	u64 med[ARRAY_SIZE(v)];
	unsigned int i;

	b.master = vmalloc(array_size(sort_n, sizeof(u32)));
	b.work = vmalloc(array_size(sort_n, sizeof(u32)));
	if (!b.master || !b.work || !sort_n)
		goto out;
	for (i = 0; i < sort_n; i++)
		b.master[i] = get_random_u32();
	bench_interleave("sort", v, ARRAY_SIZE(v), &b, med);
	report_ratio("sort", "blitz_vs_sort_x100", med[0], med[1]);
out:
	vfree(b.work);
	vfree(b.master);
}

/* === Wake latency === */

/* One job at a time, 20 ms apart: from submit to start, workers asleep. */
static void wake_run(struct bench_job *j, u64 *lat, enum bench_target how,
		     u64 *p50, u64 *p99)
{
	unsigned int i;

	bench_init(j, 1, how, stamp_job, stamp_work);
	for (i = 0; i < wake_samples; i++) {
		/* Long enough for every blitz worker to fall asleep. */
		msleep(20);
		noop_expect(1);
		j->queued = ktime_get_ns();
		bench_queue(j, how, NULL);
		wait_for_completion(&noop_done);
		lat[i] = j->started - j->queued;
	}
	if (how != BENCH_BLITZ)
		flush_work(&j->work);
	latency_percentiles(lat, wake_samples, p50, p99);
}

static void bench_wake(void)
{
	struct bench_job *j = kzalloc(sizeof(*j), GFP_KERNEL);
	u64 *lat = kcalloc(wake_samples, sizeof(*lat), GFP_KERNEL);
	u64 p50[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 p99[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	unsigned int r;
	int how;

	if (!j || !lat || !wake_samples)
		goto out;
	for (r = 0; r < bench_reps(); r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			wake_run(j, lat, how, &p50[how][r], &p99[how][r]);
	report_targets("wake", "p50_us", p50, "us", false);
	report_targets("wake", "p99_us", p99, "us", false);
out:
	kfree(lat);
	kfree(j);
}

/* === Jobs that sleep among jobs that compute === */

static struct bench_job *mixed_base;
static atomic_t mixed_left;
static DECLARE_COMPLETION(mixed_done);

/* Even jobs sleep, odd ones compute and stamp their end. */
static void mixed_body(struct bench_job *j)
{
	if ((j - mixed_base) & 1) {
		udelay(mixed_compute_us);
		j->started = ktime_get_ns();
	} else {
		usleep_range(mixed_sleep_us, mixed_sleep_us + 100);
	}
	if (atomic_dec_and_test(&mixed_left))
		complete(&mixed_done);
}

static void mixed_job(struct blitz_job *job)
{
	mixed_body(container_of(job, struct bench_job, job));
}

static void mixed_work(struct work_struct *work)
{
	mixed_body(container_of(work, struct bench_job, work));
}

/*
 * Queue every job through @how at once, from here: the time until all
 * ran, in us, into *@total; the computing jobs' p99 from queueing to end,
 * in us, into *@p99.
 */
static void mixed_run(struct bench_job *jobs, u64 *lat, enum bench_target how,
		      u64 *total, u64 *p99)
{
	unsigned int i, n = mixed_jobs & ~1U;
	u64 t0, p50;

	mixed_base = jobs;
	bench_init(jobs, n, how, mixed_job, mixed_work);
	atomic_set(&mixed_left, n);
	reinit_completion(&mixed_done);
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		jobs[i].queued = ktime_get_ns();
		bench_queue(&jobs[i], how, NULL);
	}
	wait_for_completion(&mixed_done);
	*total = (ktime_get_ns() - t0) / NSEC_PER_USEC;
	for (i = 0; i < n / 2; i++)
		lat[i] = jobs[2 * i + 1].started - jobs[2 * i + 1].queued;
	latency_percentiles(lat, n / 2, &p50, p99);
}

static void bench_mixed(void)
{
	struct bench_job *jobs = vcalloc(mixed_jobs, sizeof(*jobs));
	u64 *lat = vcalloc(mixed_jobs / 2 + 1, sizeof(*lat));
	u64 total[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 p99[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	unsigned int r, nr = bench_nr_reps(mixed_reps);
	int how;

	if (!jobs || !lat || mixed_jobs < 2)
		goto out;
	for (r = 0; r < nr; r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			mixed_run(jobs, lat, how, &total[how][r],
				  &p99[how][r]);
	report_targets_nr("mixed", "total_us", total, nr, "us", false);
	report_targets_nr("mixed", "compute_p99_us", p99, nr, "us", false);
out:
	vfree(lat);
	vfree(jobs);
}

/* === From a block to the next job === */

struct blocker {
	struct bench_job a, b;
	struct completion release, done;
	bool b_queued;
	u64 blocked;
};

/*
 * Once b is queued behind us: stamp, and block until b runs. The last
 * access: the next round reuses both jobs.
 */
static void blocker_a(struct blocker *bl)
{
	while (!READ_ONCE(bl->b_queued))
		cond_resched();
	bl->blocked = ktime_get_ns();
	wait_for_completion(&bl->release);
	complete(&bl->done);
}

static void blocker_b(struct blocker *bl)
{
	bl->b.started = ktime_get_ns();
	complete(&bl->release);
}

static void blocker_a_job(struct blitz_job *job)
{
	blocker_a(container_of(job, struct blocker, a.job));
}

static void blocker_a_work(struct work_struct *work)
{
	blocker_a(container_of(work, struct blocker, a.work));
}

static void blocker_b_job(struct blitz_job *job)
{
	blocker_b(container_of(job, struct blocker, b.job));
}

static void blocker_b_work(struct work_struct *work)
{
	blocker_b(container_of(work, struct blocker, b.work));
}

/*
 * block_samples times: a, then b behind it, on one worker (blitz), or
 * on one CPU of @how's workqueue; from a's block until b starts, in ns,
 * into @lat.
 */
static void block_run(struct blocker *bl, u64 *lat, enum bench_target how,
		      struct blitz_pool *pool, u64 *p50, u64 *p99)
{
	struct workqueue_struct *wq = how == BENCH_SYSTEM_WQ ? system_wq :
				      system_unbound_wq;
	unsigned int i;
	int cpu;

	for (i = 0; i < block_samples; i++) {
		bench_init(&bl->a, 1, how, blocker_a_job, blocker_a_work);
		bench_init(&bl->b, 1, how, blocker_b_job, blocker_b_work);
		init_completion(&bl->release);
		init_completion(&bl->done);
		bl->b_queued = false;
		if (how == BENCH_BLITZ) {
			blitz_submit(pool, &bl->a.job);
			blitz_submit(pool, &bl->b.job);
		} else {
			cpu = get_cpu();
			queue_work_on(cpu, wq, &bl->a.work);
			queue_work_on(cpu, wq, &bl->b.work);
			put_cpu();
		}
		WRITE_ONCE(bl->b_queued, true);
		wait_for_completion(&bl->done);
		/* Not concurrency managed, system_unbound_wq may start b first. */
		lat[i] = bl->b.started > bl->blocked ?
			 bl->b.started - bl->blocked : 0;
	}
	latency_percentiles(lat, block_samples, p50, p99);
}

static void bench_block(void)
{
	struct blocker *bl = kzalloc(sizeof(*bl), GFP_KERNEL);
	u64 *lat = kcalloc(block_samples, sizeof(*lat), GFP_KERNEL);
	u64 p50[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	u64 p99[BENCH_NR_TARGETS][BENCH_MAX_REPS];
	struct blitz_pool *pool;
	unsigned int r;
	int how;

	pool = blitz_pool_create("bench-block", 1);
	if (!bl || !lat || !block_samples || IS_ERR(pool))
		goto out;
	for (r = 0; r < bench_reps(); r++)
		for (how = 0; how < BENCH_NR_TARGETS; how++)
			block_run(bl, lat, how, pool, &p50[how][r],
				  &p99[how][r]);
	report_targets("block", "p50_us", p50, "us", false);
	report_targets("block", "p99_us", p99, "us", false);
out:
	if (!IS_ERR(pool))
		blitz_pool_destroy(pool);
	kfree(lat);
	kfree(bl);
}

/* === Idle cost === */

/*
 * Idle time of all online CPUs, in us, from the tickless idle accounting:
 * exact, unlike the tick-sampled kernel_cpustat.
 */
static u64 cpu_idle_us(void)
{
	u64 idle = 0;
	int cpu;

	for_each_online_cpu(cpu)
		idle += get_cpu_idle_time_us(cpu, NULL);
	return idle;
}

struct ticker {
	struct hrtimer timer;
	ktime_t period;
	bool wq;
	struct blitz_job job;
	struct work_struct work;
	unsigned int submitted;
	atomic_t runs;
};

static void ticker_job(struct blitz_job *job)
{
	struct ticker *tk = container_of(job, struct ticker, job);

	atomic_inc(&tk->runs);
	/* Uses the address only: tk may be gone once runs is seen. */
	wake_up_var(&tk->runs);
}

static void ticker_work(struct work_struct *work)
{
}

static enum hrtimer_restart ticker_fire(struct hrtimer *t)
{
	struct ticker *tk = container_of(t, struct ticker, timer);

	if (tk->wq)
		queue_work(system_wq, &tk->work);
	else if (!blitz_submit(NULL, &tk->job))
		tk->submitted++;
	hrtimer_forward_now(t, tk->period);
	return HRTIMER_RESTART;
}

/* CPU used, in parts per 10000 of one CPU, over idle_secs. */
static u64 idle_cost(unsigned int period_us, bool wq)
{
	struct ticker tk = { .wq = wq, .runs = ATOMIC_INIT(0) };
	u64 i0, t0, idle, wall;

	blitz_job_init(&tk.job, ticker_job);
	INIT_WORK_ONSTACK(&tk.work, ticker_work);
	tk.period = ns_to_ktime((u64)period_us * NSEC_PER_USEC);
	hrtimer_init_on_stack(&tk.timer, CLOCK_MONOTONIC,
			      HRTIMER_MODE_REL_HARD);
	tk.timer.function = ticker_fire;

	i0 = cpu_idle_us();
	t0 = ktime_get_ns();
	if (period_us)
		hrtimer_start(&tk.timer, tk.period, HRTIMER_MODE_REL_HARD);
	ssleep(idle_secs);
	if (period_us)
		hrtimer_cancel(&tk.timer);
	idle = cpu_idle_us() - i0;
	wall = (ktime_get_ns() - t0) / NSEC_PER_USEC * num_online_cpus();
	flush_work(&tk.work);
	/* The blitz job may still be queued: wait until it ran. */
	wait_var_event(&tk.runs, atomic_read(&tk.runs) == tk.submitted);
	destroy_work_on_stack(&tk.work);
	destroy_hrtimer_on_stack(&tk.timer);
	/* The sleeping caller itself adds nothing; the rest is the cost. */
	return wall > idle ? (wall - idle) * 10000 / wall : 0;
}

static u64 idle_none(void *arg)
{
	return idle_cost(0, false);
}

static u64 idle_blitz_1ms(void *arg)
{
	return idle_cost(1000, false);
}

static u64 idle_wq_1ms(void *arg)
{
	return idle_cost(1000, true);
}

static u64 idle_blitz_10ms(void *arg)
{
	return idle_cost(10000, false);
}

static u64 idle_wq_10ms(void *arg)
{
	return idle_cost(10000, true);
}

static void bench_idle(void)
{
	static const struct bench_variant v[] = {
		{ "all_cpus_idle_per10000", idle_none, "1/10000 cpu" },
		{ "blitz_every_1ms_per10000", idle_blitz_1ms, "1/10000 cpu" },
		{ "system_wq_every_1ms_per10000", idle_wq_1ms, "1/10000 cpu" },
		{ "blitz_every_10ms_per10000", idle_blitz_10ms, "1/10000 cpu" },
		{ "system_wq_every_10ms_per10000", idle_wq_10ms,
		  "1/10000 cpu" },
	};
	u64 med[ARRAY_SIZE(v)];

	bench_interleave("idle", v, ARRAY_SIZE(v), NULL, med);
}

static const struct {
	const char *name;
	void (*fn)(void);
} benches[] = {
	{ "fib", bench_fib },
	{ "tree", bench_tree },
	{ "burst", bench_burst },
	{ "percpu", bench_percpu },
	{ "hardirq", bench_hardirq },
	{ "irqburst", bench_irqburst },
	{ "overload", bench_overload },
	{ "scale", bench_scale },
	{ "pfor", bench_pfor },
	{ "group", bench_group },
	{ "reduce", bench_reduce },
	{ "sort", bench_sort },
	{ "wake", bench_wake },
	{ "mixed", bench_mixed },
	{ "block", bench_block },
	{ "idle", bench_idle },
};

static int __init blitz_bench_init(void)
{
	int i;

	pr_info("begin cpus=%u\n", num_online_cpus());
	for (i = 0; i < ARRAY_SIZE(benches); i++)
		if (selected(benches[i].name))
			benches[i].fn();
	pr_info("end\n");
	return 0;
}
module_init(blitz_bench_init);

static void __exit blitz_bench_exit(void)
{
}
module_exit(blitz_bench_exit);

MODULE_DESCRIPTION("blitz benchmarks against workqueues and plain code");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
