/* Hostile cases against the hypercalls: bad numbers and pointers from CPL 0, any from CPL 3. */
#include "guest-stub/tests/hostile/hostile.h"

/*
 * Page tables made to trip the hypervisor's guest page walk, mapped at 512 GiB (PML4 slot 1):
 * each 1 GiB slot below is one trap. The guest itself never touches these addresses.
 */
enum craft_slot {
	CRAFT_PD_OUTSIDE,	/* the page directory lies outside RAM */
	CRAFT_1G_AT_0,		/* a 1 GiB page at 0: only its first mem= bytes are RAM */
	CRAFT_1G_TOP,		/* a 1 GiB page at the top of the 52-bit physical space */
	CRAFT_PD_IN_APIC,	/* the page directory "is" the APIC page */
	CRAFT_PT_MAXPHYS,	/* a page table at the highest physical page */
};

#define CRAFT_BASE		(1ull << 39)
#define CRAFT_VA(slot, off)	(CRAFT_BASE + ((uint64_t)(slot) << 30) + (off))

static uint64_t craft_pdpt[512] __attribute__((aligned(4096)));
static uint64_t craft_pd[512] __attribute__((aligned(4096)));

static void craft_tables(uint64_t ram)
{
	uint64_t cr3, *pml4;

	__asm__ volatile("mov %%cr3, %0" : "=r"(cr3));
	pml4 = (uint64_t *)(uintptr_t)(cr3 & ~0xFFFull);
	craft_pdpt[CRAFT_PD_OUTSIDE] = (ram + 0x200000) | PTE_P | PTE_RW;
	craft_pdpt[CRAFT_1G_AT_0] = PTE_P | PTE_RW | PTE_PS;
	craft_pdpt[CRAFT_1G_TOP] = 0x000FFFFFC0000000ull | PTE_P | PTE_RW | PTE_PS;
	craft_pdpt[CRAFT_PD_IN_APIC] = APIC_DEFAULT_BASE | PTE_P | PTE_RW;
	craft_pdpt[CRAFT_PT_MAXPHYS] = (uintptr_t)craft_pd | PTE_P | PTE_RW;
	craft_pd[0] = 0x000FFFFFFFFFF000ull | PTE_P | PTE_RW;
	pml4[CRAFT_BASE >> 39] = (uintptr_t)craft_pdpt | PTE_P | PTE_RW;
}

struct bad_ptr bad_ptrs[NBAD_PTRS];

void bad_pointers_init(uint64_t ram)
{
	const struct bad_ptr list[NBAD_PTRS] = {
		{ "just past RAM", ram },
		{ "8 bytes before the end of RAM, read 16", ram - 8 },
		{ "3 GiB, outside RAM", 0xC0000000ull },
		{ "the APIC page", APIC_DEFAULT_BASE },
		{ "4 GiB, not mapped by the guest", 0x100000000ull },
		{ "non-canonical 2^47", 1ull << 47 },
		{ "non-canonical 2^63", 1ull << 63 },
		{ "the last byte of the address space", UINT64_MAX },
		{ "a page directory outside RAM", CRAFT_VA(CRAFT_PD_OUTSIDE, 0) },
		{ "a 1 GiB page past the end of RAM", CRAFT_VA(CRAFT_1G_AT_0, ram) },
		{ "a 1 GiB page at the top of physical space", CRAFT_VA(CRAFT_1G_TOP, 0) },
		{ "a page directory in the APIC page", CRAFT_VA(CRAFT_PD_IN_APIC, 0) },
		{ "a page table at the highest physical page", CRAFT_VA(CRAFT_PT_MAXPHYS, 0) },
	};

	craft_tables(ram);
	memcpy(bad_ptrs, list, sizeof(list));
}

/* case=hc: every bad base hypercall number, pointer and length, from CPL 0. */
int case_hc(uint64_t ram)
{
	static const char greeting[] = "hostile: hc: written by hypercall\n";
	const uint64_t lengths[] = { HC_CONSOLE_MAX + 1, 1ull << 31, 1ull << 63, UINT64_MAX };
	unsigned wrong = 0, tried = 0;
	int64_t exits;

	bad_pointers_init(ram);
	/* Numbers: 0-0x1FF (KVM's and Xen's among them), each bit, random ones. */
	for (unsigned i = 0; i < 0x200 + 64 + 300; i++) {
		uint64_t nr = i < 0x200 ? i : i < 0x200 + 64 ? 1ull << (i - 0x200) : rnd();

		if ((nr >= HC_CONSOLE_WRITE && nr < HC_BASE_COUNT) ||
		    (nr >= HC_PMU_BASE && nr <= HC_PMU_IACK))
			continue;
		tried++;
		wrong += hypercall(nr, rnd(), rnd(), rnd()) != -PV_ENOSYS;
	}
	report(!wrong, "hc: %u unknown hypercall numbers: %u not -ENOSYS", tried, wrong);
	for (size_t i = 0; i < NBAD_PTRS; i++) {
		char what[96];

		snprintf(what, sizeof(what), "hc: console write from %s", bad_ptrs[i].what);
		expect(what, hypercall(HC_CONSOLE_WRITE, bad_ptrs[i].la, 16, 0), -PV_EFAULT);
	}
	for (size_t i = 0; i < ARRAY_SIZE(lengths); i++)
		expect("hc: console write too long", hypercall(HC_CONSOLE_WRITE,
		       (uintptr_t)greeting, lengths[i], 0), -PV_EINVAL);
	expect("hc: console write of 0 bytes from a bad pointer",
	       hypercall(HC_CONSOLE_WRITE, 1ull << 63, 0, 0), 0);
	expect("hc: console write from an odd address through a crafted 1 GiB page",
	       hypercall(HC_CONSOLE_WRITE, CRAFT_VA(CRAFT_1G_AT_0, (uintptr_t)greeting + 9),
			 strlen(greeting) - 9, 0), (int64_t)strlen(greeting) - 9);
	expect("hc: vcpu id", hypercall(HC_VCPU_ID, rnd(), rnd(), rnd()), 0);
	exits = hypercall(HC_VCPU_EXITS, 0, 0, 0);
	report(exits > 0 && hypercall(HC_VCPU_EXITS, 0, 0, 0) > exits,
	       "hc: the exit count grows (%lld)", (long long)exits);
	return report_summary();
}


