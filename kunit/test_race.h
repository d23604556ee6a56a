/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Race windows for one KUnit case: open only the windows it names, at
 * its rate and delay, and give the module parameters back afterwards.
 */
#ifndef _BLITZ_TEST_RACE_H
#define _BLITZ_TEST_RACE_H

#include <linux/compiler.h>
#include <linux/jump_label.h>

#include "../blitz_kmod/race.h"

struct blitz_test_race {
	unsigned long mask;
	unsigned int every;
	unsigned int delay_us;
};

/*
 * Open the windows in @mask, acting at one pass in @every, for up to
 * @delay_us; @saved keeps the parameters for blitz_test_race_close().
 */
static inline void blitz_test_race_open(struct blitz_test_race *saved,
					unsigned long mask, unsigned int every,
					unsigned int delay_us)
{
	*saved = (struct blitz_test_race){
		.mask = blitz_race_mask,
		.every = blitz_race_every,
		.delay_us = blitz_race_delay_us,
	};
	WRITE_ONCE(blitz_race_mask, mask);
	WRITE_ONCE(blitz_race_every, every);
	WRITE_ONCE(blitz_race_delay_us, delay_us);
	static_branch_enable(&blitz_race_key);
}

/* Close the windows and give back the parameters @saved. */
static inline void blitz_test_race_close(const struct blitz_test_race *saved)
{
	static_branch_disable(&blitz_race_key);
	WRITE_ONCE(blitz_race_delay_us, saved->delay_us);
	WRITE_ONCE(blitz_race_mask, saved->mask);
	WRITE_ONCE(blitz_race_every, saved->every);
}

#endif /* _BLITZ_TEST_RACE_H */
