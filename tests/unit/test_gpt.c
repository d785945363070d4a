/* Unit tests for hv/gpt.c: guest page-table walks in every paging mode over a fake guest RAM. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/gpt.c"

#define RAM_SIZE	0x100000u	/* 1 MiB of guest RAM at guest-physical 0 */

#define P	0x1ull
#define RW	0x2ull
#define US	0x4ull
#define PS	0x80ull
#define XD	(1ull << 63)

static uint8_t ram[RAM_SIZE];

static bool in_ram(uint64_t gpa, size_t len)
{
	return len <= RAM_SIZE && gpa <= RAM_SIZE - len;
}

static bool ram_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	(void)ctx;
	if (!in_ram(gpa, len))
		return false;
	memcpy(buf, ram + gpa, len);
	return true;
}

static bool ram_write(void *ctx, uint64_t gpa, const void *buf, size_t len)
{
	(void)ctx;
	if (!in_ram(gpa, len))
		return false;
	memcpy(ram + gpa, buf, len);
	return true;
}

static void put32(uint64_t gpa, uint32_t v)
{
	memcpy(ram + gpa, &v, 4);
}

static void put64(uint64_t gpa, uint64_t v)
{
	memcpy(ram + gpa, &v, 8);
}

/* The second pass: the RAM is a window the walker loads from directly (hv/guest_mem.c's way). */
static bool direct;

static struct gpt_cpu cpu_for(uint64_t cr0, uint64_t cr4, uint64_t efer, uint64_t cr3)
{
	return (struct gpt_cpu){ .cr0 = cr0, .cr3 = cr3, .cr4 = cr4, .efer = efer,
				 .read_gpa = ram_read, .write_gpa = ram_write,
				 .ram = direct ? ram : NULL, .ram_size = direct ? sizeof(ram) : 0 };
}

static const char *const status_name[] = { "ok", "page fault", "non-canonical", "bad gpa",
					    "bad mode" };
static const char *const access_name[] = { "read", "write", "fetch", "supervisor read" };

/*
 * Translate la and compare: want_val is the GPA for GPT_OK and GPT_BAD_GPA, the error code for
 * GPT_PAGE_FAULT. Faults must also report the (32-bit outside IA-32e mode) address.
 */
static void expect(const struct gpt_cpu *cpu, const char *what, uint64_t la, enum gpt_access acc,
		   enum gpt_status want, uint64_t want_val)
{
	struct gpt_result res = { 0 };
	enum gpt_status st = gpt_translate(cpu, la, acc, &res);
	uint64_t want_la = cpu->efer & EFER_LMA ? la : (uint32_t)la;
	uint64_t got_val = st == GPT_PAGE_FAULT ? res.pf_ec : res.gpa;
	bool ok = st == want;

	if (want == GPT_OK || want == GPT_BAD_GPA || want == GPT_PAGE_FAULT)
		ok &= got_val == want_val;
	if (want == GPT_PAGE_FAULT)
		ok &= res.la == want_la;
	check(ok, "%s: cpl %u %s %#llx -> %s %#llx (want %s %#llx)", what, cpu->cpl,
	      access_name[acc], (unsigned long long)la, status_name[st],
	      (unsigned long long)got_val, status_name[want], (unsigned long long)want_val);
}

static void test_no_paging(void)
{
	struct gpt_cpu cpu = cpu_for(0, 0, 0, 0);

	expect(&cpu, "paging off", 0x12345, GPT_WRITE, GPT_OK, 0x12345);
	expect(&cpu, "paging off, 32-bit linear", 0x100000010ull, GPT_READ, GPT_OK, 0x10);
	cpu.cpl = 3;
	expect(&cpu, "paging off, no rights to check", 0xfee00300, GPT_FETCH, GPT_OK, 0xfee00300);
}

