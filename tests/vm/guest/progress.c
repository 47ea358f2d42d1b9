// Progress-gap workload for the sched_ext VM tests.
//   progress N PIDFILE [SPIN_US SLEEP_US]
//   progress merge OUT...
// Forks N worker processes; each spins reading CLOCK_MONOTONIC and records the largest gap
// between two consecutive readings (= the longest time it got no CPU). With SPIN_US/SLEEP_US
// (> 0) a worker spins SPIN_US, then sleeps SLEEP_US, and so on: the gap across a sleep counts
// too (so it is at least SLEEP_US plus the wakeup latency). A duty cycle keeps some CPU free:
// under single-threaded qemu TCG all vCPUs share one host thread, and a guest saturated with
// spinners makes everything else (e.g. the BPF verifier while a scheduler loads) ~N times slower. Worker pids go to
// PIDFILE (one a line), written once all workers run. On SIGINT/SIGTERM the parent collects
// the numbers, kills the workers, and prints:
//   workers=N alive=A max_gap_ms=G worst_worker=I gap_at_s=T iterations=K cycles=C p99_ms=X p999_ms=Y
// (gap_at_s: seconds since start when the worst gap ended). alive counts workers that were
// still running when the parent was signalled. Exit 0 if all were alive, else 1.
// The longest gap is one sample, and a heavy tail's: two runs of one scheduler in one boot can
// differ twofold. So each worker also keeps a histogram of its cycles' longest gaps (a cycle:
// one spin and its sleep, or 10 ms of spinning without SLEEP_US), in buckets 1/8 of an octave
// wide; p99_ms and p999_ms are quantiles over all workers' cycles (a bucket's upper bound).
// A line `hist B:COUNT ...` (all workers' cycles, by bucket) follows, so that
//   progress merge OUT...
// pools runs (phases of one test) into one summary line of the same form: quantiles over all
// their cycles, the longest gap of any, counts summed.
// Each worker's longest pauses over 100 ms are listed after (its NLOG longest), with
// where it was (CPU before and after) and whether it was across its sleep (a wakeup's wait)
// or in its spin (a preemption): what a tail is made of.
#define _GNU_SOURCE
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SUB 8				/* buckets per octave */
#define NBUCKET (64 * SUB)

#define NLOG 64
#define PAUSE_LOG_NS 100000000ull

struct pause {
	uint64_t at_ns, gap_ns;
	int32_t cpu_before, cpu_after, in_sleep;
};

struct slot {
	volatile uint64_t max_gap_ns, gap_at_ns, iters, cycles;
	volatile uint64_t hist[NBUCKET];
	volatile int started;
	volatile uint32_t nlog;
	struct pause log[NLOG];
};

/* keeps a worker's NLOG longest pauses: once full, a longer one replaces the shortest */
static void log_pause(struct slot *s, uint64_t at, uint64_t gap, int before, int in_sleep)
{
	uint32_t k = s->nlog, j;

	if (gap < PAUSE_LOG_NS) return;
	if (k >= NLOG) {
		for (k = 0, j = 1; j < NLOG; j++)
			if (s->log[j].gap_ns < s->log[k].gap_ns) k = j;
		if (s->log[k].gap_ns >= gap) return;
	} else {
		s->nlog++;
	}
	s->log[k] = (struct pause){ at, gap, before, sched_getcpu(), in_sleep };
}

/* bucket of ns: the octave (top bit) and the next 3 bits below it */
static int bucket(uint64_t ns)
{
	if (ns < SUB) return (int)ns;
	int k = 63 - __builtin_clzll(ns);
	return k * SUB + (int)((ns >> (k - 3)) & (SUB - 1));
}

/* the largest ns of bucket b */
static uint64_t bucket_top(int b)
{
	int k = b / SUB;
	if (k < 3) return (uint64_t)b;	/* below 8 ns, and the unused buckets */
	return ((uint64_t)(SUB + b % SUB + 1) << (k - 3)) - 1;
}

