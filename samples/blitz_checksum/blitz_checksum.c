// SPDX-License-Identifier: GPL-2.0
/*
 * Example client of blitz: checksum a large buffer in parallel.
 *
 * The buffer is cut into chunks; each chunk is a job that computes the
 * chunk's CRC32, submitted with blitz_submit() to the default pool. The
 * last job to finish completes the caller's completion. The per-chunk
 * CRCs are then folded in order and compared with the same computation
 * done sequentially.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/blitz.h>
#include <linux/completion.h>
#include <linux/crc32.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/vmalloc.h>

static unsigned int size_mb = 64;
module_param(size_mb, uint, 0444);
MODULE_PARM_DESC(size_mb, "buffer size in MiB");

#define CHUNK	(256 * 1024)

struct chunk {
	struct blitz_job job;
	const u8 *data;
	u32 crc;
	struct checksum *sum;
};

struct checksum {
	atomic_t left;
	struct completion done;
};

static void chunk_func(struct blitz_job *job)
{
	struct chunk *c = container_of(job, struct chunk, job);
	struct checksum *sum = c->sum;

	c->crc = crc32_le(0, c->data, CHUNK);
	if (atomic_dec_and_test(&sum->left))
		complete(&sum->done);
}

static u32 fold(struct chunk *chunks, unsigned int nr)
{
	u32 crc = 0;
	unsigned int i;

	for (i = 0; i < nr; i++)
		crc = crc32_le(crc, (u8 *)&chunks[i].crc, sizeof(u32));
	return crc;
}

static int __init blitz_checksum_init(void)
{
	unsigned int nr = size_mb * (1024 * 1024 / CHUNK), i;
	struct checksum sum;
	struct chunk *chunks;
	u32 par, seq;
	ktime_t t0, t1, t2;
	u8 *buf;
	int ret;

	buf = vmalloc(nr * CHUNK);
	chunks = vcalloc(nr, sizeof(*chunks));
	if (!buf || !chunks) {
		ret = -ENOMEM;
		goto out;
	}
	get_random_bytes(buf, nr * CHUNK);

	atomic_set(&sum.left, nr);
	init_completion(&sum.done);
	t0 = ktime_get();
	for (i = 0; i < nr; i++) {
		blitz_job_init(&chunks[i].job, chunk_func);
		chunks[i].data = buf + (size_t)i * CHUNK;
		chunks[i].sum = &sum;
		ret = blitz_submit(NULL, &chunks[i].job);
		if (WARN_ON(ret)) {
			/* Account for the chunks never submitted. */
			if (atomic_sub_and_test(nr - i, &sum.left))
				complete(&sum.done);
			break;
		}
	}
	wait_for_completion(&sum.done);
	if (ret)
		goto out;
	par = fold(chunks, nr);
	t1 = ktime_get();

	for (i = 0; i < nr; i++)
		chunks[i].crc = crc32_le(0, chunks[i].data, CHUNK);
	seq = fold(chunks, nr);
	t2 = ktime_get();

	pr_info("%u MiB in %u chunks: parallel crc %08x in %lld us, sequential crc %08x in %lld us: %s\n",
		size_mb, nr, par, ktime_us_delta(t1, t0), seq,
		ktime_us_delta(t2, t1), par == seq ? "match" : "MISMATCH");
	ret = par == seq ? 0 : -EIO;
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