static void test_32bit(void)
{
	const uint64_t cr0 = CR0_PG;
	struct gpt_cpu cpu = cpu_for(cr0, CR4_PSE, 0, 0x1000);

	memset(ram, 0, sizeof(ram));
	put32(0x1000 + 0 * 4, 0x2000 | P | RW | US);
	put32(0x1000 + 1 * 4, 0x00c00000 | P | RW | US | PS);
	put32(0x1000 + 2 * 4, 0x00800000 | 5 << 13 | P | PS);	/* PSE-36: bits 39:32 = 5 */
	put32(0x1000 + 3 * 4, 0x3000 | P | US);			/* read-only directory entry */
	put32(0x1000 + 4 * 4, 0x00200000 | P | RW | US);	/* page table outside RAM */
	put32(0x2000 + 5 * 4, 0x7000 | P | RW | US);
	put32(0x2000 + 6 * 4, 0x8000 | P | US);
	put32(0x2000 + 7 * 4, 0x9000 | P | RW);
	put32(0x3000 + 0 * 4, 0xa000 | P | RW | US);

	expect(&cpu, "32-bit 4K", 0x5123, GPT_READ, GPT_OK, 0x7123);
	expect(&cpu, "32-bit drops bits 63:32", 0x700005123ull, GPT_READ, GPT_OK, 0x7123);
	expect(&cpu, "32-bit not present", 0x8000, GPT_READ, GPT_PAGE_FAULT, 0);
	expect(&cpu, "32-bit not present", 0x8000, GPT_WRITE, GPT_PAGE_FAULT, GPT_PF_W);
	expect(&cpu, "32-bit PDE not present", 0x01400000, GPT_READ, GPT_PAGE_FAULT, 0);
	expect(&cpu, "32-bit supervisor write, WP=0", 0x6010, GPT_WRITE, GPT_OK, 0x8010);
	expect(&cpu, "32-bit supervisor read of supervisor page", 0x7004, GPT_READ, GPT_OK, 0x9004);
	expect(&cpu, "32-bit 4M page (PSE)", 0x412345, GPT_WRITE, GPT_OK, 0xc12345);
	expect(&cpu, "32-bit 4M page, PSE-36 high bits", 0x812345, GPT_READ, GPT_OK,
	       0x500812345ull);
	expect(&cpu, "32-bit page table outside RAM", 0x01000000, GPT_READ, GPT_BAD_GPA,
	       0x00200000);
	expect(&cpu, "32-bit no NX: fetch allowed", 0x5000, GPT_FETCH, GPT_OK, 0x7000);

	cpu.cr4 = 0;
	expect(&cpu, "32-bit PS ignored without CR4.PSE: table at 0xc00000", 0x412345, GPT_READ,
	       GPT_BAD_GPA, 0x00c00000 + 0x12 * 4);

	cpu.cr0 = cr0 | CR0_WP;
	expect(&cpu, "32-bit supervisor write, WP=1", 0x6010, GPT_WRITE, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_W);

	cpu.cpl = 3;
	expect(&cpu, "32-bit user read", 0x5123, GPT_READ, GPT_OK, 0x7123);
	expect(&cpu, "32-bit user write to read-only", 0x6010, GPT_WRITE, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_W | GPT_PF_U);
	expect(&cpu, "32-bit user read of supervisor page", 0x7000, GPT_READ, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_U);
	expect(&cpu, "32-bit user write under read-only PDE", 0xc00000, GPT_WRITE,
	       GPT_PAGE_FAULT, GPT_PF_P | GPT_PF_W | GPT_PF_U);
	expect(&cpu, "32-bit user read under read-only PDE", 0xc00000, GPT_READ, GPT_OK, 0xa000);
	cpu.cr0 = cr0;
	expect(&cpu, "32-bit user write to read-only, WP=0", 0x6010, GPT_WRITE, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_W | GPT_PF_U);
	/* Without SMEP, 32-bit paging never reports I/D, even with NXE (SDM Vol. 3A 4.7). */
	cpu.efer = EFER_NXE;
	expect(&cpu, "32-bit user fetch, not present: no I/D", 0x8000, GPT_FETCH, GPT_PAGE_FAULT,
	       GPT_PF_U);
	cpu.cr4 = CR4_SMEP;
	expect(&cpu, "32-bit user fetch, not present, SMEP: I/D", 0x8000, GPT_FETCH,
	       GPT_PAGE_FAULT, GPT_PF_U | GPT_PF_I);

	cpu.cpl = 0;
	expect(&cpu, "32-bit SMEP: supervisor fetch from user page", 0x5000, GPT_FETCH,
	       GPT_PAGE_FAULT, GPT_PF_P | GPT_PF_I);
	expect(&cpu, "32-bit SMEP: supervisor read of user page", 0x5000, GPT_READ, GPT_OK, 0x7000);
	expect(&cpu, "32-bit SMEP: supervisor fetch from supervisor page", 0x7000, GPT_FETCH,
	       GPT_OK, 0x9000);
}

