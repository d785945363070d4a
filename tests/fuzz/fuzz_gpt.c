/* Fuzz target for hv/gpt.c: guest page walks and copies over a fuzzed guest RAM, any mode. */
#include "hv/gpt.c"
#include "tests/fuzz/fakes.h"

#define RAM_SIZE	0x10000u	/* 64 KiB of guest RAM: 16 pages of tables and data */
#define COPY_MAX	0x2100u		/* a copy may span three pages */

static struct fake_ram ram;

/* Every access the walker makes stays inside one guest page. */
static void check_access(uint64_t gpa, size_t len)
{
	FZ_CHECK(len >= 1 && len <= PAGE_SIZE && (gpa & (PAGE_SIZE - 1)) + len <= PAGE_SIZE,
		 "access of %zu bytes at 0x%llx", len, (unsigned long long)gpa);
}

static bool ram_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	check_access(gpa, len);
	return fake_ram_read(ctx, gpa, buf, len);
}

static bool ram_write(void *ctx, uint64_t gpa, const void *buf, size_t len)
{
	check_access(gpa, len);
	return fake_ram_write(ctx, gpa, buf, len);
}

/* A translation and its failure details agree with the mode; writes and fetches imply reads. */
static void check_translate(const struct gpt_cpu *cpu, uint64_t la, enum gpt_access acc)
{
	struct gpt_result res, rd;
	enum gpt_status st = gpt_translate(cpu, la, acc, &res);
	uint64_t la_used = cpu->efer & EFER_LMA ? la : (uint32_t)la;

	FZ_CHECK(st <= GPT_BAD_MODE && res.la == la_used, "status %d, la 0x%llx", st,
		 (unsigned long long)res.la);
	if (st == GPT_OK && !(cpu->cr0 & CR0_PG))
		FZ_CHECK(res.gpa == la_used, "paging off but translated");
	if (st == GPT_PAGE_FAULT)
		FZ_CHECK(!!(res.pf_ec & GPT_PF_W) == (acc == GPT_WRITE) &&
			 !!(res.pf_ec & GPT_PF_U) == (cpu->cpl == 3) &&
			 (acc == GPT_FETCH || !(res.pf_ec & GPT_PF_I)) &&
			 !(res.pf_ec & ~(GPT_PF_P | GPT_PF_W | GPT_PF_U | GPT_PF_I)),
			 "#PF error code 0x%x", res.pf_ec);
	if (st == GPT_OK && acc != GPT_READ)
		FZ_CHECK(gpt_translate(cpu, la, GPT_READ, &rd) == GPT_OK && rd.gpa == res.gpa,
			 "access %d allowed where a read is not", acc);
}

/* Copies move the bytes the per-page translations point at, or stop with a reason. */
static void check_copy(const struct gpt_cpu *cpu, uint64_t la, size_t len, enum gpt_access acc)
{
	uint8_t *buf = fz_block(len);
	struct gpt_result res;
	enum gpt_status st;

	memset(buf, 0x5a, len);
	st = gpt_copy_from_guest(cpu, buf, la, len, acc, &res);
	FZ_CHECK(st <= GPT_BAD_MODE, "copy from: status %d", st);
	if (st == GPT_OK && len) {
		struct gpt_result one;

		FZ_CHECK(gpt_translate(cpu, la + len - 1, acc, &one) == GPT_OK &&
			 ram.b[one.gpa] == buf[len - 1], "last byte copied wrongly");
	}
	st = gpt_copy_to_guest(cpu, la, buf, len, &res);
	FZ_CHECK(st <= GPT_BAD_MODE, "copy to: status %d", st);
	fz_free(buf, len);
}

/*
 * Input: CR0, CR4, EFER, CR3 (8 bytes each), CPL, PDPTE source, 4 PDPTEs, linear address,
 * access, copy length (2 bytes), RAM record count; then RAM records (fake_ram_fill()).
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint8_t mem[RAM_SIZE];
	struct fz in = { data, size };
	uint64_t pdptes[4];
	struct gpt_cpu cpu = { .read_gpa = ram_read, .write_gpa = ram_write, .ctx = &ram };
	bool vmcs_pdptes;
	uint64_t la;
	enum gpt_access acc;
	size_t len;

	/* One statement each: the order of reads within an initializer list is unspecified. */
	cpu.cr0 = fz_u64(&in);
	cpu.cr4 = fz_u64(&in);
	cpu.efer = fz_u64(&in);
	cpu.cr3 = fz_u64(&in);
	cpu.cpl = fz_u8(&in) % 4;
	vmcs_pdptes = fz_u8(&in) & 1;
	for (unsigned i = 0; i < 4; i++)
		pdptes[i] = fz_u64(&in);
	cpu.pdptes = vmcs_pdptes ? pdptes : NULL;
	la = fz_u64(&in);
	acc = fz_u8(&in) % 3;
	len = fz_u16(&in) % COPY_MAX;
	ram = (struct fake_ram){ mem, RAM_SIZE };
	fake_ram_fill(&ram, &in, fz_u8(&in));

	for (int a = GPT_READ; a <= GPT_FETCH; a++)
		check_translate(&cpu, la, a);
	check_copy(&cpu, la, len, acc == GPT_WRITE ? GPT_READ : acc);
	return 0;
}
