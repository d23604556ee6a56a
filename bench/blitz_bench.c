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
 *   tree      binary-tree sum, 1023 nodes and 2^tree_log2 nodes
 *   submit    submit throughput: no-op jobs from one thread outside the
 *             pool, vs queue_work() on system_wq and system_unbound_wq
 *   burst     a burst of burst_jobs no-op jobs from one thread in a tight
 *             loop, no yields (as users write it), until all have run:
 *             ns per job, blitz, system_wq and system_unbound_wq
 *             interleaved, reps times each; median, min and max
 *   pfor      parallel_for over a compute-bound loop at several grains,
 *             vs N work items on system_unbound_wq + completion, vs
 *             sequential
 *   wake      latency from submit to func start with all workers asleep,
 *             vs queue_work() on system_wq (p50, p99)
 *   idle      busy time of all CPUs while idle, and with one job every
 *             1 ms and 10 ms, vs the same through system_wq, in parts
 *             per 10000 of all CPUs
 */
#define pr_fmt(fmt) "bench: " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/hrtimer.h>
#include <linux/tick.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/slab.h>
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
static unsigned int submit_jobs = 1000000;
module_param(submit_jobs, uint, 0444);
static unsigned int burst_jobs = 200000;
module_param(burst_jobs, uint, 0444);
#define BENCH_MAX_REPS	15
static unsigned int reps = 5;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "interleaved repetitions of burst (at most 15)");
static unsigned int pfor_n = 1 << 16;
module_param(pfor_n, uint, 0444);
static unsigned int pfor_work = 500;
module_param(pfor_work, uint, 0444);
MODULE_PARM_DESC(pfor_work, "inner iterations per parallel_for index");
static unsigned int idle_secs = 10;
module_param(idle_secs, uint, 0444);
static unsigned int wake_samples = 200;
module_param(wake_samples, uint, 0444);

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

/* === fib === */

