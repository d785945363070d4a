/* Isolation test guest: a hostile role changes CR8, CR0.CD/NW, CR4 and flushes caches; a watching role checks none of it reaches it. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"
#include "guest-stub/tests/soft_guest.h"
#include "include/perfvisor/pmu.h"
#include "include/x86/cr.h"

/*
 * A VM exit and entry run far more than this many host instructions (hv/entry.S alone saves and
 * restores 15 registers), and Bochs with one CPU ticks the TSC once per instruction; a WBINVD
 * that does not exit costs about one tick.
 */
#define EXIT_MIN_TICKS	100
#define FLUSHES		64

static volatile unsigned gp_faults __attribute__((used));

/* The watcher's paravirtual page, only to see its own deschedules (tsc.start_vcpu moves). */
static uint8_t area[PV_PMU_AREA_STRIDE] __attribute__((aligned(4096)));
#define PAGE	((volatile struct pv_vcpu_area *)area)

void iso_cr4_write_raw(uint64_t val);
void iso_gp_entry(void);

/*
 * MOV to CR4 (3 bytes) at a label: the #GP handler skips it there and counts the fault; any
 * other #GP goes on to the runtime's handler (rt_trap_stubs[13]), which reports it.
 */
__asm__(".text\n"
	"iso_cr4_write_raw:\n"
	"iso_cr4_at:\n\t"
	"mov %rdi, %cr4\n\t"
	"ret\n"
	"iso_gp_entry:\n\t"
	"push %rax\n\t"
	"mov 16(%rsp), %rax\n\t"
	"cmp $iso_cr4_at, %rax\n\t"
	"je 1f\n\t"
	"pop %rax\n\t"
	"jmp *rt_trap_stubs+8*13(%rip)\n"
	"1:\taddq $3, 16(%rsp)\n\t"
	"incl gp_faults(%rip)\n\t"
	"pop %rax\n\t"
	"add $8, %rsp\n\t"
	"iretq\n");

static bool cr4_write(uint64_t val)
{
	unsigned before = gp_faults;

	iso_cr4_write_raw(val);
	return gp_faults == before;
}

/* MOV from CR0, CR4 or CR8 (SDM Vol. 2A MOV-Control Registers). */
static uint64_t read_cr(unsigned n)
{
	uint64_t v;

	if (n == 0)
		__asm__ volatile("mov %%cr0, %0" : "=r"(v));
	else if (n == 4)
		__asm__ volatile("mov %%cr4, %0" : "=r"(v));
	else
		__asm__ volatile("mov %%cr8, %0" : "=r"(v));
	return v;
}

static void write_cr0(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr0" : : "r"(v) : "memory");
}

static void write_cr8(uint64_t v)
{
	__asm__ volatile("mov %0, %%cr8" : : "r"(v) : "memory");
}

/* The hostile neighbour: every register it can reach set as badly as it can, over and over. */
static void hostile(unsigned rounds, bool timed)
{
	uint64_t cr4 = read_cr(4), t0, t1;
	unsigned cr8_kept = 0, cd_kept = 0;

	report(!cr4_write(cr4 | CR4_PKE) && read_cr(4) == cr4,
	       "hostile: CR4.PKE cannot be set (#GP; PKRU stays the host's)");
	report(!cr4_write(cr4 | CR4_OSXSAVE) && read_cr(4) == cr4,
	       "hostile: CR4.OSXSAVE cannot be set (#GP; XCR0 stays the host's)");
	write_cr0(read_cr(0) | CR0_CD | CR0_NW);
	report((read_cr(0) & (CR0_CD | CR0_NW)) == (CR0_CD | CR0_NW),
	       "hostile: CR0.CD/NW read back as written (its shadow)");
	if (timed) {
		t0 = rt_rdtsc();
		for (unsigned i = 0; i < FLUSHES; i++)
			__asm__ volatile("wbinvd" : : : "memory");
		t1 = rt_rdtsc();
		printf("iso_regs: %u WBINVD took %llu ticks\n", FLUSHES,
		       (unsigned long long)(t1 - t0));
		report(t1 - t0 >= (uint64_t)FLUSHES * EXIT_MIN_TICKS,
		       "hostile: WBINVD exits to the hypervisor");
		t0 = rt_rdtsc();
		for (unsigned i = 0; i < FLUSHES; i++)
			__asm__ volatile("invd" : : : "memory");
		t1 = rt_rdtsc();
		report(t1 - t0 >= (uint64_t)FLUSHES * EXIT_MIN_TICKS,
		       "hostile: INVD exits to the hypervisor");
	}
	for (unsigned r = 0; r < rounds; r++) {
		write_cr8(0xF);
		for (volatile unsigned spin = 0; spin < 200; spin++)
			;
		cr8_kept += read_cr(8) == 0xF;
		cd_kept += (read_cr(0) & CR0_CD) != 0;
		__asm__ volatile("wbinvd" : : : "memory");
	}
	report(cr8_kept == rounds, "hostile: its own CR8 (0xF) survives every switch (%u/%u)",
	       cr8_kept, rounds);
	report(cd_kept == rounds, "hostile: its own CR0.CD survives every switch (%u/%u)",
	       cd_kept, rounds);
	write_cr8(0);
	write_cr0(read_cr(0) & ~(CR0_CD | CR0_NW));
}

