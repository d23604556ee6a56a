// SPDX-License-Identifier: GPL-2.0
/*
 * Print the host's TSC rate in kHz, measured against CLOCK_MONOTONIC over
 * 200 ms. QEMU's TCG guests read the host's TSC, so tools/guest-run gives
 * this rate to a guest kernel that cannot calibrate its TSC reliably.
 */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static long long ns_between(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1000000000LL + b->tv_nsec - a->tv_nsec;
}

int main(void)
{
	struct timespec a, b;
	unsigned long long t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &a);
	t0 = __rdtsc();
	do
		clock_gettime(CLOCK_MONOTONIC, &b);
	while (ns_between(&a, &b) < 200000000LL);
	t1 = __rdtsc();
	printf("%llu\n", (t1 - t0) * 1000000ULL / ns_between(&a, &b));
	return 0;
}
