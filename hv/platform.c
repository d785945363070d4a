/* Prints what this machine offers perfvisor: CPU identity, VT-x features, and a PMU found by behaviour. */
#include <stdbool.h>

#include "lib/cpu.h"
#include "lib/printk.h"
#include "lib/string.h"
#include "hv/platform.h"
#include "hv/vmx_caps.h"
#include "pmu/pmu.h"

static const char *yes_no(bool b)
{
	return b ? "yes" : "no";
}

static void report_cpu(void)
{
	struct cpuid_regs r = cpuid(0, 0);
	char vendor[13];
	unsigned family, model, stepping;

	memcpy(vendor, &r.ebx, 4);
	memcpy(vendor + 4, &r.edx, 4);
	memcpy(vendor + 8, &r.ecx, 4);
	vendor[12] = '\0';
	r = cpuid(1, 0);
	/* SDM Vol. 2A CPUID: extended family/model fold in for families 6 and 15. */
	family = (r.eax >> 8) & 0xF;
	model = (r.eax >> 4) & 0xF;
	stepping = r.eax & 0xF;
	if (family == 0xF)
		family += (r.eax >> 20) & 0xFF;
	if (family == 0x6 || family >= 0xF)
		model |= ((r.eax >> 16) & 0xF) << 4;
	printk("platform: cpu %s family 0x%x model 0x%x stepping %u\n", vendor, family, model,
	       stepping);
}

static void report_pmu(void)
{
	struct pmu_hw_info *p = &pmu_hw;

	pmu_probe();
	if (p->works)
		printk("platform: pmu architectural v%u: %u general counters x %u bits, "
		       "%u fixed x %u bits (probe counted %lu)\n",
		       p->version, p->num_gp, p->gp_width, p->num_fixed, p->fixed_width,
		       p->probe_count);
	else if (p->version)
		printk("platform: pmu none: %s (version %u, %u counters)\n", p->why_not,
		       p->version, p->num_gp);
	else
		printk("platform: pmu none: %s\n", p->why_not);
}

bool platform_report(void)
{
	struct vmx_caps *c = &vmx_caps;
	bool ok;

	report_cpu();
	ok = vmx_caps_read();
	if (c->present && c->disabled_by_firmware)
		printk("platform: vmx present but disabled by firmware (IA32_FEATURE_CONTROL)\n");
	else if (c->present)
		printk("platform: vmx yes: ept %s, unrestricted guest %s, vpid %s, "
		       "preemption timer %s (TSC >> %u), monitor trap flag %s\n",
		       yes_no(c->ept), yes_no(c->unrestricted), yes_no(c->vpid),
		       yes_no(c->preemption_timer), c->preemption_rate, yes_no(c->mtf));
	else
		printk("platform: vmx no\n");
	report_pmu();
	return ok;
}
