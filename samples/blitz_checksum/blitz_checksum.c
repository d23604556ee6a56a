// SPDX-License-Identifier: GPL-2.0
/*
 * Example client of blitz: checksum a large buffer in parallel.
 *
 * The buffer is cut into chunks, and each chunk's CRC32 is a job submitted
 * with blitz_submit() to the default pool; the last job to finish completes
 * the caller's completion. The per-chunk CRCs are then folded in order.
 * For comparison the same chunks are also checksummed sequentially, and
 * as work items on system_unbound_wq, the pattern blitz replaces. The
 * three take turns, reps times; the log shows each one's median time and
 * its speedup over the sequential loop.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

static unsigned int size_mb = 64;
module_param(size_mb, uint, 0444);
MODULE_PARM_DESC(size_mb, "buffer size in MiB");

static unsigned int reps = 7;
module_param(reps, uint, 0444);
MODULE_PARM_DESC(reps, "runs of each variant; the median is shown");

#define CHUNK		(256 * 1024)
#define MAX_REPS	15

struct checksum {
	atomic_t left;
	struct completion done;
};

/* One chunk: a blitz job, or the same as a work item. */
struct chunk {
	struct blitz_job job;
	struct work_struct work;
	const u8 *data;
	u32 crc;
	struct checksum *sum;
};

static void chunk_crc(struct chunk *c)
{
	c->crc = crc32_le(0, c->data, CHUNK);
	if (atomic_dec_and_test(&c->sum->left))
		complete(&c->sum->done);
}

static void chunk_job(struct blitz_job *job)
{
	chunk_crc(container_of(job, struct chunk, job));
}

static void chunk_work(struct work_struct *work)
{
	chunk_crc(container_of(work, struct chunk, work));
}

static void sum_init(struct checksum *sum, struct chunk *chunks,
		     unsigned int nr)
{
	unsigned int i;

	atomic_set(&sum->left, nr);
	init_completion(&sum->done);
	for (i = 0; i < nr; i++)
		chunks[i].sum = sum;
}

static int run_sequential(struct chunk *chunks, unsigned int nr)
{
	struct checksum sum;
	unsigned int i;

	sum_init(&sum, chunks, nr);
	for (i = 0; i < nr; i++)
		chunk_crc(&chunks[i]);
	return 0;
}

static int run_blitz(struct chunk *chunks, unsigned int nr)
{
	struct checksum sum;
	unsigned int i;
	int ret = 0;

	sum_init(&sum, chunks, nr);
	for (i = 0; i < nr; i++) {
		blitz_job_init(&chunks[i].job, chunk_job);
		ret = blitz_submit(NULL, &chunks[i].job);
		if (WARN_ON(ret)) {
			/* Account for the chunks never submitted. */
			if (atomic_sub_and_test(nr - i, &sum.left))
				complete(&sum.done);
			break;
		}
	}
	wait_for_completion(&sum.done);
	return ret;
}

static int run_workqueue(struct chunk *chunks, unsigned int nr)
{
	struct checksum sum;
	unsigned int i;

	sum_init(&sum, chunks, nr);
	for (i = 0; i < nr; i++) {
		INIT_WORK(&chunks[i].work, chunk_work);
		queue_work(system_unbound_wq, &chunks[i].work);
	}
	wait_for_completion(&sum.done);
	return 0;
}

static const struct variant {
	const char *name;
	int (*run)(struct chunk *chunks, unsigned int nr);
} variants[] = {
	{ "sequential", run_sequential },
	{ "blitz_submit()", run_blitz },
	{ "workqueue fan-out", run_workqueue },
};

/* The CRC of the whole buffer, from the chunks' CRCs in order. */
static u32 fold(struct chunk *chunks, unsigned int nr)
{
	u32 crc = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		crc = crc32_le(crc, (u8 *)&chunks[i].crc, sizeof(u32));
	return crc;
}

static int cmp_s64(const void *a, const void *b)
{
	s64 x = *(const s64 *)a, y = *(const s64 *)b;

	return x < y ? -1 : x > y;
}

static int __init blitz_checksum_init(void)
{
	unsigned int nr = size_mb * (1024 * 1024 / CHUNK), i, r, v;
	s64 us[ARRAY_SIZE(variants)][MAX_REPS], median, seq = 0;
	struct chunk *chunks;
	u32 crc = 0;
	ktime_t t0;
	u8 *buf;
	int ret;

	if (!nr || !reps || reps > MAX_REPS)
		return -EINVAL;
	buf = vmalloc(nr * CHUNK);
	chunks = vcalloc(nr, sizeof(*chunks));
	if (!buf || !chunks) {
		ret = -ENOMEM;
		goto out;
	}
	get_random_bytes(buf, nr * CHUNK);
	for (i = 0; i < nr; i++)
		chunks[i].data = buf + (size_t)i * CHUNK;

	/* The variants take turns, so that drift hits each alike. */
	for (r = 0; r < reps; r++) {
		for (v = 0; v < ARRAY_SIZE(variants); v++) {
			t0 = ktime_get();
			ret = variants[v].run(chunks, nr);
			if (ret)
				goto out;
			us[v][r] = ktime_us_delta(ktime_get(), t0);
			if (!r && !v) {
				crc = fold(chunks, nr);
			} else if (fold(chunks, nr) != crc) {
				pr_err("%s: crc mismatch\n", variants[v].name);
				ret = -EIO;
				goto out;
			}
		}
	}

	pr_info("%u MiB in %u KiB jobs, %u CPUs, crc %08x, median of %u runs:\n",
		size_mb, CHUNK / 1024, num_online_cpus(), crc, reps);
	for (v = 0; v < ARRAY_SIZE(variants); v++) {
		sort(us[v], reps, sizeof(s64), cmp_s64, NULL);
		median = max(us[v][reps / 2], 1LL);
		if (!v)
			seq = median;
		pr_info("  %-17s %7lld us  %lld.%02lldx\n", variants[v].name,
			median, seq / median, seq * 100 / median % 100);
	}
	ret = 0;
out:
	vfree(chunks);
	vfree(buf);
	return ret;
}

static void __exit blitz_checksum_exit(void)
{
}

module_init(blitz_checksum_init);
module_exit(blitz_checksum_exit);

MODULE_DESCRIPTION("blitz example: parallel checksum of a buffer");
MODULE_LICENSE("GPL");
MODULE_IMPORT_NS(BLITZ_NS);