static void test_pae(void)
{
	const uint64_t cr4 = CR4_PAE;
	struct gpt_cpu cpu = cpu_for(CR0_PG, cr4, EFER_NXE, 0x1020);
	const uint64_t pdptes[4] = { 0x2000, 0x2000 | P, 0, 0 };

	memset(ram, 0, sizeof(ram));
	/* CR3 is only 32-byte aligned: the PDPTEs sit at 0x1020. */
	put64(0x1020 + 0 * 8, 0x2000 | P);
	put64(0x1020 + 1 * 8, 0x2000);				/* not present: rest ignored */
	put64(0x1020 + 2 * 8, 0x3000 | P);
	put64(0x1020 + 3 * 8, 0x200000 | P);			/* directory outside RAM */
	put64(0x2000 + 0 * 8, 0x4000 | P | RW | US);
	put64(0x2000 + 1 * 8, 0x00600000 | P | RW | PS);	/* 2M supervisor page */
	put64(0x2000 + 2 * 8, 0x4000 | P | RW | US | XD);
	put64(0x4000 + 1 * 8, 0x5000 | P | RW | US);
	put64(0x4000 + 2 * 8, 0x6000 | P | RW | US | XD);
	put64(0x3000 + 0 * 8, 0x123456600000ull | P | RW | PS);	/* 2M page above 4 GiB */

	expect(&cpu, "PAE 4K", 0x1234, GPT_READ, GPT_OK, 0x5234);
	expect(&cpu, "PAE PDPTE not present", 0x40000000, GPT_READ, GPT_PAGE_FAULT, 0);
	expect(&cpu, "PAE 2M page", 0x201234, GPT_WRITE, GPT_OK, 0x601234);
	expect(&cpu, "PAE 2M page above 4 GiB", 0x8001abcd, GPT_READ, GPT_OK,
	       0x123456600000ull + 0x1abcd);
	expect(&cpu, "PAE directory outside RAM", 0xc0000000, GPT_READ, GPT_BAD_GPA, 0x200000);
	expect(&cpu, "PAE NX page, read", 0x2010, GPT_READ, GPT_OK, 0x6010);
	expect(&cpu, "PAE NX page, fetch", 0x2010, GPT_FETCH, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_I);
	expect(&cpu, "PAE NX directory entry, fetch", 0x401000, GPT_FETCH, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_I);
	expect(&cpu, "PAE NX directory entry, read", 0x401000, GPT_READ, GPT_OK, 0x5000);
	expect(&cpu, "PAE fetch, not present, NXE: I/D", 0x3000, GPT_FETCH, GPT_PAGE_FAULT,
	       GPT_PF_I);

	cpu.cpl = 3;
	expect(&cpu, "PAE user fetch of NX page", 0x2010, GPT_FETCH, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_U | GPT_PF_I);
	expect(&cpu, "PAE user write, PDPTE not present", 0x40000000, GPT_WRITE, GPT_PAGE_FAULT,
	       GPT_PF_W | GPT_PF_U);
	expect(&cpu, "PAE user read of supervisor 2M page", 0x201234, GPT_READ, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_U);
	expect(&cpu, "PAE user fetch of user page", 0x1000, GPT_FETCH, GPT_OK, 0x5000);

	cpu.cpl = 0;
	cpu.efer = 0;
	expect(&cpu, "PAE without NXE: XD ignored, not part of the address", 0x2010, GPT_FETCH,
	       GPT_OK, 0x6010);
	expect(&cpu, "PAE fetch, not present, no NXE: no I/D", 0x3000, GPT_FETCH, GPT_PAGE_FAULT,
	       0);

	/* With EPT the PDPTEs come from the VMCS, not from memory. */
	cpu.pdptes = pdptes;
	expect(&cpu, "PAE PDPTE registers: slot 1 present", 0x40001234, GPT_READ, GPT_OK, 0x5234);
	expect(&cpu, "PAE PDPTE registers: slot 0 absent", 0x1234, GPT_READ, GPT_PAGE_FAULT, 0);
	cpu.pdptes = NULL;
	cpu.cr3 = 0x300000;
	expect(&cpu, "PAE PDPT outside RAM", 0x40000000, GPT_READ, GPT_BAD_GPA, 0x300008);
}

