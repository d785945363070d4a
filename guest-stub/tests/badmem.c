/* Misbehaving guest: writes the last byte of its RAM, then the first byte past it (must be killed). */
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
	printf("badmem: still running after writing outside RAM\n");
	return 1;
}
