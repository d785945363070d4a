/* msrcheck: platform MSRs and CPUID as the SDM gives them, ACPI tables, KVM's numbers reaching nothing. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guest-stub/lib/report.h"
#include "guest-stub/lib/vpmu_test.h"
#include "guest-stub/rt/rt.h"
#include "include/perfvisor/hypercall.h"
#include "include/x86/msr.h"

/* SDM Vol. 4 table 2-2. */

/* Linux include/uapi/linux/kvm_para.h: KVM's hypercalls are 1-12, -KVM_ENOSYS is -1000. */
#define KVM_HC_LAST		12
#define KVM_ENOSYS		1000

/*
 * A bound, not a value: the ticks between two RDTSCs around one WRMSR exit. Under Bochs the
 * TSC moves one tick per guest instruction and the exit costs some thousands; real hardware
 * needs a few thousand cycles. A million is far above both and far below the 2^40 step.
 */
#define TSC_SLACK		1000000ull

static bool bit(uint32_t reg, unsigned b)
{
	return reg >> b & 1;
}

static int64_t vmcall(uint64_t nr)
{
	int64_t ret;

	__asm__ volatile("vmcall" : "=a"(ret) : "a"(nr) : "memory");
	return ret;
}

static uint32_t rdtscp_aux(void)
{
	uint32_t lo, hi, aux;

	__asm__ volatile("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	return aux;
}

static void misc_enable(void)
{
	uint64_t v = 0, back = 0;
	bool read = vt_rdmsr(MSR_IA32_MISC_ENABLE, &v);
	struct rt_cpuid_regs r;

	report(read && vt_wrmsr(MSR_IA32_MISC_ENABLE, v),
	       "MISC_ENABLE: a write of the value just read (%#llx) does not #GP",
	       (unsigned long long)v);
	/* Bit 22 is writable and limits CPUID's basic leaves to 2 while set. */
	report(vt_wrmsr(MSR_IA32_MISC_ENABLE, v | MISC_ENABLE_LIMIT_CPUID) &&
	       vt_rdmsr(MSR_IA32_MISC_ENABLE, &back) && (back & MISC_ENABLE_LIMIT_CPUID),
	       "MISC_ENABLE keeps its writable bit 22");
	r = rt_cpuid(0, 0);
	report(r.eax <= 2, "MISC_ENABLE bit 22 limits CPUID.0:EAX to 2 (%u)", r.eax);
	report(vt_wrmsr(MSR_IA32_MISC_ENABLE, v) && vt_rdmsr(MSR_IA32_MISC_ENABLE, &back) &&
	       back == v && rt_cpuid(0, 0).eax > 2,
	       "MISC_ENABLE back to what it was, and CPUID with it");
}

static void mca(void)
{
	uint64_t v = 1;

	report(bit(rt_cpuid(1, 0).edx, 14), "CPUID.1:EDX.MCA is set");
	report(vt_rdmsr(MSR_IA32_MCG_CAP, &v) && v == 0, "MCG_CAP reads 0: no banks");
	report(vt_wrmsr(MSR_IA32_MCG_STATUS, 0) && vt_rdmsr(MSR_IA32_MCG_STATUS, &v) && v == 0,
	       "MCG_STATUS takes 0");
	report(!vt_rdmsr(MSR_IA32_MCG_CTL, &v) && !vt_rdmsr(MSR_IA32_MC0_CTL, &v),
	       "MCG_CTL and MC0_CTL #GP (no MCG_CTL_P, no banks)");
}

static void tsc_adjust(void)
{
	uint64_t adj = 1, t0, t1, now;

	report(bit(rt_cpuid(7, 0).ebx, 1), "CPUID.7:EBX.TSC_ADJUST is set");
	report(vt_rdmsr(MSR_IA32_TSC_ADJUST, &adj) && adj == 0, "TSC_ADJUST reads 0 at start");
	/* SDM Vol. 3B 17.17.3: adding to TSC_ADJUST adds as much to the TSC. */
	t0 = rt_rdtsc();
	vt_wrmsr(MSR_IA32_TSC_ADJUST, 1ull << 40);
	t1 = rt_rdtsc();
	report(t1 - t0 >= (1ull << 40) && t1 - t0 < (1ull << 40) + TSC_SLACK,
	       "a TSC_ADJUST write of 2^40 moves the TSC by 2^40 (%llu)",
	       (unsigned long long)(t1 - t0));
	/* ... and a write to the TSC moves TSC_ADJUST by what it moved the TSC. */
	now = rt_rdtsc();
	vt_wrmsr(MSR_IA32_TSC, now + 5000000);
	vt_rdmsr(MSR_IA32_TSC_ADJUST, &adj);
	report(adj - (1ull << 40) >= 5000000 - TSC_SLACK && adj - (1ull << 40) <= 5000000,
	       "a TSC write moves TSC_ADJUST with it (%llu)",
	       (unsigned long long)(adj - (1ull << 40)));
	vt_wrmsr(MSR_IA32_TSC_ADJUST, 0);
}

/* TSC_AUX is this VCPU's: another domain on the same PCPU writes its own meanwhile. */
static void tsc_aux(uint32_t aux, uint64_t spin)
{
	bool rdtscp = bit(rt_cpuid(0x80000001, 0).edx, 27);
	uint64_t v = 0, end, seen = 0, wrong = 0;

	if (!rdtscp) {
		report(!vt_rdmsr(MSR_IA32_TSC_AUX, &v), "no RDTSCP: TSC_AUX #GPs");
		return;
	}
	report(vt_wrmsr(MSR_IA32_TSC_AUX, aux) && vt_rdmsr(MSR_IA32_TSC_AUX, &v) && v == aux,
	       "TSC_AUX takes %#x", aux);
	report(!vt_wrmsr(MSR_IA32_TSC_AUX, 1ull << 32), "TSC_AUX bits 63:32 are reserved (#GP)");
	for (end = rt_rdtsc() + spin; rt_rdtsc() < end; seen++)
		wrong += rdtscp_aux() != aux;
	report(!wrong, "RDTSCP gives this VCPU's TSC_AUX %llu times over %llu ticks (%llu not)",
	       (unsigned long long)seen, (unsigned long long)spin, (unsigned long long)wrong);
}

/* CPUID and the MSRs agree: what is not offered has no MSR. */
static void not_offered(void)
{
	struct rt_cpuid_regs r1 = rt_cpuid(1, 0), r7 = rt_cpuid(7, 0);
	uint64_t v;

	report(!bit(r1.edx, 21) && !vt_rdmsr(MSR_IA32_DS_AREA, &v),
	       "CPUID.1:EDX.DS clear and DS_AREA #GPs");
	report(!bit(r7.edx, 26) && !vt_rdmsr(MSR_IA32_SPEC_CTRL, &v) &&
	       !vt_wrmsr(MSR_IA32_SPEC_CTRL, 0),
	       "CPUID.7:EDX.IBRS_IBPB clear and SPEC_CTRL #GPs");
	report(!bit(r7.edx, 29) && !vt_rdmsr(MSR_IA32_ARCH_CAPABILITIES, &v),
	       "CPUID.7:EDX.ARCH_CAPABILITIES clear and its MSR #GPs");
	report(!bit(r1.ecx, 5), "CPUID.1:ECX: no VMX");
}

static uint8_t sum(const volatile uint8_t *p, uint32_t n)
{
	uint8_t s = 0;

	while (n--)
		s += *p++;
	return s;
}

/* ACPI 6.5 5.2.5.1: the RSDP on a 16-byte boundary in 0xE0000-0xFFFFF, then the MADT. */
static void acpi(void)
{
	const volatile uint8_t *rsdp = NULL, *xsdt, *t;
	uint32_t lapics = 0, n;

	for (uintptr_t pa = 0xE0000; pa < 0x100000 && !rsdp; pa += 16)
		if (!memcmp((const void *)pa, "RSD PTR ", 8))
			rsdp = (const volatile uint8_t *)pa;
	report(rsdp && !sum(rsdp, 20) && !sum(rsdp, 36), "ACPI: RSDP found, checksums right");
	if (!rsdp)
		return;
	xsdt = (const volatile uint8_t *)(uintptr_t)*(const volatile uint64_t *)(rsdp + 24);
	n = (*(const volatile uint32_t *)(xsdt + 4) - 36) / 8;
	for (uint32_t i = 0; i < n; i++) {
		t = (const volatile uint8_t *)(uintptr_t)*(const volatile uint64_t *)(xsdt + 36 + 8 * i);
		if (memcmp((const void *)t, "APIC", 4) || sum(t, *(const volatile uint32_t *)(t + 4)))
			continue;
		for (const volatile uint8_t *e = t + 44; e < t + *(const volatile uint32_t *)(t + 4);
		     e += e[1])
			lapics += e[0] == 0 && e[1] == 8;
	}
	report(lapics == (rt_cpuid(1, 0).ebx >> 16 & 0xFF),
	       "ACPI: the MADT lists as many local APICs as CPUID.1:EBX has processors (%u)",
	       lapics);
}

/* A guest written for KVM reaches nothing of perfvisor's. */
static void kvm_numbers(void)
{
	struct rt_cpuid_regs r = rt_cpuid(0x40000001, 0);
	unsigned wrong = 0;

	for (uint64_t nr = 0; nr <= KVM_HC_LAST; nr++)
		wrong += vmcall(nr) != -KVM_ENOSYS;
	report(!wrong, "VMCALL 0-%u (KVM's hypercalls) return -%u (%u do not)", KVM_HC_LAST,
	       KVM_ENOSYS, wrong);
	report(!(r.eax | r.ebx | r.ecx | r.edx), "CPUID 0x40000001 (KVM's features) is all zero");
	report(vmcall(HC_VCPU_ID) == 0, "perfvisor's own VCPU_ID hypercall still answers");
}

int main(int argc, char **argv)
{
	uint32_t aux = 0x1234;
	uint64_t spin = 0;

	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "aux=", 4))
			aux = (uint32_t)strtoul(argv[i] + 4, NULL, 0);
		else if (!strncmp(argv[i], "spin=", 5))
			spin = strtoull(argv[i] + 5, NULL, 0);
	}
	vt_gp_install();
	misc_enable();
	mca();
	tsc_adjust();
	tsc_aux(aux, spin);
	not_offered();
	kvm_numbers();
	acpi();
	return report_summary();
}