/* Tables shared by the 4-level and copy tests. */
static void build_4level(void)
{
	memset(ram, 0, sizeof(ram));
	put64(0x1000 + 0 * 8, 0x2000 | P | RW | US);
	put64(0x1000 + 1 * 8, 0x4000 | P | RW | US | XD);
	put64(0x1000 + 2 * 8, 0x300000 | P | RW | US);		/* PDPT outside RAM */
	put64(0x1000 + 256 * 8, 0x3000 | P | RW);		/* supervisor upper half */
	put64(0x2000 + 0 * 8, 0x5000 | P | RW | US);
	/* 1G page at 512 GiB; bit 12 is PAT there, not address. */
	put64(0x2000 + 1 * 8, 0x8000000000ull | 0x1000 | P | RW | US | PS);
	put64(0x5000 + 0 * 8, 0x6000 | P | RW | US);
	put64(0x5000 + 1 * 8, 0x00a00000 | P | RW | US | PS);
	put64(0x5000 + 2 * 8, 0x7000 | P | US);			/* read-only directory entry */
	put64(0x6000 + 1 * 8, 0x9000 | P | RW | US);
	put64(0x6000 + 2 * 8, 0xa000 | P | RW);
	put64(0x6000 + 4 * 8, 0x200000 | P | RW | US);		/* page outside RAM */
	put64(0x7000 + 0 * 8, 0xb000 | P | RW | US);
	put64(0x3000 + 0 * 8, 0x8000 | P | RW);
	put64(0x8000 + 0 * 8, 0x00200000 | P | RW | US | PS);	/* user, under a supervisor PML4E */
	put64(0x4000 + 0 * 8, 0x0 | P | RW | US | PS);
}

#define LM_CR0	(CR0_PG | CR0_WP)
#define LM_CR4	CR4_PAE
#define LM_EFER	(EFER_LMA | EFER_NXE)

