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

/* Every module the parser took has a domain slot; the slots left name refused modules. */
_Static_assert(MB_MODS_MAX <= MAX_DOMAINS, "each module fits a domain slot");

/* Modules past MB_MODS_MAX are refused one by one while the others run; past the slots, as one. */
static void refuse_extra_modules(const struct mb_boot_info *info)
{
	uint64_t end = (uint64_t)info->mod_count + info->mods_refused;

	for (unsigned i = info->mod_count; i < end && i < MAX_DOMAINS; i++)
		dom_refuse(i, "module %u is past the limit of %u modules (modules 0 to %u)",
			   i, MB_MODS_MAX, info->mod_count - 1);
	if (end > MAX_DOMAINS)
		printk("perfvisor: modules %u to %lu not started either: past the limit of %u "
		       "modules\n", MAX_DOMAINS, end - 1, MB_MODS_MAX);
}

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
	frame_stats(&total, &dom_frames_free_at_start);
	for (unsigned i = 0; i < info->mod_count; i++)
		dom_create(i, (const void *)info->mods[i].start,
			   info->mods[i].end - info->mods[i].start, info->mods[i].string);
	refuse_extra_modules(info);
	smp_release_aps();
	sched_run();
}