/*
 * RDPMC over the whole ECX space, sampled: only ECX 0-3 and 0x40000000-2 may read
 * (SDM Vol. 2B RDPMC); every other index must #GP. A sweep counts those that misbehave.
 */
static bool rdpmc_valid(uint32_t ecx)
{
	return ecx < VT_GP || (ecx >= RDPMC_FIXED && ecx < RDPMC_FIXED + VT_FIXED);
}

struct rdpmc_sweep {
	unsigned tried, read, wrong;
	uint32_t first_wrong;
};

static void rdpmc_try(struct rdpmc_sweep *s, uint32_t ecx, bool allowed)
{
	uint64_t val;
	bool read = vt_rdpmc(ecx, &val);

	s->tried++;
	s->read += read;
	if (read != (allowed && rdpmc_valid(ecx)) && !s->wrong++)
		s->first_wrong = ecx;
}

static void rdpmc_sweep(struct rdpmc_sweep *s, bool allowed)
{
	uint64_t seed = rng_state;

	memset(s, 0, sizeof(*s));
	for (uint32_t i = 0; i < 64; i++) {
		rdpmc_try(s, i, allowed);
		rdpmc_try(s, RDPMC_FIXED + i, allowed);
	}
	for (unsigned bit = 0; bit < 32; bit++)
		rdpmc_try(s, 1u << bit, allowed);
	for (unsigned i = 0; i < 300; i++)
		rdpmc_try(s, (uint32_t)rnd(), allowed);
	rng_state = seed;	/* the same indexes at every ring */
}

static void rdpmc_report(const struct rdpmc_sweep *s, const char *where)
{
	report(!s->wrong, "ring3: RDPMC %s: %u indexes, %u read, %u wrong (first %#x)", where,
	       s->tried, s->read, s->wrong, s->wrong ? s->first_wrong : 0);
}

static struct rdpmc_sweep user_sweep;
static unsigned user_hc_wrong, user_hc_tried;

/* Ring 3 may make no hypercall at all, whatever its number and arguments. */
static int user_hypercalls(void *arg)
{
	static const char text[] = "hostile: ring3: printed from ring 3 by hypercall\n";
	const uint64_t numbers[] = {
		HC_CONSOLE_WRITE, HC_YIELD, HC_VCPU_ID, HC_DOMAIN_EXIT, HC_VCPU_EXITS,
		HC_BASE_COUNT, HC_PMU_SETUP, HC_PMU_RESUME, HC_PMU_ISUSPEND, HC_PMU_IRESUME,
		HC_PMU_SET_VECTOR, HC_PMU_READ, HC_PMU_IACK, UINT64_MAX,
	};
	/* A valid buffer, and the APIC page, which the kernel maps for CPL 0 only. */
	const uint64_t buffers[] = { (uintptr_t)text, APIC_DEFAULT_BASE };

	(void)arg;
	for (size_t i = 0; i < ARRAY_SIZE(numbers); i++)
		for (size_t b = 0; b < ARRAY_SIZE(buffers); b++, user_hc_tried++)
			user_hc_wrong += hypercall(numbers[i], buffers[b], sizeof(text) - 1, 0) !=
					 -PV_EPERM;
	return 0;
}

static int user_rdpmc(void *arg)
{
	rdpmc_sweep(&user_sweep, arg != NULL);
	return 0;
}

static void set_pce(bool on)
{
	uint64_t cr4;

	__asm__ volatile("mov %%cr4, %0" : "=r"(cr4));
	cr4 = on ? cr4 | CR4_PCE : cr4 & ~CR4_PCE;
	__asm__ volatile("mov %0, %%cr4" : : "r"(cr4) : "memory");
}

static int run_user(int (*fn)(void *), void *arg)
{
	return kthread_join(kthread_create(fn, arg, KTHREAD_USER, 0));
}

/* case=ring3: hypercalls from CPL 3, and RDPMC of every index at CPL 0 and CPL 3. */
int case_ring3(void)
{
	char *kargv[] = { "quantum=4294967295" };
	struct rdpmc_sweep s;

	vt_gp_install();
	kernel_init(1, kargv);
	run_user(user_hypercalls, NULL);
	report(!user_hc_wrong, "ring3: %u hypercalls from CPL 3: %u not -EPERM", user_hc_tried,
	       user_hc_wrong);
	rdpmc_sweep(&s, true);
	rdpmc_report(&s, "at CPL 0");
	set_pce(true);
	run_user(user_rdpmc, &s);
	rdpmc_report(&user_sweep, "at CPL 3 with CR4.PCE set");
	set_pce(false);
	run_user(user_rdpmc, NULL);
	rdpmc_report(&user_sweep, "at CPL 3 with CR4.PCE clear");
	return report_summary();
}
