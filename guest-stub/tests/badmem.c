/* Misbehaving guest: writes the last byte of its RAM and the first past it (dropped), then runs there (killed). */
#include <stdint.h>
#include <stdio.h>

#include "guest-stub/rt/rt.h"
#include "include/perfvisor/fwcfg.h"

int main(void)
{
	uint64_t ram = 0;
	volatile uint8_t *last;

	if (!rt_fwcfg_read(FWCFG_RAM_SIZE, &ram, sizeof(ram))) {
		printf("badmem: no fw_cfg device to tell the RAM size\n");
		return 1;
	}
	/* The boot page tables map the low 4 GiB, so only EPT stands between us and the host. */
	last = (volatile uint8_t *)(uintptr_t)(ram - 1);
	printf("badmem: fw_cfg says %llu MiB of RAM\n", (unsigned long long)(ram >> 20));
	*last = 0xA5;
	printf("badmem: wrote the last byte of RAM at 0x%llx\n", (unsigned long long)(ram - 1));
	printf("badmem: writing 0x%llx, just past the end of RAM\n", (unsigned long long)ram);
	last[1] = 0x5A;
	/* As on a PC, nothing answers past RAM: the write went nowhere, a read floats high. */
	printf("badmem: past RAM, the write was %s and the byte reads 0x%02x\n",
	       last[1] == 0xFF ? "dropped" : "KEPT", last[1]);
	/* Code cannot run from nothing: this fetch must end the domain. */
	((void (*)(void))(uintptr_t)ram)();
	printf("badmem: still running after jumping outside RAM\n");
	return 1;
}
