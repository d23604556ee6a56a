/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the test modules that suspend: whether /sys/power/pm_test selects
 * @level (CONFIG_PM_DEBUG), so that a suspend stops there rather than
 * suspend the machine.
 */
#ifndef _BLITZ_PM_TEST_H
#define _BLITZ_PM_TEST_H

#include <linux/err.h>
#include <linux/fs.h>
#include <linux/string.h>

/* @level as pm_test shows it selected: "[freezer]", "[processors]". */
static inline bool blitz_pm_test_selected(const char *level)
{
	struct file *f = filp_open("/sys/power/pm_test", O_RDONLY, 0);
	char buf[128];
	loff_t pos = 0;
	ssize_t n;

	if (IS_ERR(f))
		return false;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return !!strstr(buf, level);
}

#endif /* _BLITZ_PM_TEST_H */