static void test_4level(void)
{
	struct gpt_cpu cpu = cpu_for(LM_CR0, LM_CR4, LM_EFER, 0x1000);

	build_4level();
	expect(&cpu, "4-level 4K", 0x1abc, GPT_READ, GPT_OK, 0x9abc);
	expect(&cpu, "4-level 2M", 0x212345, GPT_WRITE, GPT_OK, 0xa12345);
	expect(&cpu, "4-level 1G, PAT bit not address", 0x52345678, GPT_READ, GPT_OK,
	       0x8012345678ull);
	expect(&cpu, "4-level upper half 2M", 0xffff800000001234ull, GPT_FETCH, GPT_OK, 0x201234);
	expect(&cpu, "4-level PTE not present", 0x0, GPT_READ, GPT_PAGE_FAULT, 0);
	expect(&cpu, "4-level PDPTE not present", 0x80000000, GPT_WRITE, GPT_PAGE_FAULT,
	       GPT_PF_W);
	expect(&cpu, "4-level PML4E not present", 0x18000000000ull, GPT_READ, GPT_PAGE_FAULT, 0);
	expect(&cpu, "4-level fetch, not present: I/D", 0x0, GPT_FETCH, GPT_PAGE_FAULT, GPT_PF_I);
	expect(&cpu, "4-level PDPT outside RAM", 0x10000000000ull, GPT_READ, GPT_BAD_GPA,
	       0x300000);
	expect(&cpu, "4-level NX PML4E, read", 0x8000001000ull, GPT_READ, GPT_OK, 0x1000);
	expect(&cpu, "4-level NX PML4E, fetch", 0x8000001000ull, GPT_FETCH, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_I);
	expect(&cpu, "4-level supervisor write, WP=1, read-only PDE", 0x400000, GPT_WRITE,
	       GPT_PAGE_FAULT, GPT_PF_P | GPT_PF_W);
	expect(&cpu, "4-level bits 63:47 not a sign extension", 0x0000800000000000ull, GPT_READ,
	       GPT_NON_CANONICAL, 0);
	expect(&cpu, "4-level bits 63:47 not a sign extension", 0xffff7fffffffffffull, GPT_READ,
	       GPT_NON_CANONICAL, 0);

	cpu.cr0 = CR0_PG;
	expect(&cpu, "4-level supervisor write, WP=0, read-only PDE", 0x400000, GPT_WRITE,
	       GPT_OK, 0xb000);

	cpu.cpl = 3;
	expect(&cpu, "4-level user write, read-only PDE", 0x400000, GPT_WRITE, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_W | GPT_PF_U);
	expect(&cpu, "4-level user read of supervisor PML4E", 0xffff800000001234ull, GPT_READ,
	       GPT_PAGE_FAULT, GPT_PF_P | GPT_PF_U);
	expect(&cpu, "4-level user read of supervisor PTE", 0x2000, GPT_READ, GPT_PAGE_FAULT,
	       GPT_PF_P | GPT_PF_U);
	expect(&cpu, "4-level user read", 0x1abc, GPT_READ, GPT_OK, 0x9abc);
	expect(&cpu, "4-level implicit supervisor read (the IDT) at CPL 3 of a supervisor PML4E",
	       0xffff800000001234ull, GPT_READ_SYS, GPT_OK, 0x201234);
	expect(&cpu, "4-level implicit supervisor read at CPL 3, not present: no U in the code",
	       0x0, GPT_READ_SYS, GPT_PAGE_FAULT, 0);

	cpu.cr4 = LM_CR4 | CR4_LA57;
	expect(&cpu, "5-level paging refused", 0x1abc, GPT_READ, GPT_BAD_MODE, 0);
}

static bool no_read(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	(void)ctx;
	(void)gpa;
	(void)buf;
	(void)len;
	return false;
}

/* Entries in the RAM window are read from it, without the callback; the rest through it. */
static void test_ram_window(void)
{
	struct gpt_cpu cpu = cpu_for(LM_CR0, LM_CR4, LM_EFER, 0x1000);

	build_4level();
	cpu.read_gpa = no_read;
	cpu.ram = ram;
	cpu.ram_size = RAM_SIZE;
	expect(&cpu, "RAM window: 4-level 4K, no callback", 0x1abc, GPT_READ, GPT_OK, 0x9abc);
	expect(&cpu, "RAM window: 4-level 1G", 0x52345678, GPT_READ, GPT_OK, 0x8012345678ull);
	cpu.ram_size = 0x2000;
	expect(&cpu, "RAM window: a table beyond it goes to the callback", 0x1abc, GPT_READ,
	       GPT_BAD_GPA, 0x2000);
	cpu = cpu_for(CR0_PG, CR4_PSE, 0, 0x1000);
	memset(ram, 0, sizeof(ram));
	put32(0x1000, 0x2000 | P | RW | US);
	put32(0x2000 + 4, 0x7000 | P | RW | US);
	cpu.read_gpa = no_read;
	cpu.ram = ram;
	cpu.ram_size = RAM_SIZE;
	expect(&cpu, "RAM window: 32-bit paging, 4-byte entries", 0x1234, GPT_READ, GPT_OK, 0x7234);
}