static volatile sig_atomic_t stop;
static void on_sig(int s) { (void)s; stop = 1; }

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + t.tv_nsec;
}

/* the smallest buckets with at least 99% and 99.9% of @cycles at or below them */
static void quantiles(const uint64_t *hist, uint64_t cycles, uint64_t *q99, uint64_t *q999)
{
	uint64_t acc = 0;
	int done99 = 0;

	*q99 = *q999 = 0;
	for (int b = 0; b < NBUCKET && cycles; b++) {
		acc += hist[b];
		if (!done99 && acc * 100 >= cycles * 99) { *q99 = bucket_top(b); done99 = 1; }
		if (acc * 1000 >= cycles * 999) { *q999 = bucket_top(b); break; }
	}
}

static void summary(int workers, int alive, uint64_t max, int worst, uint64_t at, uint64_t iters,
		    const uint64_t *hist)
{
	uint64_t cycles = 0, q99, q999;

	for (int b = 0; b < NBUCKET; b++) cycles += hist[b];
	quantiles(hist, cycles, &q99, &q999);
	printf("workers=%d alive=%d max_gap_ms=%.1f worst_worker=%d gap_at_s=%.1f iterations=%llu"
	       " cycles=%llu p99_ms=%.1f p999_ms=%.1f\n",
	       workers, alive, max / 1e6, worst, at / 1e9, (unsigned long long)iters,
	       (unsigned long long)cycles, q99 / 1e6, q999 / 1e6);
}

