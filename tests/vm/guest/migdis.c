// SPDX-License-Identifier: GPL-2.0
/*
 * migdis SECS [LOOPS]: spend SECS seconds almost wholly migration-disabled and preemptible. The
 * kernel runs a sleepable syscall program's BPF_PROG_TEST_RUN pinned to its CPU
 * (bpf_prog_run_pin_on_cpu: migrate_disable() around the run) with preemption on, and the
 * program here spins in bpf_loop() for LOOPS rounds. Under full preemption a slice that ends
 * there switches the task out migration-disabled, and the scheduler must keep it on its CPU.
 * Hand-assembled, with the little BTF a callback needs, and loaded by the raw bpf(2) syscall:
 * no libbpf, no compiler for BPF.
 * Prints "migdis: calls N longest_gap_ms G cpus C": test runs completed, the longest time between
 * two completions (a task the scheduler stranded stops completing), and how many CPUs it was seen on.
 */
#define _GNU_SOURCE
#include <linux/bpf.h>
#include <linux/btf.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* bpf_loop() rounds a call: a few ms on the host, so nearly all of the task's time is inside */
#define LOOPS_DFL (1 << 20)
#define BPF_FUNC_LOOP_ID 181	/* bpf_loop, in every kernel with syscall programs' test runs to use */

static long bpf(int cmd, union bpf_attr *attr)
{
	return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

/*
 * BTF for the two functions (func_info: the verifier wants it for a program with a callback):
 * [1] int, [2] int (void), [3] main, [4] cb, both of type [2].
 */
static int load_btf(char *log, unsigned int log_size)
{
	static const char strs[] = "\0int\0main\0cb";
	struct {
		struct btf_header hdr;
		__u32 types[4 * 3 + 1];
		char strs[sizeof(strs)];
	} __attribute__((packed)) b = {
		.hdr = { .magic = BTF_MAGIC, .version = BTF_VERSION, .hdr_len = sizeof(struct btf_header),
			 .type_off = 0, .type_len = sizeof(b.types), .str_off = sizeof(b.types),
			 .str_len = sizeof(strs) },
		.types = {
			1, BTF_KIND_INT << 24, 4, BTF_INT_SIGNED << 24 | 32,
			0, BTF_KIND_FUNC_PROTO << 24, 1,
			5, BTF_KIND_FUNC << 24, 2,
			10, BTF_KIND_FUNC << 24, 2,
		},
	};
	union bpf_attr attr;

	memcpy(b.strs, strs, sizeof(strs));
	memset(&attr, 0, sizeof(attr));
	attr.btf = (uintptr_t)&b;
	attr.btf_size = sizeof(b);
	attr.btf_log_buf = (uintptr_t)log;
	attr.btf_log_size = log_size;
	attr.btf_log_level = 1;
	return bpf(BPF_BTF_LOAD, &attr);
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	/* r1 = loops; r2 = &callback; r3 = r4 = 0; bpf_loop(); return 0 | callback: return 0 */
	struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_1 },
		{ .code = BPF_LD | BPF_DW | BPF_IMM, .dst_reg = BPF_REG_2, .src_reg = BPF_PSEUDO_FUNC,
		  .imm = 6 },
		{ 0 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_3 },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_4 },
		{ .code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_LOOP_ID },
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
		/* the callback, at 8 = 1 + 1 + 6 */
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	struct bpf_func_info funcs[] = { { .insn_off = 0, .type_id = 3 }, { .insn_off = 8, .type_id = 4 } };
	char log[4096] = "";
	unsigned long calls = 0;
	double start, last, gap = 0, secs;
	uint64_t cpus = 0;
	unsigned long loops = LOOPS_DFL;
	union bpf_attr attr;
	int fd, btf_fd, n = 0;

	if (argc < 2 || argc > 3 || (secs = atof(argv[1])) <= 0 ||
	    (argc == 3 && !(loops = strtoul(argv[2], NULL, 0)))) {
		fprintf(stderr, "usage: migdis SECS [LOOPS]\n");
		return 2;
	}
	btf_fd = load_btf(log, sizeof(log));
	if (btf_fd < 0) {
		perror("migdis: BPF_BTF_LOAD");
		fprintf(stderr, "%s\n", log);
		return 2;
	}
	insns[0].imm = loops;
	memset(&attr, 0, sizeof(attr));
	attr.prog_btf_fd = btf_fd;
	attr.func_info = (uintptr_t)funcs;
	attr.func_info_cnt = 2;
	attr.func_info_rec_size = sizeof(funcs[0]);
	attr.prog_type = BPF_PROG_TYPE_SYSCALL;
	attr.prog_flags = BPF_F_SLEEPABLE;
	attr.insns = (uintptr_t)insns;
	attr.insn_cnt = sizeof(insns) / sizeof(insns[0]);
	attr.license = (uintptr_t)"GPL";
	attr.log_buf = (uintptr_t)log;
	attr.log_size = sizeof(log);
	attr.log_level = 1;
	fd = bpf(BPF_PROG_LOAD, &attr);
	if (fd < 0) {
		perror("migdis: BPF_PROG_LOAD");
		fprintf(stderr, "%s\n", log);
		return 2;
	}
	start = last = now_ms();
	while (now_ms() - start < secs * 1e3) {
		int cpu;

		memset(&attr, 0, sizeof(attr));
		attr.test.prog_fd = fd;
		if (bpf(BPF_PROG_TEST_RUN, &attr)) {
			perror("migdis: BPF_PROG_TEST_RUN");
			return 2;
		}
		calls++;
		if (now_ms() - last > gap)
			gap = now_ms() - last;
		last = now_ms();
		cpu = sched_getcpu();
		if (cpu >= 0 && cpu < 64 && !(cpus & (1ULL << cpu))) {
			cpus |= 1ULL << cpu;
			n++;
		}
	}
	printf("migdis: calls %lu longest_gap_ms %.0f cpus %d\n", calls, gap, n);
	return 0;
}