/* A walk remembered: taken again without walking only while nothing it read has changed. */
static void test_memo(void)
{
	struct gpt_cpu cpu = cpu_for(LM_CR0, LM_CR4, LM_EFER, 0x1000);
	struct gpt_memo m = { 0 };
	struct gpt_result res;

	build_4level();
	check(gpt_translate_memo(&cpu, 0x1abc, GPT_FETCH, &m, &res) == GPT_OK &&
	      res.gpa == 0x9abc && m.valid && m.n == 4 && !m.hits,
	      "memo: a 4-level walk remembered with its 4 entries");
	check(gpt_translate_memo(&cpu, 0x1123, GPT_FETCH, &m, &res) == GPT_OK &&
	      res.gpa == 0x9123 && res.la == 0x1123 && m.hits == 1,
	      "memo: the same page again: no walk, the same page");
	check(gpt_translate_memo(&cpu, 0x1123, GPT_READ, &m, &res) == GPT_OK && m.hits == 1,
	      "memo: another kind of access walks");
	put64(m.entry_gpa[3], m.entry[3] ^ 0x3000);	/* the PTE now maps another page */
	check(gpt_translate_memo(&cpu, 0x1123, GPT_READ, &m, &res) == GPT_OK &&
	      res.gpa == 0xa123 && m.hits == 1,
	      "memo: a paging-structure entry changed (no exit tells): walked again");
	check(gpt_translate_memo(&cpu, 0x0, GPT_READ, &m, &res) == GPT_PAGE_FAULT &&
	      !m.valid && m.hits == 1, "memo: another page walks; a fault is not remembered");
	build_4level();
	gpt_translate_memo(&cpu, 0xffff800000001234ull, GPT_READ, &m, &res);
	cpu.cpl = 3;
	check(gpt_translate_memo(&cpu, 0xffff800000001234ull, GPT_READ, &m, &res) ==
	      GPT_PAGE_FAULT && m.hits == 1,
	      "memo: CPL 3 on a supervisor page: walked again, its #PF");
	cpu.cpl = 0;
	gpt_translate_memo(&cpu, 0x1abc, GPT_READ, &m, &res);
	cpu.cr3 = 0xc000;	/* an empty PML4 */
	check(gpt_translate_memo(&cpu, 0x1abc, GPT_READ, &m, &res) == GPT_PAGE_FAULT &&
	      m.hits == 1, "memo: another CR3 walks its own tables");
	cpu = cpu_for(CR0_PG, CR4_PAE, 0, 0x1000);
	check(gpt_translate_memo(&cpu, 0x1abc, GPT_READ, &m, &res) == GPT_OK && !m.valid,
	      "memo: PAE paging (PDPTEs are registers) is not remembered");
}

/* Bytes used in place through a remembered walk: in one page of RAM, a changed mapping seen. */
static void test_map_memo(void)
{
	struct gpt_cpu cpu = cpu_for(LM_CR0, LM_CR4, LM_EFER, 0x1000);
	struct gpt_memo m = { 0 };

	cpu.ram = ram;
	cpu.ram_size = RAM_SIZE;
	build_4level();
	check(gpt_map_memo(&cpu, 0x1abc, 72, GPT_READ, &m) == ram + 0x9abc && m.valid,
	      "map: 72 bytes in one page of RAM, where the walk goes");
	check(gpt_map_memo(&cpu, 0x1abc, 72, GPT_READ, &m) == ram + 0x9abc && m.hits == 1,
	      "map: the same bytes again, by the remembered walk");
	put64(0x6000 + 1 * 8, 0xb000 | P | RW | US);	/* the guest maps the page elsewhere */
	check(gpt_map_memo(&cpu, 0x1abc, 72, GPT_READ, &m) == ram + 0xbabc && m.hits == 1,
	      "map: a page-table change between two calls is seen (no exit tells)");
	check(!gpt_map_memo(&cpu, 0x1fc0, 72, GPT_READ, &m),
	      "map: bytes that cross into the next page: NULL (it may map anywhere)");
	check(!gpt_map_memo(&cpu, 0x4000, 8, GPT_READ, &m), "map: a page outside RAM: NULL");
	check(!gpt_map_memo(&cpu, 0x0, 8, GPT_READ, &m), "map: a page fault: NULL");
}

/*
 * A walk of fewer entries than the memo has slots (a 1 GiB page: 2), after one of 4: the check
 * loads every slot, so what the longer walk left in the others must not make it miss; a walk
 * of none (paging off) is taken again too.
 */