/* progress merge OUT...: one summary over the runs' summary and hist lines */
static int merge(int nf, char **files)
{
	static uint64_t hist[NBUCKET];
	uint64_t max = 0, at = 0, iters = 0;
	int workers = 0, alive = 0, worst = -1;

	for (int f = 0; f < nf; f++) {
		FILE *in = fopen(files[f], "r");
		char line[1 << 16];
		int w, a, ww, got = 0, hist_seen = 0;
		double g, gat;
		unsigned long long it;

		if (!in) { perror(files[f]); return 2; }
		while (fgets(line, sizeof(line), in)) {
			if (sscanf(line, "workers=%d alive=%d max_gap_ms=%lf worst_worker=%d gap_at_s=%lf iterations=%llu",
				   &w, &a, &g, &ww, &gat, &it) == 6) {
				workers += w; alive += a; iters += it; got = 1;
				if ((uint64_t)(g * 1e6) >= max) { max = (uint64_t)(g * 1e6); at = (uint64_t)(gat * 1e9); worst = ww; }
			} else if (!strncmp(line, "hist", 4)) {
				char *tok = line + 4, *end;
				hist_seen = 1;
				for (;;) {
					long b = strtol(tok, &end, 10);
					if (end == tok || *end != ':') break;
					unsigned long long c = strtoull(end + 1, &tok, 10);
					if (b >= 0 && b < NBUCKET) hist[b] += c;
				}
			}
		}
		fclose(in);
		if (!got || !hist_seen) { fprintf(stderr, "%s: no summary or hist line\n", files[f]); return 2; }
	}
	summary(workers, alive, max, worst, at, iters, hist);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 3 && !strcmp(argv[1], "merge"))
		return merge(argc - 2, argv + 2);
	if (argc != 3 && argc != 5) {
		fprintf(stderr, "usage: progress N PIDFILE [SPIN_US SLEEP_US] | progress merge OUT...\n");
		return 2;
	}
	int n = atoi(argv[1]);
	uint64_t spin_ns = argc == 5 ? strtoull(argv[3], NULL, 10) * 1000 : 0;
	uint64_t sleep_ns = argc == 5 ? strtoull(argv[4], NULL, 10) * 1000 : 0;
	if (n < 1 || n > 4096) return 2;
	struct slot *s = mmap(NULL, sizeof(*s) * n, PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (s == MAP_FAILED) { perror("mmap"); return 2; }
	pid_t *pids = calloc(n, sizeof(pid_t));
	uint64_t t0 = now_ns();

	for (int i = 0; i < n; i++) {
		pid_t p = fork();
		if (p < 0) { perror("fork"); return 2; }
		if (p == 0) {
			signal(SIGINT, SIG_DFL);
			signal(SIGTERM, SIG_DFL);
			uint64_t last = now_ns(), max = 0, at = 0, it = 0, burst = last, cmax = 0;
			uint64_t window = sleep_ns ? spin_ns : 10000000ull;
			int cpu = sched_getcpu();
			s[i].started = 1;
			for (;;) {
				uint64_t t = now_ns();
				/* first: a pause that ends a window belongs to it */
				if (t - last > cmax) cmax = t - last;
				if (t - last >= PAUSE_LOG_NS) {
					log_pause(&s[i], t - t0, t - last, cpu, 0);
					cpu = sched_getcpu();
				}
				if (t - burst >= window) {
					if (sleep_ns) {
						struct timespec d = { sleep_ns / 1000000000ull, sleep_ns % 1000000000ull };
						cpu = sched_getcpu();
						nanosleep(&d, NULL);
						t = now_ns();
						if (t - last > cmax) cmax = t - last;
						log_pause(&s[i], t - t0, t - last, cpu, 1);
						cpu = sched_getcpu();
					}
					s[i].hist[bucket(cmax)]++;
					s[i].cycles++;
					burst = t;
					cmax = 0;
				}
				if (t - last > max) {
					max = t - last;
					at = t - t0;
					s[i].max_gap_ns = max;
					s[i].gap_at_ns = at;
				}
				last = t;
				if ((++it & 0xfff) == 0) s[i].iters = it;
			}
		}
		pids[i] = p;
	}
	struct sigaction sa = { .sa_handler = on_sig };
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	for (int i = 0; i < n; i++)
		while (!s[i].started && !stop) usleep(1000);
	FILE *f = fopen(argv[2], "w");
	if (!f) { perror(argv[2]); return 2; }
	for (int i = 0; i < n; i++) fprintf(f, "%d\n", pids[i]);
	fclose(f);

	while (!stop) pause();

	int alive = 0;
	for (int i = 0; i < n; i++)
		if (waitpid(pids[i], NULL, WNOHANG) == 0) alive++;
	uint64_t max = 0, at = 0, iters = 0;
	int worst = -1;
	for (int i = 0; i < n; i++) {
		iters += s[i].iters;
		if (s[i].max_gap_ns >= max) { max = s[i].max_gap_ns; at = s[i].gap_at_ns; worst = i; }
	}
	for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
	for (int i = 0; i < n; i++) waitpid(pids[i], NULL, 0);
	static uint64_t hist[NBUCKET];
	for (int b = 0; b < NBUCKET; b++)
		for (int i = 0; i < n; i++) hist[b] += s[i].hist[b];
	summary(n, alive, max, worst, at, iters, hist);
	printf("hist");
	for (int b = 0; b < NBUCKET; b++)
		if (hist[b]) printf(" %d:%llu", b, (unsigned long long)hist[b]);
	printf("\n");
	for (int i = 0; i < n; i++)
		printf("  worker %d pid %d max_gap_ms=%.1f at_s=%.1f\n", i, pids[i],
		       s[i].max_gap_ns / 1e6, s[i].gap_at_ns / 1e9);
	for (int i = 0; i < n; i++)
		for (uint32_t k = 0; k < s[i].nlog && k < NLOG; k++)
			printf("  pause worker %d at_s=%.2f gap_ms=%.1f %s cpu %d->%d\n", i,
			       s[i].log[k].at_ns / 1e9, s[i].log[k].gap_ns / 1e6,
			       s[i].log[k].in_sleep ? "sleep" : "spin", s[i].log[k].cpu_before,
			       s[i].log[k].cpu_after);
	return alive == n ? 0 : 1;
}
