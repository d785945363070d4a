/* Leaving the guest: flush, drain the console, then every exit port the platforms know. */
#include <stdio.h>

#include "guest-stub/rt/internal.h"
#include "guest-stub/rt/rt.h"

#define ISA_DEBUG_EXIT_PORT	0xF4
#define BOCHS_SHUTDOWN_PORT	0x8900

void rt_poweroff(int code)
{
	static const char shutdown[] = "Shutdown";

	rt_console_drain();
	/* A 32-bit write: the hypervisor and QEMU's iosize=4 device take the whole code. */
	rt_outl(ISA_DEBUG_EXIT_PORT, (uint32_t)code);
	for (size_t i = 0; i < sizeof(shutdown) - 1; i++)
		rt_outb(BOCHS_SHUTDOWN_PORT, (uint8_t)shutdown[i]);
	for (;;)
		__asm__ volatile("cli; hlt");
}

void rt_exit(int code)
{
	fflush(stdout);
	fflush(stderr);
	rt_poweroff(code);
}

/* newlib's exit() ends here after running atexit handlers and closing stdio. */
void _exit(int code)
{
	rt_exit(code);
}
