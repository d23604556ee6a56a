// SPDX-License-Identifier: GPL-2.0
/*
 * debugfs: blitz/<pool>/stats, state, cpus and attrs.
 *
 * stats is a table: a header line of column names, one row per worker
 * (spares' slots too), a "total" row. state decodes the pool's counter
 * word, and counts its blocked and spare workers, on one line. cpus has
 * a line of concurrency management's counts per CPU of the pool.
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>

#include "blitz.h"

const char *const blitz_stat_names[BLITZ_NR_STATS] = {
	[BLITZ_STAT_EXECUTED]	= "executed",
	[BLITZ_STAT_STOLEN]	= "stolen",
	[BLITZ_STAT_INJECTED]	= "injected",
	[BLITZ_STAT_SLEEPS]	= "sleeps",
	[BLITZ_STAT_WAKEUPS]	= "wakeups",
	[BLITZ_STAT_OVERFLOWS]	= "overflows",
	[BLITZ_STAT_PROMOTED]	= "promoted",
	[BLITZ_STAT_SHARE_REQUESTS] = "share_requests",
	[BLITZ_STAT_CANCELLED]	= "cancelled",
	[BLITZ_STAT_SHARE_TIMER] = "share_timer",
	[BLITZ_STAT_BLOCKS]	= "blocks",
};

static struct dentry *blitz_debugfs_root;

static int stats_show(struct seq_file *m, void *v)
{
	struct blitz_pool *pool = m->private;
	u64 total[BLITZ_NR_STATS] = {};
	struct blitz_worker *w;
	unsigned int i, n = blitz_nr_slots(pool);
	int s;

	seq_puts(m, "worker cpu");
	for (s = 0; s < BLITZ_NR_STATS; s++)
		seq_printf(m, " %s", blitz_stat_names[s]);
	seq_puts(m, " spare\n");

	for (i = 0; i < n; i++) {
		w = pool->workers[i];
		/* A spare's slot may move to another CPU (cm.c). */
		seq_printf(m, "%u %d", i, READ_ONCE(w->cpu));
		for (s = 0; s < BLITZ_NR_STATS; s++) {
			u64 val = READ_ONCE(w->stats[s]);

			seq_printf(m, " %llu", val);
			total[s] += val;
		}
		seq_printf(m, " %d\n", w->spare);
	}

	seq_puts(m, "total -");
	for (s = 0; s < BLITZ_NR_STATS; s++)
		seq_printf(m, " %llu", total[s]);
	seq_puts(m, " -\n");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(stats);

/*
 * blocked: workers blocked in a job; spares: spare threads alive, of
 * which parked wait off duty. Each read on its own: a snapshot of moving
 * parts.
 */
static int state_show(struct seq_file *m, void *v)
{
	struct blitz_pool *pool = m->private;
	u64 c = blitz_counters_load(&pool->counters);
	unsigned int i, n = blitz_nr_slots(pool);
	unsigned int blocked = 0, spares = 0, parked = 0;
	struct blitz_worker *w;

	for (i = 0; i < n; i++) {
		w = pool->workers[i];
		/* The notifier's: a snapshot will do. */
		blocked += data_race(w->blocked);
		/* The manager's, as it makes and stops spares: the same. */
		if (!w->spare || !data_race(w->task))
			continue;
		spares++;
		parked += !READ_ONCE(w->on_duty);
	}
	seq_printf(m, "workers=%u sleeping=%u inactive=%u jec=%u shutdown=%d blocked=%u spares=%u parked=%u\n",
		   pool->nr_workers, blitz_sleeping(c), blitz_inactive(c),
		   blitz_jec(c), READ_ONCE(pool->shutdown), blocked, spares,
		   parked);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(state);

/*
 * For each CPU of the pool, what concurrency management counts there
 * (cm.c): its lists under its lock, as the notifiers' irq_work and the
 * manager change them; the counts beside them a snapshot.
 */
static int cpus_show(struct seq_file *m, void *v)
{
	struct blitz_pool *pool = m->private;
	unsigned int on_duty, parked;
	struct blitz_cm_cpu *cm;
	struct list_head *pos;
	bool want;
	int cpu;

	for_each_cpu(cpu, pool->cpumask) {
		cm = per_cpu_ptr(pool->cm, cpu);
		on_duty = 0;
		parked = 0;
		raw_spin_lock_irq(&cm->lock);
		list_for_each(pos, &cm->on_duty)
			on_duty++;
		list_for_each(pos, &cm->parked)
			parked++;
		want = cm->want;
		raw_spin_unlock_irq(&cm->lock);
		seq_printf(m, "cpu=%d running=%d dozing=%d on_duty=%u parked=%u want=%d\n",
			   cpu, atomic_read(&cm->nr_running),
			   atomic_read(&cm->nr_dozing), on_duty, parked, want);
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(cpus);

/* What the pool was made with; the housekeeping CPUs for no cpumask. */
static int attrs_show(struct seq_file *m, void *v)
{
	struct blitz_pool *pool = m->private;

	seq_printf(m, "cpumask=%*pbl nice=%d flags=%s\n",
		   cpumask_pr_args(pool->cpumask), pool->nice,
		   pool->flags & BLITZ_POOL_FREEZABLE ? "freezable" : "none");
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(attrs);

/*
 * The pool's directory: its name is the pool's, so failing to create it is
 * failing to create the pool. Without debugfs (not built, or disabled at
 * boot) there is nothing to create.
 */
int blitz_debugfs_add_pool(struct blitz_pool *pool)
{
	struct dentry *dir;

	if (IS_ERR(blitz_debugfs_root))
		return 0;
	dir = debugfs_create_dir(pool->name, blitz_debugfs_root);
	if (IS_ERR(dir))
		return PTR_ERR(dir);
	pool->debugfs = dir;
	debugfs_create_file("stats", 0444, dir, pool, &stats_fops);
	debugfs_create_file("state", 0444, dir, pool, &state_fops);
	debugfs_create_file("cpus", 0444, dir, pool, &cpus_fops);
	debugfs_create_file("attrs", 0444, dir, pool, &attrs_fops);
	return 0;
}

/* Waits for readers of the pool's files to finish. */
void blitz_debugfs_remove_pool(struct blitz_pool *pool)
{
	debugfs_remove_recursive(pool->debugfs);
}

void blitz_debugfs_init(void)
{
	blitz_debugfs_root = debugfs_create_dir("blitz", NULL);
}

void blitz_debugfs_exit(void)
{
	debugfs_remove_recursive(blitz_debugfs_root);
}
