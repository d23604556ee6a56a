// SPDX-License-Identifier: GPL-2.0
/*
 * Test harness only: holds the preempt notifiers' static key, and the
 * freezer's (freezing(), which every freeze turns on and off) unless
 * freezer=0, on while it is loaded. tools/guest-run loads it before the
 * test starts, and never unloads it. Turning a key on or off patches
 * text, which QEMU 7.2's multi-threaded TCG now and then mis-executes (an
 * emulator bug: Documentation/blitz/testing.rst); held on, loading and
 * unloading blitz and freezing patch no text that runs (a load patches
 * only the module's own sites, before its code runs), and a boot that
 * hits the bug here is booted again, as one that hits it anywhere
 * before the test. Not for real kernels: it costs every context switch a
 * look at an empty list, and every freezing() a call. A guest that never
 * freezes (a benchmark) loads it with freezer=0: its freezing() then
 * costs what a real kernel's does.
 */
#include <linux/freezer.h>
#include <linux/jump_label.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>

static bool hold_freezer = true;
module_param_named(freezer, hold_freezer, bool, 0444);
MODULE_PARM_DESC(freezer, "hold the freezer's key too (default true)");

static int __init blitz_keyhold_init(void)
{
	preempt_notifier_inc();
	if (hold_freezer)
		static_branch_inc(&freezer_active);
	return 0;
}

static void __exit blitz_keyhold_exit(void)
{
	if (hold_freezer)
		static_branch_dec(&freezer_active);
	preempt_notifier_dec();
}

module_init(blitz_keyhold_init);
module_exit(blitz_keyhold_exit);

MODULE_DESCRIPTION("blitz test harness: the notifiers' and the freezer's keys held on");
MODULE_LICENSE("GPL");
