/* Hostile sweeps of the CPUID leaf and MSR index spaces: every answer consistent, no crash. */
#include "guest-stub/tests/hostile/hostile.h"

/*
 * case=cpuid: the whole leaf space, sparse, and dense where leaves exist; every answer must be
 * the same twice, and perfvisor's own leaves must say what the README says.
 */
static unsigned cpuid_checked, cpuid_unstable, cpuid_zero;

static struct rt_cpuid_regs cpuid_twice(uint32_t leaf, uint32_t sub)
{
	struct rt_cpuid_regs a = rt_cpuid(leaf, sub), b = rt_cpuid(leaf, sub);

	cpuid_checked++;
	cpuid_unstable += memcmp(&a, &b, sizeof(a)) != 0;
	cpuid_zero += !(a.eax | a.ebx | a.ecx | a.edx);
	return a;
}

int case_cpuid(void)
{
	static const uint32_t dense[] = { 0, 0x40000000, 0x80000000 };
	struct rt_cpuid_regs r;
	unsigned hv_nonzero = 0;
	char sig[17];	/* a 12-byte signature or a 16-byte name, NUL-terminated */

	for (size_t d = 0; d < ARRAY_SIZE(dense); d++)
		for (uint32_t leaf = dense[d]; leaf < dense[d] + 0x100; leaf++)
			for (uint32_t sub = 0; sub < 4; sub++) {
				r = cpuid_twice(leaf, sub);
				if (leaf > HV_CPUID_SIGNATURE && leaf < 0x40000100 &&
				    leaf != HV_CPUID_NAME)
					hv_nonzero += !!(r.eax | r.ebx | r.ecx | r.edx);
			}
	for (uint32_t i = 0; i < 4096; i++)
		cpuid_twice(i << 20 | (uint32_t)(rnd() & 0xFFFFF), (uint32_t)rnd());
	printf("hostile: cpuid: %u leaves and subleaves, %u all zero\n", cpuid_checked, cpuid_zero);
	report(!cpuid_unstable, "cpuid: every answer the same twice (%u differ)", cpuid_unstable);
	r = rt_cpuid(1, 0);
	report(r.ecx >> 31 & 1, "cpuid: leaf 1 has the hypervisor bit");
	report(!(r.ecx >> 5 & 1), "cpuid: leaf 1 hides VMX");
	r = rt_cpuid(HV_CPUID_SIGNATURE, 0);
	memcpy(sig, &r.ebx, 4);
	memcpy(sig + 4, &r.ecx, 4);
	memcpy(sig + 8, &r.edx, 4);
	sig[12] = '\0';
	report(!strcmp(sig, "perfvisor") && r.eax >= HV_CPUID_NAME,
	       "cpuid: leaf 0x40000000 says \"%s\", max %#x", sig, r.eax);
	r = rt_cpuid(HV_CPUID_NAME, 0);
	memcpy(sig, &r, sizeof(r));
	sig[sizeof(r)] = '\0';
	report(!strcmp(sig, "cpuid"), "cpuid: leaf %#x names the domain \"%s\"", HV_CPUID_NAME,
	       sig);
	/* Other hypervisors' leaves (KVM's features at 0x40000001) must not look offered. */
	report(!hv_nonzero, "cpuid: the other leaves 0x40000001-0x400000ff say nothing (%u do)",
	       hv_nonzero);
	return report_summary();
}

/*
 * case=msr: RDMSR, a garbage WRMSR and a write-back of what was read, over 0-0x1fff,
 * 0xc0000000-0xc0001fff, the synthetic range 0x40000000-0x400000ff and random indexes. Every
 * #GP is survived and counted; MSRs that read but refuse their own value are listed.
 */
#define MSR_SWEEP_RANDOM	2000
#define MSR_LIST_MAX		64

struct msr_sweep {
	unsigned tried, read, garbage_taken, kept;
	uint32_t readable[MSR_LIST_MAX], refused[MSR_LIST_MAX];
	unsigned nreadable, nrefused;
};

static void msr_try(struct msr_sweep *s, uint32_t msr)
{
	uint64_t val;
	bool read = vt_rdmsr(msr, &val);

	s->tried++;
	/* Garbage: all ones (reserved bits, beyond any width), or a pattern that fits 32 bits. */
	s->garbage_taken += vt_wrmsr(msr, msr & 1 ? UINT64_MAX : 0x5A5A5A5Aull);
	if (!read)
		return;
	s->read++;
	if (s->nreadable < MSR_LIST_MAX)
		s->readable[s->nreadable++] = msr;
	if (vt_wrmsr(msr, val))
		s->kept++;
	else if (s->nrefused < MSR_LIST_MAX)
		s->refused[s->nrefused++] = msr;
}

static void print_msrs(const char *what, const uint32_t *list, unsigned n)
{
	char line[512];
	size_t used = 0;

	for (unsigned i = 0; i < n && used < sizeof(line) - 24; i++) {
		unsigned j = i;

		while (j + 1 < n && list[j + 1] == list[j] + 1)
			j++;
		used += (size_t)snprintf(line + used, sizeof(line) - used, j > i ? " %#x-%#x" :
					 " %#x", list[i], list[j]);
		i = j;
	}
	line[used] = '\0';
	printf("hostile: msr: %s:%s\n", what, line);
}

int case_msr(void)
{
	static struct msr_sweep s;
	uint64_t tsc = rt_rdtsc();

	vt_gp_install();
	for (uint32_t msr = 0; msr < 0x2000; msr++)
		msr_try(&s, msr);
	for (uint32_t msr = 0xC0000000; msr < 0xC0002000; msr++)
		msr_try(&s, msr);
	for (uint32_t msr = 0x40000000; msr < 0x40000100; msr++)
		msr_try(&s, msr);
	for (unsigned i = 0; i < MSR_SWEEP_RANDOM; i++)
		msr_try(&s, (uint32_t)rnd());
	/* The garbage went into IA32_TSC too: put the clock back near where it was. */
	rt_wrmsr(MSR_IA32_TSC, tsc);
	printf("hostile: msr: %u MSRs: %u read (%u faulted), %u garbage writes taken "
	       "(%u faulted), %u took their value back\n", s.tried, s.read, s.tried - s.read,
	       s.garbage_taken, s.tried - s.garbage_taken, s.kept);
	print_msrs("readable", s.readable, s.nreadable);
	print_msrs("read-only", s.refused, s.nrefused);
	report(s.read < s.tried / 10, "msr: most of the space #GPs (%u of %u read)", s.read,
	       s.tried);
	return report_summary();
}
