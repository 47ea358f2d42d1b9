/*
 * QEMU TCG plugin: guest instructions executed, by where they run (user, kernel text, BPF and
 * its trampolines in the module area, other kernel), summed over vCPUs. A guest marks a point by
 * executing cpuid with eax = 0x5343584d ("SCXM") and a tag in ebx; the plugin then appends the
 * running totals, tagged, to the file given as out=PATH. Differences between two marks are the
 * instructions of what ran between them: a count the host's load does not move.
 * With pages=1 it also counts first touches: the distinct code and data pages each vCPU touches
 * between two writes to CR3 (each flushes QEMU's soft TLB, so each first touch is a TLB fill
 * there), by region, and the CR3 writes themselves. That mode runs several times slower.
 * With prof=1 it counts the instructions of each kernel and module-area (BPF) translated block by
 * its start address and, at each odd (end) mark, writes those of the span since the mark before
 * to <out>.prof.<mark> ("address instructions" lines): a profile that names the functions, from
 * the guest's kallsyms, with no sampling error.
 *   build: cc -O2 -shared -fPIC $(pkg-config --cflags glib-2.0) -I<qemu>/include/qemu insncount.c -o insncount.so
 *   run:   qemu-system-x86_64 ... -plugin ./insncount.so,out=/tmp/insn.txt
 */
#include <glib.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <qemu-plugin.h>

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

enum { R_USER, R_KERNEL, R_BPF, R_OTHER, R_TBS, NR };
static const char *names[NR] = { "user", "kernel", "bpf", "other", "tbs" };

/* data regions (x86-64 layout, KASLR on) */
enum { D_USER, D_DIRECT, D_VMALLOC, D_VMEMMAP, D_IMAGE, D_MODULE, D_OTHER, ND };
static const char *dnames[ND] = { "d_user", "d_direct", "d_vmalloc", "d_vmemmap", "d_image", "d_module", "d_other" };
#define MAX_VCPUS 64
struct vstate {
	GHashTable *seen;		/* pages touched since the last CR3 write, code and data */
	uint64_t cr3;			/* CR3 writes */
	uint64_t code[NR];		/* first touches of code pages, by region */
	uint64_t data[ND];		/* first touches of data pages, by region */
	uint64_t data_by[NR];		/* ... by the region of the code that touched them first */
	GHashTable *hist;		/* kernel code page -> first touches since the last mark */
};
static struct vstate vs[MAX_VCPUS];
static int pages_on;
/* prof=1: a counter slot per kernel or BPF block start address, in one scoreboard */
#define PROF_SLOTS (1u << 19)
static int prof_on;
static struct qemu_plugin_scoreboard *prof_sb;
static GHashTable *prof_slot;		/* block address -> slot + 1 */
static uint64_t prof_addr[PROF_SLOTS], prof_last[PROF_SLOTS];
static uint32_t prof_used;
static struct qemu_plugin_scoreboard *sb;
static qemu_plugin_u64 cnt[NR];
static struct qemu_plugin_register *reg_rax, *reg_rbx;
static FILE *out;
static const char *out_path;
static GMutex lock;

#define MARK 0x5343584dU

static int region(uint64_t pc)
{
	if (pc < 0x0000800000000000ULL)
		return R_USER;
	if (pc >= 0xffffffffc0000000ULL)
		return R_BPF;		/* the module area: BPF JIT images and trampolines (no modules loaded) */
	if (pc >= 0xffffffff80000000ULL)
		return R_KERNEL;
	return R_OTHER;
}

static int dregion(uint64_t a)
{
	if (a < 0x0000800000000000ULL)
		return D_USER;
	if (a >= 0xffffffffc0000000ULL)
		return D_MODULE;
	if (a >= 0xffffffff80000000ULL)
		return D_IMAGE;
	if (a >= 0xffffea0000000000ULL && a < 0xffffec0000000000ULL)
		return D_VMEMMAP;
	if (a >= 0xffffc90000000000ULL && a < 0xffffe90000000000ULL)
		return D_VMALLOC;
	if (a >= 0xffff888000000000ULL && a < 0xffffc88000000000ULL)
		return D_DIRECT;
	return D_OTHER;
}

/* page numbers, tagged so code (even) and data (odd) keys never meet */
static bool first_touch(unsigned int vcpu, uint64_t addr, int data)
{
	gpointer key = (gpointer)(uintptr_t)(((addr >> 12) << 1) | data);

	if (vcpu >= MAX_VCPUS)
		return false;
	if (g_hash_table_contains(vs[vcpu].seen, key))
		return false;
	g_hash_table_add(vs[vcpu].seen, key);
	return true;
}