static void test_map_memo_short(void)
{
	struct gpt_cpu cpu = cpu_for(LM_CR0, LM_CR4, LM_EFER, 0x1000);
	struct gpt_memo m = { 0 };
	uint64_t pte;

	cpu.ram = ram;
	cpu.ram_size = RAM_SIZE;
	build_4level();
	check(gpt_map_memo(&cpu, 0x1abc, 8, GPT_READ, &m) == ram + 0x9abc && m.n == 4,
	      "map, short walk: first a 4K page, 4 entries");
	pte = m.entry_gpa[3];
	check(gpt_map_memo(&cpu, 0x8000001234ull, 8, GPT_READ, &m) == ram + 0x1234 && m.n == 2,
	      "map, short walk: a 1G page, 2 entries");
	put64(pte, 0x5000 | P | RW | US);	/* the 4K page's PTE, no part of this walk */
	check(gpt_map_memo(&cpu, 0x8000001234ull, 8, GPT_READ, &m) == ram + 0x1234 &&
	      m.hits == 1, "map, short walk: taken again, whatever the longer walk's entries became");
	put64(m.entry_gpa[1], 0);	/* its PDPTE: the 1G page gone */
	check(!gpt_map_memo(&cpu, 0x8000001234ull, 8, GPT_READ, &m) && m.hits == 1,
	      "map, short walk: its own last entry changed: walked again, the fault seen");
	cpu = cpu_for(0, 0, 0, 0);
	cpu.ram = ram;
	cpu.ram_size = RAM_SIZE;
	gpt_map_memo(&cpu, 0x3456, 8, GPT_READ, &m);
	check(gpt_map_memo(&cpu, 0x3456, 8, GPT_READ, &m) == ram + 0x3456 && m.n == 0 &&
	      m.hits == 2, "map, paging off: no entry, taken again");
}

/*
 * 32-bit paging's 4-byte entries are checked by 8-byte loads, masked: the next entry's change
 * is no miss, the entry's own is; an entry in RAM's last 4 bytes is not loaded from the window.
 */
static void test_map_memo_32bit(void)
{
	struct gpt_cpu cpu = cpu_for(CR0_PG, CR4_PSE, 0, 0x1000);
	struct gpt_memo m = { 0 };

	cpu.ram = ram;
	cpu.ram_size = RAM_SIZE;
	memset(ram, 0, sizeof(ram));
	put32(0x1000, 0x2000 | P | RW | US);
	put32(0x2000 + 1 * 4, 0x7000 | P | RW | US);
	check(gpt_map_memo(&cpu, 0x1abc, 8, GPT_READ, &m) == ram + 0x7abc && m.ram == ram,
	      "map, 32-bit: remembered, its entries in the RAM window");
	put32(0x2000 + 2 * 4, 0x8000 | P | RW | US);	/* the next PTE, in the same 8 bytes */
	check(gpt_map_memo(&cpu, 0x1abc, 8, GPT_READ, &m) == ram + 0x7abc && m.hits == 1,
	      "map, 32-bit: the next entry's change is no miss");
	put32(0x2000 + 1 * 4, 0x9000 | P | RW | US);
	check(gpt_map_memo(&cpu, 0x1abc, 8, GPT_READ, &m) == ram + 0x9abc && m.hits == 1,
	      "map, 32-bit: the entry's own change is seen");
	put32(0x2000 + 1 * 4, 0x0000 | P | RW | US);
	cpu.ram_size = 0x2008;	/* the PTE is RAM's last 4 bytes */
	check(gpt_map_memo(&cpu, 0x1abc, 8, GPT_READ, &m) == ram + 0xabc && m.valid && !m.ram,
	      "map, 32-bit: an entry in RAM's last 4 bytes is not loaded 8 bytes wide");
	check(gpt_map_memo(&cpu, 0x1abc, 8, GPT_READ, &m) == ram + 0xabc && m.hits == 2,
	      "map, 32-bit: and is checked through the callback");
}

static void fill(uint64_t gpa, size_t len, uint8_t seed)
{
	for (size_t i = 0; i < len; i++)
		ram[gpa + i] = (uint8_t)(seed + i);
}

