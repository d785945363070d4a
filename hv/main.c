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

/*
 * Modules past MB_MODS_MAX are refused one by one while the others run; past the slots, as one.
 * Their domain slots follow the `first` domains built.
 */
static void refuse_extra_modules(const struct mb_boot_info *info, unsigned first)
{
	uint64_t end = (uint64_t)info->mod_count + info->mods_refused, i = info->mod_count;

	for (; i < end && first < MAX_DOMAINS; i++)
		dom_refuse(first++, "module %lu is past the limit of %u modules (modules 0 to %u)",
			   i, MB_MODS_MAX, info->mod_count - 1);
	if (i < end)
		printk("perfvisor: modules %lu to %lu not started either: past the limit of %u "
		       "modules\n", i, end - 1, MB_MODS_MAX);
}

void hv_main(const struct mb_boot_info *info, void (*cpu_init)(struct pcpu *p))
{
	uint64_t total;
	unsigned ndom = 0;

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
	if (!dom_table_init()) {
		printk("perfvisor: not enough memory for the table of %u domains\n", MAX_DOMAINS);
		hv_exit(EXIT_BAD_BOOT);
	}
	frame_stats(&total, &dom_frames_free_at_start);
	/* Data modules first, so that any domain finds the files it names. */
	for (unsigned i = 0; i < info->mod_count; i++) {
		const struct mb_module *m = &info->mods[i];
		char name[DOM_NAME_MAX + 1];
		int kind = dom_config_data(m->string, name);

		if (kind > 0) {
			dom_add_data(name, (const void *)m->start, m->end - m->start);
			printk("perfvisor: module %u: data '%s', %lu bytes\n", i, name,
			       m->end - m->start);
		} else if (kind < 0) {
			printk("perfvisor: module %u: not used: a data module's string is data=NAME "
			       "alone (NAME: 1..15 characters of a-z 0-9 _ -)\n", i);
		}
	}
	for (unsigned i = 0; i < info->mod_count; i++) {
		char name[DOM_NAME_MAX + 1];

		if (!dom_config_data(info->mods[i].string, name))
			dom_create(ndom++, (const void *)info->mods[i].start,
				   info->mods[i].end - info->mods[i].start, info->mods[i].string);
	}
	refuse_extra_modules(info, ndom);
	smp_release_aps();
	sched_run();
}