/*
 * Instructions retired over a window of known length, read by RDPMC: exactly VT_WINDOW. The
 * window spanned a deschedule when start_vcpu (the guest TSC at the VCPU's last switch-in, in
 * its PV page) moved between zeroing the counter and the RDPMC: the VCPU was switched out and
 * back in (every slice end does that; a neighbour ran between while one was runnable).
 */
static bool rdpmc_window(bool *switched)
{
	uint64_t start, count;

	rt_wrmsr(MSR_GLOBAL_CTRL, 0);
	rt_wrmsr(MSR_FIXED_CTR0, 0);
	start = PAGE->tsc.start_vcpu;
	vt_window(MSR_GLOBAL_CTRL, GLOBAL_FIXED(0));
	count = rt_rdpmc(RDPMC_FIXED);
	*switched = PAGE->tsc.start_vcpu != start;
	return count == VT_WINDOW;
}

/*
 * The watcher: its CR8 and CR0 are its own, and its exact counts stay exact, whoever ran before.
 * Its PV page is set up without a control (the counters stay trapped) only to see its own
 * deschedules; one RDPMC window per 64 rounds runs while the neighbours still run. spans: one
 * window that spanned a deschedule and stayed exact is required.
 */
static void watch(unsigned rounds, bool spans)
{
	unsigned cr8_zero = 0, cd_clear = 0, exact = 0, switched = 0, windows = 0;
	bool sw, ok;

	report(rt_vmcall(HC_PMU_SETUP, (uintptr_t)area, 1) == 0,
	       "watch: SETUP of its PV page (to see its deschedules)");
	rt_wrmsr(MSR_FIXED_CTR_CTRL, FIXED_OS | FIXED_USR);
	for (unsigned r = 0; r < rounds || !windows; r++) {
		if (r < rounds) {
			cr8_zero += read_cr(8) == 0;
			cd_clear += !(read_cr(0) & (CR0_CD | CR0_NW));
			for (volatile unsigned spin = 0; spin < 200; spin++)
				;
		}
		if (r % 64 == 63 || r >= rounds) {
			ok = rdpmc_window(&sw);
			windows++;
			exact += ok;
			switched += ok && sw;
		}
	}
	report(cr8_zero == rounds, "watch: CR8 reads its own 0 across the neighbour's slices "
	       "(%u/%u)", cr8_zero, rounds);
	report(cd_clear == rounds, "watch: CR0.CD/NW read clear across the neighbour's slices "
	       "(%u/%u)", cd_clear, rounds);
	report(exact == windows, "watch: instructions over %u windows exact (%u/%u)", windows,
	       exact, windows);
	/* Without a deschedule inside a window RDPMC showed nothing: the rows make many. */
	if (spans)
		report(switched > 0, "watch: %u RDPMC windows spanned a deschedule and stayed "
		       "exact", switched);
}

int main(int argc, char **argv)
{
	const char *role = "watch";
	unsigned rounds = 2000;
	bool timed = false, spans = false;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "role=", 5))
			role = argv[i] + 5;
		else if (!strncmp(argv[i], "rounds=", 7))
			rounds = (unsigned)strtoul(argv[i] + 7, NULL, 0);
		else if (!strcmp(argv[i], "timed"))
			timed = true;
		else if (!strcmp(argv[i], "spans"))
			spans = true;
	}
	rt_idt_set_gate(13, iso_gp_entry, 0);
	if (!strcmp(role, "hostile"))
		hostile(rounds, timed);
	else
		watch(rounds, spans);
	return report_summary();
}
