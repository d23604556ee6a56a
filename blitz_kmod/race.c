// SPDX-License-Identifier: GPL-2.0
/*
 * Race-window injection; see race.h.
 */
#include <linux/bits.h>
#include <linux/delay.h>
#include <linux/hash.h>
#include <linux/jiffies.h>
#include <linux/moduleparam.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>

#include "race.h"

DEFINE_STATIC_KEY_FALSE(blitz_race_key);

static bool race_windows;
unsigned int blitz_race_delay_us = 1000;
unsigned long blitz_race_mask = ~0UL;
unsigned int blitz_race_every = 16;
/* Module parameters are parsed before init: the key follows from then on. */
static bool race_live;

static void blitz_race_apply(void)
{
	if (race_windows)
		static_branch_enable(&blitz_race_key);
	else
		static_branch_disable(&blitz_race_key);
}

static int blitz_race_set(const char *val, const struct kernel_param *kp)
{
	int ret = param_set_bool(val, kp);

	if (!ret && race_live)
		blitz_race_apply();
	return ret;
}

static const struct kernel_param_ops blitz_race_ops = {
	.set = blitz_race_set,
	.get = param_get_bool,
};

module_param_cb(race_windows, &blitz_race_ops, &race_windows, 0644);
MODULE_PARM_DESC(race_windows,
		 "inject random delays at race windows (debugging; default 0)");
module_param_named(race_delay_us, blitz_race_delay_us, uint, 0644);
module_param_named(race_every, blitz_race_every, uint, 0644);
MODULE_PARM_DESC(race_every,
		 "act on one pass in this many through a window (default 16)");
module_param_named(race_mask, blitz_race_mask, ulong, 0644);
MODULE_PARM_DESC(race_mask,
		 "which windows, a bit each in enum blitz_race order (default all)");
MODULE_PARM_DESC(race_delay_us,
		 "longest injected delay where the task may sleep (default 1000)");

void blitz_race_init(void)
{
	race_live = true;
	blitz_race_apply();
}

/*
 * One pass in race_every through a window; there, where sleeping is
 * allowed, a yield, a sleep or a spin; in a task that may not sleep but
 * takes interrupts (an RCU read section of PREEMPT_RCU, through which a
 * preemption can come, or preemption off), a spin of up to
 * race_delay_us, capped at 50 ms, through which other CPUs run; else a
 * spin of up to 8 us. More often and the torture crawls: a
 * parallel loop passes hundreds of windows. Sleeps last at least a jiffy.
 * The "random" bits come from the clock: any context may call this, and
 * get_random_u32() takes a sleeping lock on PREEMPT_RT.
 */
void __blitz_race_window(enum blitz_race where)
{
	u32 r = hash_64(local_clock() + where, 32);
	unsigned int max = READ_ONCE(blitz_race_delay_us) ?: 1;
	unsigned int every = READ_ONCE(blitz_race_every) ?: 1;

	if (!(READ_ONCE(blitz_race_mask) & BIT(where)) || r % every)
		return;
	r /= every;
	if (!in_task() || irqs_disabled()) {
		udelay(r % 8);
		return;
	}
	if (!preemptible() || rcu_preempt_depth()) {
		r %= min(max, 50000U);
		mdelay(r / 1000);
		udelay(r % 1000);
		return;
	}
	switch (r % 4) {
	case 0:
		cond_resched();
		break;
	case 1:
		udelay(r % min(max, 50U));
		break;
	default:
		/*
		 * Not usleep_range(): strict KCSAN reports the plain accesses
		 * to the sleeper's task pointer in the hrtimer sleep of 6.12.
		 */
		schedule_timeout_uninterruptible(usecs_to_jiffies(r % max) ?: 1);
		break;
	}
}
