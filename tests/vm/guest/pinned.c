/* A spinner that watches where it runs.
 * usage: pinned SECS [WINDOW_FROM [START_CPU RELEASE_AT RELEASE_CPUS]]
 * Spins for SECS seconds sampling sched_getcpu(); a sample outside the task's affinity mask
 * is a violation (the mask is re-read before one is counted, so a mask widened meanwhile is
 * honoured). From WINDOW_FROM seconds on (default 0) it measures the CPU time it gets.
 * With START_CPU it pins itself there first and, RELEASE_AT seconds in, allows itself
 * RELEASE_CPUS (a cpulist like 0-3,6): an imbalance made without any shell timing.
 * prints: samples=N violations=V cpus=C cpu_ms=X window_ms=Y
 * With PINNED_TRACE=FILE it also writes 'T CPU' (CLOCK_MONOTONIC seconds) to FILE each time it
 * finds itself on another CPU: a migration trace to line up with the other spinners'. */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(clockid_t clk)
{
	struct timespec t;

	clock_gettime(clk, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void parse_cpulist(const char *s, cpu_set_t *set)
{
	CPU_ZERO(set);
	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (*end == '-')
			b = strtol(end + 1, &end, 10);
		for (long c = a; c <= b; c++)
			CPU_SET(c, set);
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			break;
	}
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 5, from = argc > 2 ? atof(argv[2]) : 0;
	double t0 = now(CLOCK_MONOTONIC), t, w0 = -1, c0 = 0;
	double release_at = argc > 5 ? atof(argv[4]) : -1;
	unsigned long samples = 0, violations = 0;
	cpu_set_t seen, mask, release;
	const char *trace_path = getenv("PINNED_TRACE");
	FILE *trace = trace_path ? fopen(trace_path, "w") : NULL;
	int last_cpu = -1;

	CPU_ZERO(&seen);
	if (release_at >= 0) {
		CPU_ZERO(&mask);
		CPU_SET(atoi(argv[3]), &mask);
		parse_cpulist(argv[5], &release);
		if (sched_setaffinity(0, sizeof(mask), &mask))
			return 2;
	}
	if (sched_getaffinity(0, sizeof(mask), &mask))
		return 2;
	do {
		for (int i = 0; i < 1000; i++) {
			int cpu = sched_getcpu();

			samples++;
			if (cpu < 0)
				continue;
			if (trace && cpu != last_cpu) {
				fprintf(trace, "%.6f %d\n", now(CLOCK_MONOTONIC), cpu);
				last_cpu = cpu;
			}
			CPU_SET(cpu, &seen);
			if (!CPU_ISSET(cpu, &mask)) {
				if (sched_getaffinity(0, sizeof(mask), &mask))
					return 2;
				if (!CPU_ISSET(cpu, &mask))
					violations++;
			}
		}
		t = now(CLOCK_MONOTONIC);
		if (release_at >= 0 && t - t0 >= release_at) {
			if (sched_setaffinity(0, sizeof(release), &release))
				return 2;
			release_at = -1;
		}
		if (w0 < 0 && t - t0 >= from) {
			w0 = t;
			c0 = now(CLOCK_THREAD_CPUTIME_ID);
		}
	} while (t - t0 < secs);
	if (trace)
		fclose(trace);
	printf("samples=%lu violations=%lu cpus=%d cpu_ms=%.0f window_ms=%.0f\n", samples, violations,
	       CPU_COUNT(&seen), (now(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e3, (t - w0) * 1e3);
	return 0;
}