static void on_tb(unsigned int vcpu, void *udata)
{
	uint64_t pc = (uint64_t)(uintptr_t)udata;

	int r = region(pc);

	if (!first_touch(vcpu, pc, 0))
		return;
	vs[vcpu].code[r]++;
	if (r != R_USER) {
		gpointer key = (gpointer)(uintptr_t)(pc >> 12);

		g_hash_table_insert(vs[vcpu].hist, key,
				    (gpointer)((uintptr_t)g_hash_table_lookup(vs[vcpu].hist, key) + 1));
	}
}

static void on_mem(unsigned int vcpu, qemu_plugin_meminfo_t info, uint64_t vaddr, void *udata)
{
	if (first_touch(vcpu, vaddr, 1)) {
		vs[vcpu].data[dregion(vaddr)]++;
		vs[vcpu].data_by[(uintptr_t)udata]++;
	}
}

static void on_cr3(unsigned int vcpu, void *udata)
{
	if (vcpu >= MAX_VCPUS)
		return;
	vs[vcpu].cr3++;
	g_hash_table_remove_all(vs[vcpu].seen);
}

/* mov %reg, %cr3: 0f 22 /r with reg = 3, perhaps after a REX prefix */
static bool is_cr3_write(const uint8_t *b, size_t n)
{
	size_t i = n > 0 && (b[0] & 0xf0) == 0x40 ? 1 : 0;

	return n >= i + 3 && b[i] == 0x0f && b[i + 1] == 0x22 && ((b[i + 2] >> 3) & 7) == 3;
}

static uint64_t read_reg(struct qemu_plugin_register *r)
{
	GByteArray *buf = g_byte_array_new();
	uint64_t v = 0;
	int n = qemu_plugin_read_register(r, buf);

	if (n > 0)
		memcpy(&v, buf->data, n < 8 ? n : 8);
	g_byte_array_free(buf, TRUE);
	return v;
}

static void vcpu_init(qemu_plugin_id_t id, unsigned int vcpu)
{
	GArray *regs = qemu_plugin_get_registers();

	for (guint i = 0; i < regs->len; i++) {
		qemu_plugin_reg_descriptor *d = &g_array_index(regs, qemu_plugin_reg_descriptor, i);

		if (!strcmp(d->name, "rax") || (!reg_rax && !strcmp(d->name, "eax")))
			reg_rax = d->handle;
		if (!strcmp(d->name, "rbx") || (!reg_rbx && !strcmp(d->name, "ebx")))
			reg_rbx = d->handle;
	}
	g_array_free(regs, TRUE);
}

/* the blocks' instructions since the last mark; written at an end (odd) mark; under lock */
static void prof_dump(uint64_t tag)
{
	char name[4096];
	FILE *f = NULL;

	if (tag & 1) {
		snprintf(name, sizeof(name), "%s.prof.%" PRIu64, out_path, tag);
		f = fopen(name, "w");
	}
	for (uint32_t i = 0; i < prof_used; i++) {
		qemu_plugin_u64 e = { .score = prof_sb, .offset = i * sizeof(uint64_t) };
		uint64_t now = qemu_plugin_u64_sum(e);

		if (f && now != prof_last[i])
			fprintf(f, "%" PRIx64 " %" PRIu64 "\n", prof_addr[i], now - prof_last[i]);
		prof_last[i] = now;
	}
	if (f)
		fclose(f);
}

