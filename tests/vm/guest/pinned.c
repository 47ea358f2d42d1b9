/* Spins for SECS seconds sampling sched_getcpu(); counts samples outside the task's own
 * affinity mask (read at each sample, so a mask widened meanwhile is honoured) and the CPUs seen.
 * usage: pinned SECS   prints: samples=N violations=V cpus=C */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5;
	struct timespec t0, t;
	unsigned long samples = 0, violations = 0;
	cpu_set_t seen, mask;
	CPU_ZERO(&seen);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		for (int i = 0; i < 1000; i++) {
			int cpu = sched_getcpu();
			if ((samples++ & 255) == 0 && sched_getaffinity(0, sizeof(mask), &mask))
				return 2;
			if (cpu >= 0 && !CPU_ISSET(cpu, &mask))
				violations++;
			if (cpu >= 0)
				CPU_SET(cpu, &seen);
		}
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) + (t.tv_nsec - t0.tv_nsec) / 1e9 < secs);
	printf("samples=%lu violations=%lu cpus=%d\n", samples, violations, CPU_COUNT(&seen));
	return 0;
}