static void test_copy(void)
{
	struct gpt_cpu cpu = cpu_for(LM_CR0, LM_CR4, LM_EFER, 0x1000);
	struct gpt_result res = { 0 };
	uint8_t buf[32], want[32];
	enum gpt_status st;

	build_4level();
	/* la 0x1ff8..0x2007 is 0x9ff8..0x9fff then 0xa000..0xa007: not contiguous in the RAM. */
	fill(0x9ff8, 8, 0x10);
	fill(0xa000, 8, 0x18);
	fill(0x9000, 8, 0xee);
	memset(buf, 0, sizeof(buf));
	st = gpt_copy_from_guest(&cpu, buf, 0x1ff8, 16, GPT_READ, &res);
	for (int i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x10 + i);
	check(st == GPT_OK && !memcmp(buf, want, 16), "copy from guest across two pages");

	st = gpt_copy_from_guest(&cpu, buf, 0x1000, 0, GPT_READ, &res);
	check(st == GPT_OK, "copy of nothing succeeds");

	for (int i = 0; i < 16; i++)
		want[i] = (uint8_t)(0x80 + i);
	st = gpt_copy_to_guest(&cpu, 0x1ff8, want, 16, &res);
	check(st == GPT_OK && !memcmp(ram + 0x9ff8, want, 8) && !memcmp(ram + 0xa000, want + 8, 8),
	      "copy to guest across two pages");

	/* la 0x3000 is not mapped: the first 8 bytes arrive, then the fault names 0x3000. */
	memset(buf, 0, sizeof(buf));
	fill(0xaff8, 8, 0x40);
	st = gpt_copy_from_guest(&cpu, buf, 0x2ff8, 16, GPT_READ, &res);
	check(st == GPT_PAGE_FAULT && res.la == 0x3000 && res.pf_ec == 0 &&
	      !memcmp(buf, ram + 0xaff8, 8),
	      "copy from guest into an unmapped page: #PF at 0x3000 (got %d, la %#llx, ec %#x)",
	      st, (unsigned long long)res.la, res.pf_ec);

	st = gpt_copy_from_guest(&cpu, buf, 0x4ff8, 16, GPT_READ, &res);
	check(st == GPT_BAD_GPA && res.la == 0x4ff8 && res.gpa == 0x200ff8,
	      "copy from guest page outside RAM (got %d, la %#llx, gpa %#llx)", st,
	      (unsigned long long)res.la, (unsigned long long)res.gpa);
	st = gpt_copy_to_guest(&cpu, 0x4000, want, 4, &res);
	check(st == GPT_BAD_GPA && res.gpa == 0x200000, "copy to guest page outside RAM");

	cpu.cpl = 3;
	st = gpt_copy_to_guest(&cpu, 0x1ffc, want, 8, &res);
	check(st == GPT_PAGE_FAULT && res.la == 0x2000 &&
	      res.pf_ec == (GPT_PF_P | GPT_PF_W | GPT_PF_U) && !memcmp(ram + 0x9ffc, want, 4),
	      "user copy to guest into a supervisor page: #PF at 0x2000 after the first page");

	cpu.cpl = 0;
	st = gpt_copy_from_guest(&cpu, buf, 0x8000000ff8ull, 16, GPT_FETCH, &res);
	check(st == GPT_PAGE_FAULT && res.la == 0x8000000ff8ull &&
	      res.pf_ec == (GPT_PF_P | GPT_PF_I), "instruction fetch from an NX page");

	/* Paging off outside IA-32e mode: the linear address wraps at 4 GiB. */
	cpu = cpu_for(0, 0, 0, 0);
	fill(0x0, 8, 0x60);
	st = gpt_copy_from_guest(&cpu, buf, 0x100000000ull, 8, GPT_READ, &res);
	check(st == GPT_OK && !memcmp(buf, ram, 8), "paging off: copy from a wrapped address");
}

int main(void)
{
	/* Every walk and copy the same through read_gpa and through the RAM window. */
	for (int pass = 0; pass < 2; pass++) {
		direct = pass;
		memset(ram, 0, sizeof(ram));
		test_no_paging();
		test_32bit();
		test_pae();
		test_4level();
		test_copy();
	}
	direct = false;
	test_ram_window();
	test_memo();
	test_map_memo();
	test_map_memo_short();
	test_map_memo_32bit();
	return unit_summary();
}
