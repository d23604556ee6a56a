// SPDX-License-Identifier: GPL-2.0
/*
 * blitz: module init and exit, the default pool, and the tracepoints.
 */
#include <linux/err.h>
#include <linux/module.h>

#include "blitz.h"

#define CREATE_TRACE_POINTS
#include <trace/events/blitz.h>

/*
 * For probes in other modules: blitz_suspend.ko (selftests) holds the
 * manager there, to open the window between a spare's reap and its stop.
 */
EXPORT_TRACEPOINT_SYMBOL_GPL(blitz_spare_exit);

struct blitz_pool *blitz_default_pool;

static int __init blitz_init(void)
{
	int ret;

	blitz_race_init();
	blitz_cm_init();
	blitz_debugfs_init();
	ret = blitz_hotplug_init();
	if (ret)
		goto out_debugfs;
	blitz_default_pool = blitz_pool_create("default", 0);
	if (IS_ERR(blitz_default_pool)) {
		ret = PTR_ERR(blitz_default_pool);
		goto out_hotplug;
	}
	return 0;

out_hotplug:
	blitz_hotplug_exit();
out_debugfs:
	blitz_debugfs_exit();
	blitz_cm_exit();
	return ret;
}

/* Runs every job still queued on the default pool first. */
static void __exit blitz_exit(void)
{
	blitz_pool_destroy(blitz_default_pool);
	blitz_hotplug_exit();
	blitz_debugfs_exit();
	blitz_cm_exit();
}

module_init(blitz_init);
module_exit(blitz_exit);

MODULE_DESCRIPTION("blitz: work-stealing executor for kernel code");
MODULE_LICENSE("GPL");
MODULE_VERSION(BLITZ_VERSION);
