/* The kernel's page tables: the low 4 GiB identity-mapped in 2 MiB pages, user-accessible RAM. */
#include <stdint.h>

#include "guest-stub/kernel/internal.h"

#define PTE_PRESENT	0x001ull
#define PTE_WRITE	0x002ull
#define PTE_USER	0x004ull
#define PTE_PWT		0x008ull
#define PTE_PCD		0x010ull
#define PTE_LARGE	0x080ull	/* a 2 MiB page in a page-directory entry */

#define PAGE_2M		0x200000ull
#define PDS		4		/* one page directory per GiB */
#define DEVICE_BASE	0xFE000000ull	/* the top 32 MiB: I/O APIC, HPET, local APIC */

static uint64_t pml4[512] __attribute__((aligned(4096)));
static uint64_t pdpt[512] __attribute__((aligned(4096)));
static uint64_t pd[PDS][512] __attribute__((aligned(4096)));

/*
 * SDM Vol. 3A, "4-Level Paging": an access from CPL 3 needs the U/S bit at every level.
 * Threads of both rings share the one image, heap and address space (user threads run
 * the image's own functions on heap stacks), so all RAM is user-accessible; the device
 * pages are not, so user threads cannot touch the local APIC. This is a test kernel:
 * the rings give the PMU its user/kernel split, not protection. Returns CR3.
 */
uint64_t paging_init(void)
{
	pml4[0] = (uintptr_t)pdpt | PTE_PRESENT | PTE_WRITE | PTE_USER;
	for (unsigned g = 0; g < PDS; g++) {
		pdpt[g] = (uintptr_t)pd[g] | PTE_PRESENT | PTE_WRITE | PTE_USER;
		for (unsigned i = 0; i < 512; i++) {
			uint64_t addr = (g * 512ull + i) * PAGE_2M;

			pd[g][i] = addr | PTE_PRESENT | PTE_WRITE | PTE_LARGE |
				   /* device memory is uncached and kernel-only */
				   (addr >= DEVICE_BASE ? PTE_PCD | PTE_PWT : PTE_USER);
		}
	}
	return (uintptr_t)pml4;
}