/* ns per join: (join time - plain time) / number of joins. */
static void bench_fib(void)
{
	unsigned long joins = fib_plain(fib_n + 1) - 1, want;
	struct blitz_pool *one;
	struct fib f = { fib_n };
	u64 t0, plain, seq1, all;

	t0 = ktime_get_ns();
	want = fib_plain(fib_n);
	plain = ktime_get_ns() - t0;

	one = blitz_pool_create("bench-one", 1);
	if (IS_ERR(one))
		return;
	t0 = ktime_get_ns();
	blitz_call(one, fib_join, &f);
	seq1 = ktime_get_ns() - t0;
	blitz_pool_destroy(one);
	if (f.result != want)
		pr_err("fib mismatch\n");

	f.result = 0;
	t0 = ktime_get_ns();
	blitz_call(NULL, fib_join, &f);
	all = ktime_get_ns() - t0;

	report("fib", "plain_ms", plain / NSEC_PER_MSEC, "ms");
	report("fib", "join_1worker_ms", seq1 / NSEC_PER_MSEC, "ms");
	report("fib", "join_allworkers_ms", all / NSEC_PER_MSEC, "ms");
	report("fib", "overhead_1worker_ns_per_join",
	       seq1 > plain ? (seq1 - plain) / joins : 0, "ns");
	report("fib", "speedup_allworkers_x100", plain * 100 / max(all, 1ULL),
	       "x/100");
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

static void bench_tree_one(unsigned int depth, const char *name)
{
	unsigned long nr = (1UL << (depth + 1)) - 1, next = 0;
	struct tree_node *nodes, *root;
	struct tree_arg t;
	u64 t0, seq, par;
	long want;
	int i;

	nodes = vmalloc(array_size(nr, sizeof(*nodes)));
	if (!nodes)
		return;
	root = tree_build(nodes, &next, depth);
	/* Best of 5 for small trees, which are over in microseconds. */
	seq = U64_MAX;
	par = U64_MAX;
	for (i = 0; i < (depth < 16 ? 5 : 1); i++) {
		t0 = ktime_get_ns();
		want = tree_sum_seq(root);
		seq = min(seq, ktime_get_ns() - t0);
		t = (struct tree_arg){ root };
		t0 = ktime_get_ns();
		blitz_call(NULL, tree_sum_join, &t);
		par = min(par, ktime_get_ns() - t0);
		if (t.sum != want)
			pr_err("tree sum mismatch\n");
	}
	report(name, "sequential_us", seq / NSEC_PER_USEC, "us");
	report(name, "blitz_us", par / NSEC_PER_USEC, "us");
	report(name, "blitz_vs_seq_x100", par * 100 / max(seq, 1ULL), "x/100");
	report(name, "speedup_x100", seq * 100 / max(par, 1ULL), "x/100");
	vfree(nodes);
}

static void bench_tree(void)
{
	char name[24];

	bench_tree_one(9, "tree1023");
	snprintf(name, sizeof(name), "tree2^%u", tree_log2);
	bench_tree_one(tree_log2 - 1, name);
}

/* === Submit throughput === */

struct noop {
	union {
		struct blitz_job job;
		struct work_struct work;
	};
};

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

/*
 * Submit @nr no-op jobs (how: 0 blitz, 1 system_wq, 2 system_unbound_wq),
 * yielding every 4096 or never, and wait until all have run. Returns ns.
 */
static u64 submit_run(struct noop *jobs, unsigned int nr, int how,
		      bool yield)
{
	unsigned int i;
	u64 t0;

	atomic_set(&noop_left, nr);
	reinit_completion(&noop_done);
	t0 = ktime_get_ns();
	for (i = 0; i < nr; i++) {
		switch (how) {
		case 0:
			blitz_job_init(&jobs[i].job, noop_job);
			blitz_submit(NULL, &jobs[i].job);
			break;
		case 1:
			INIT_WORK(&jobs[i].work, noop_work);
			queue_work(system_wq, &jobs[i].work);
			break;
		default:
			INIT_WORK(&jobs[i].work, noop_work);
			queue_work(system_unbound_wq, &jobs[i].work);
			break;
		}
		if (yield && !(i % 4096))
			cond_resched();
	}
	wait_for_completion(&noop_done);
	return max(ktime_get_ns() - t0, 1ULL);
}

static u64 submit_rate(struct noop *jobs, int how)
{
	return (u64)submit_jobs * NSEC_PER_SEC /
	       submit_run(jobs, submit_jobs, how, true);
}

static void bench_submit(void)
{
	struct noop *jobs = vcalloc(submit_jobs, sizeof(*jobs));
	u64 blitz, wq, unbound;

	if (!jobs)
		return;
	blitz = submit_rate(jobs, 0);
	wq = submit_rate(jobs, 1);
	unbound = submit_rate(jobs, 2);
	report("submit", "blitz_jobs_per_s", blitz, "1/s");
	report("submit", "system_wq_jobs_per_s", wq, "1/s");
	report("submit", "system_unbound_wq_jobs_per_s", unbound, "1/s");
	report("submit", "blitz_vs_system_wq_x100", blitz * 100 / max(wq, 1ULL),
	       "x/100");
	vfree(jobs);
}

static int cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void bench_burst(void)
{
	static const char * const names[] = {
		"blitz", "system_wq", "system_unbound_wq"
	};
	unsigned int nr = clamp(reps, 1U, (unsigned int)BENCH_MAX_REPS);
	u64 ns[ARRAY_SIZE(names)][BENCH_MAX_REPS], med[ARRAY_SIZE(names)];
	struct noop *jobs = vcalloc(burst_jobs, sizeof(*jobs));
	char variant[48];
	unsigned int r, how;

	if (!jobs || !burst_jobs)
		goto out;
	/* Interleaved, A B C A B C ...: drift hits every variant alike. */
	for (r = 0; r < nr; r++)
		for (how = 0; how < ARRAY_SIZE(names); how++)
			ns[how][r] = submit_run(jobs, burst_jobs, how, false) /
				     burst_jobs;
	for (how = 0; how < ARRAY_SIZE(names); how++) {
		sort(ns[how], nr, sizeof(u64), cmp_u64, NULL);
		med[how] = ns[how][nr / 2];
		snprintf(variant, sizeof(variant), "%s_ns_per_job_median",
			 names[how]);
		report("burst", variant, med[how], "ns");
		snprintf(variant, sizeof(variant), "%s_ns_per_job_min",
			 names[how]);
		report("burst", variant, ns[how][0], "ns");
		snprintf(variant, sizeof(variant), "%s_ns_per_job_max",
			 names[how]);
		report("burst", variant, ns[how][nr - 1], "ns");
	}
	report("burst", "blitz_vs_system_wq_x100",
	       med[1] * 100 / max(med[0], 1ULL), "x/100");
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

static void bench_pfor(void)
{
	static const unsigned long grains[] = { 16, 64, 256, 1024, 4096 };
	u64 t0, seq, par, wq;
	char name[24];
	int g;

	t0 = ktime_get_ns();
	pfor_body(0, pfor_n, NULL);
	seq = ktime_get_ns() - t0;
	report("pfor", "sequential_us", seq / NSEC_PER_USEC, "us");

	for (g = 0; g < ARRAY_SIZE(grains); g++) {
		snprintf(name, sizeof(name), "pfor_grain%lu", grains[g]);
		t0 = ktime_get_ns();
		blitz_parallel_for(0, pfor_n, grains[g], pfor_body, NULL);
		par = ktime_get_ns() - t0;
		t0 = ktime_get_ns();
		pfor_fanout(pfor_n, grains[g]);
		wq = ktime_get_ns() - t0;
		report(name, "blitz_us", par / NSEC_PER_USEC, "us");
		report(name, "wq_fanout_us", wq / NSEC_PER_USEC, "us");
		report(name, "blitz_speedup_x100", seq * 100 / max(par, 1ULL),
		       "x/100");
		report(name, "wq_speedup_x100", seq * 100 / max(wq, 1ULL),
		       "x/100");
	}
	t0 = ktime_get_ns();
	blitz_parallel_for(0, pfor_n, 0, pfor_body, NULL);
	par = ktime_get_ns() - t0;
	report("pfor_grain0", "blitz_us", par / NSEC_PER_USEC, "us");
	report("pfor_grain0", "blitz_speedup_x100", seq * 100 / max(par, 1ULL),
	       "x/100");
}

/* === Wake latency === */

struct stamp {
	union {
		struct blitz_job job;
		struct work_struct work;
	};
	u64 queued, started;
	struct completion done;
};

static void stamp_job(struct blitz_job *job)
{
	struct stamp *s = container_of(job, struct stamp, job);

	s->started = ktime_get_ns();
	complete(&s->done);
}

static void stamp_work(struct work_struct *work)
{
	struct stamp *s = container_of(work, struct stamp, work);

	s->started = ktime_get_ns();
	complete(&s->done);
}

static void wake_latency(bool wq, u64 *lat)
{
	struct stamp s;
	unsigned int i;

	for (i = 0; i < wake_samples; i++) {
		/* Long enough for every blitz worker to fall asleep. */
		msleep(20);
		init_completion(&s.done);
		if (wq)
			INIT_WORK_ONSTACK(&s.work, stamp_work);
		else
			blitz_job_init(&s.job, stamp_job);
		s.queued = ktime_get_ns();
		if (wq)
			queue_work(system_wq, &s.work);
		else
			blitz_submit(NULL, &s.job);
		wait_for_completion(&s.done);
		if (wq) {
			flush_work(&s.work);
			destroy_work_on_stack(&s.work);
		}
		lat[i] = s.started - s.queued;
	}
	sort(lat, wake_samples, sizeof(*lat), cmp_u64, NULL);
}

static void bench_wake(void)
{
	u64 *lat = kcalloc(wake_samples, sizeof(*lat), GFP_KERNEL);

	if (!lat || !wake_samples)
		goto out;
	wake_latency(false, lat);
	report("wake", "blitz_p50_us", lat[wake_samples / 2] / NSEC_PER_USEC, "us");
	report("wake", "blitz_p99_us",
	       lat[wake_samples * 99 / 100] / NSEC_PER_USEC, "us");
	wake_latency(true, lat);
	report("wake", "system_wq_p50_us", lat[wake_samples / 2] / NSEC_PER_USEC,
	       "us");
	report("wake", "system_wq_p99_us",
	       lat[wake_samples * 99 / 100] / NSEC_PER_USEC, "us");
out:
	kfree(lat);
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

static void bench_idle(void)
{
	report("idle", "all_cpus_idle_per10000", idle_cost(0, false),
	       "1/10000 cpu");
	report("idle", "blitz_every_1ms_per10000", idle_cost(1000, false),
	       "1/10000 cpu");
	report("idle", "system_wq_every_1ms_per10000", idle_cost(1000, true),
	       "1/10000 cpu");
	report("idle", "blitz_every_10ms_per10000", idle_cost(10000, false),
	       "1/10000 cpu");
	report("idle", "system_wq_every_10ms_per10000", idle_cost(10000, true),
	       "1/10000 cpu");
}

static const struct {
	const char *name;
	void (*fn)(void);
} benches[] = {
	{ "fib", bench_fib },
	{ "tree", bench_tree },
	{ "submit", bench_submit },
	{ "burst", bench_burst },
	{ "pfor", bench_pfor },
	{ "wake", bench_wake },
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
