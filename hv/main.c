/* hv_main(): VMX on, the domains built from the modules, then every PCPU schedules until all domains end. */
#include "lib/exit.h"
#include "lib/frame.h"
#include "lib/multiboot.h"
#include "lib/printk.h"
#include "hv/domain.h"
#include "hv/hv.h"
#include "hv/pcpu.h"
#include "hv/sched.h"
#include "hv/smp.h"
#include "hv/vmx.h"
#include "pmu/pmu.h"

void hv_main(const struct mb_boot_info *info, void (*cpu_init)(struct pcpu *p))
{
	uint64_t total;

	sched_calibrate_tsc();
	pr_info("perfvisor: TSC runs at %lu kHz; slice %lu us\n", tsc_khz, sched_opts.slice_us);
	if (!vmx_init_global() || !vmx_enable_cpu())
		hv_exit(EXIT_NO_VTX);
	pmu_cpu_init();
	smp_start_aps(sched_opts.max_cpus, cpu_init);
	if (!info->mod_count) {
		printk("perfvisor: no domains to run (give each guest as a multiboot module)\n");
		hv_exit(EXIT_OK);
	}
	if (info->mod_count > MAX_DOMAINS)
		printk("perfvisor: %u modules, but at most %u domains: the rest are ignored\n",
		       info->mod_count, MAX_DOMAINS);
	frame_stats(&total, &dom_frames_free_at_start);
	for (unsigned i = 0; i < info->mod_count && i < MAX_DOMAINS; i++)
		dom_create(i, (const void *)info->mods[i].start,
			   info->mods[i].end - info->mods[i].start, info->mods[i].string);
	smp_release_aps();
	sched_run();
}