static void on_cpuid(unsigned int vcpu, void *udata)
{
	uint64_t tag;

	if (!reg_rax || (uint32_t)read_reg(reg_rax) != MARK)
		return;
	tag = (uint32_t)read_reg(reg_rbx);
	g_mutex_lock(&lock);
	fprintf(out, "mark %" PRIu64 " vcpu %u", tag, vcpu);
	for (int i = 0; i < NR; i++)
		fprintf(out, " %s %" PRIu64, names[i], qemu_plugin_u64_sum(cnt[i]));
	if (pages_on) {
		uint64_t cr3 = 0, code[NR] = { 0 }, data[ND] = { 0 }, data_by[NR] = { 0 };

		for (int v = 0; v < MAX_VCPUS; v++) {
			cr3 += vs[v].cr3;
			for (int i = 0; i < NR; i++)
				code[i] += vs[v].code[i];
			for (int i = 0; i < ND; i++)
				data[i] += vs[v].data[i];
			for (int i = 0; i < NR; i++)
				data_by[i] += vs[v].data_by[i];
		}
		fprintf(out, " cr3 %" PRIu64, cr3);
		for (int i = 0; i < R_TBS; i++)
			fprintf(out, " c_%s %" PRIu64, names[i], code[i]);
		for (int i = 0; i < ND; i++)
			fprintf(out, " %s %" PRIu64, dnames[i], data[i]);
		for (int i = 0; i < R_TBS; i++)
			fprintf(out, " by_%s %" PRIu64, names[i], data_by[i]);
	}
	fprintf(out, "\n");
	fflush(out);
	if (prof_on)
		prof_dump(tag);
	/* kernel code pages: dumped at an odd (end) mark, for the span since the mark before */
	if (pages_on) {
		FILE *f = NULL;
		char name[4096];

		if (tag & 1) {
			snprintf(name, sizeof(name), "%s.pages.%" PRIu64, out_path, tag);
			f = fopen(name, "w");
		}
		for (int v = 0; v < MAX_VCPUS; v++) {
			GHashTableIter it;
			gpointer k, val;

			if (f) {
				g_hash_table_iter_init(&it, vs[v].hist);
				while (g_hash_table_iter_next(&it, &k, &val))
					fprintf(f, "%d %" PRIx64 " %" PRIuPTR "\n", v, (uint64_t)(uintptr_t)k << 12,
						(uintptr_t)val);
			}
			g_hash_table_remove_all(vs[v].hist);
		}
		if (f)
			fclose(f);
	}
	g_mutex_unlock(&lock);
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	int r = region(qemu_plugin_tb_vaddr(tb));

	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, cnt[r], n);
	qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64, cnt[R_TBS], 1);
	if (prof_on && r != R_USER) {
		uint64_t pc = qemu_plugin_tb_vaddr(tb);
		uint32_t slot;

		g_mutex_lock(&lock);
		slot = (uint32_t)(uintptr_t)g_hash_table_lookup(prof_slot, (gpointer)(uintptr_t)pc);
		if (!slot && prof_used < PROF_SLOTS) {
			prof_addr[prof_used] = pc;
			slot = ++prof_used;
			g_hash_table_insert(prof_slot, (gpointer)(uintptr_t)pc, (gpointer)(uintptr_t)slot);
		}
		g_mutex_unlock(&lock);
		if (slot)
			qemu_plugin_register_vcpu_tb_exec_inline_per_vcpu(tb, QEMU_PLUGIN_INLINE_ADD_U64,
				(qemu_plugin_u64){ .score = prof_sb, .offset = (slot - 1) * sizeof(uint64_t) }, n);
	}
	if (pages_on)
		qemu_plugin_register_vcpu_tb_exec_cb(tb, on_tb, QEMU_PLUGIN_CB_NO_REGS,
						     (void *)(uintptr_t)qemu_plugin_tb_vaddr(tb));
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint8_t b[16];
		size_t len = qemu_plugin_insn_data(insn, b, sizeof(b));

		if (pages_on) {
			qemu_plugin_register_vcpu_mem_cb(insn, on_mem, QEMU_PLUGIN_CB_NO_REGS,
							 QEMU_PLUGIN_MEM_RW, (void *)(uintptr_t)r);
			if (r != R_USER && is_cr3_write(b, len))
				qemu_plugin_register_vcpu_insn_exec_cb(insn, on_cr3, QEMU_PLUGIN_CB_NO_REGS, NULL);
		}
		if (r == R_USER && len == 2 && b[0] == 0x0f && b[1] == 0xa2)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, on_cpuid, QEMU_PLUGIN_CB_R_REGS, NULL);
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info,
					   int argc, char **argv)
{
	const char *path = "insncount.txt";

	for (int i = 0; i < argc; i++)
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		else if (!strcmp(argv[i], "pages=1"))
			pages_on = 1;
		else if (!strcmp(argv[i], "prof=1"))
			prof_on = 1;
	out_path = path;
	out = fopen(path, "a");
	if (!out)
		return -1;
	sb = qemu_plugin_scoreboard_new(NR * sizeof(uint64_t));
	for (int i = 0; i < NR; i++)
		cnt[i] = (qemu_plugin_u64){ .score = sb, .offset = i * sizeof(uint64_t) };
	if (prof_on) {
		prof_sb = qemu_plugin_scoreboard_new(PROF_SLOTS * sizeof(uint64_t));
		prof_slot = g_hash_table_new(g_direct_hash, g_direct_equal);
	}
	for (int v = 0; v < MAX_VCPUS; v++) {
		vs[v].seen = g_hash_table_new(g_direct_hash, g_direct_equal);
		vs[v].hist = g_hash_table_new(g_direct_hash, g_direct_equal);
	}
	qemu_plugin_register_vcpu_init_cb(id, vcpu_init);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	return 0;
}
