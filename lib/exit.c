/* hv_exit(): print "perfvisor: EXIT <code>", then leave QEMU (isa-debug-exit) or Bochs (shutdown port), else halt. */
#include "lib/console.h"
#include "lib/cpu.h"
#include "lib/exit.h"
#include "lib/printk.h"

void hv_exit(int code)
{
	static const char shutdown[] = "Shutdown";

	printk("perfvisor: EXIT %d\n", code);
	con_drain();
	/* QEMU isa-debug-exit at 0xF4: the process exits with (code << 1) | 1. */
	outl(0xF4, (uint32_t)code);
	/* Bochs: the string "Shutdown" written to port 0x8900 powers off. */
	for (const char *p = shutdown; *p; p++)
		outb(0x8900, (uint8_t)*p);
	/* Bare metal: nothing listens on those ports; stop here. */
	cpu_halt_forever();
}
