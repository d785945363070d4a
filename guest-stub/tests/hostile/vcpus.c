/* Hostile VCPU behaviour: spinning with interrupts off, #GP in real mode, halting for good. */
#include "guest-stub/tests/hostile/hostile.h"

/*
 * case=spin: a VCPU that never exits (CLI, then a loop). With 2 VCPUs, VCPU 1 runs `loops`
 * turns of LOOP in real mode and ends the domain through the exit port; with 1 the hypervisor must
 * stop the domain itself (timeout=).
 */
void __attribute__((noreturn)) case_spin(uint64_t loops)
{
	uint8_t code[] = {
		0x66, 0xB9, 0, 0, 0, 0,		/* mov ecx, loops */
		0x67, 0xE2, 0xFD,		/* addr32 loop . */
		0x31, 0xC0,			/* xor ax, ax */
		0xE6, 0xF4,			/* out 0xf4, al: the domain exits with code 0 */
		0xF4, 0xEB, 0xFD,		/* hlt; jmp back to the hlt */
	};

	if (fwcfg_number(FWCFG_NB_CPUS, 2) > 1) {
		memcpy(code + 2, &(uint32_t){ (uint32_t)loops }, 4);
		start_vcpu(1, code, sizeof(code));
		printf("hostile: spin: vcpu 1 ends the domain after %llu loop turns; vcpu 0 "
		       "spins with interrupts off\n", (unsigned long long)loops);
	} else {
		printf("hostile: spin: spinning with interrupts off until the hypervisor stops "
		       "this domain\n");
	}
	for (;;)
		__asm__ volatile("" : : : "memory");
}

/*
 * case=realgp: VCPU 1 in real mode executes RDMSR of an MSR that does not exist. Hardware
 * raises #GP through IVT entry 13 with no error code (SDM Vol. 3A 20.1.4); its handler counts.
 */
int case_realgp(void)
{
	static const uint8_t code[] = {
		0x66, 0xB9, 0xBC, 0x0A, 0x00, 0x00,	/* mov ecx, 0xabc */
		0x0F, 0x32,				/* rdmsr */
		0xF4, 0xEB, 0xFD,			/* hlt; jmp back to the hlt */
	};
	volatile uint16_t *ivt13 = (volatile uint16_t *)(uintptr_t)(13 * 4);

	/* The real-mode IVT is at address 0, which the compiler would take for NULL. */
	__asm__("" : "+r"(ivt13));

	memset((void *)(uintptr_t)SIPI_PAGE, 0, 0x1000);
	memcpy((void *)(uintptr_t)(SIPI_PAGE + SIPI_GP_HANDLER), sipi_count_code,
	       sizeof(sipi_count_code));
	ivt13[0] = SIPI_GP_HANDLER;
	ivt13[1] = (uint16_t)(SIPI_PAGE >> 4);
	start_vcpu(1, code, sizeof(code));
	for (unsigned i = 0; i < 100 && !*sipi_counter; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	report(*sipi_counter == 1, "realgp: RDMSR of a missing MSR in real mode raised #GP "
	       "through IVT entry 13 (%u times)", *sipi_counter);
	return report_summary();
}

/*
 * case=haltgood: VCPU 1 halts with interrupts off, then INIT-SIPI starts it again in a loop
 * that never ends; VCPU 0 halts with interrupts off. One VCPU still runs, so the domain must
 * go on (until its timeout=), not be taken for one whose VCPUs all stopped for good.
 */
int case_haltgood(void)
{
	static const uint8_t loop_code[] = {
		0x2E, 0x66, 0xFF, 0x06, 0x00, 0x08,	/* inc dword cs:[0x800] */
		0xEB, 0xF8,				/* jmp back to the inc */
	};

	*sipi_counter = 0;
	start_vcpu(1, sipi_count_code, sizeof(sipi_count_code));
	for (unsigned i = 0; i < 100 && !*sipi_counter; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	start_vcpu(1, loop_code, sizeof(loop_code));
	for (unsigned i = 0; i < 100 && *sipi_counter < 1000; i++)
		hypercall(HC_YIELD, 0, 0, 0);
	printf("hostile: haltgood: vcpu 1 halted, then loops (%u turns); vcpu 0 halts for good\n",
	       *sipi_counter);
	__asm__ volatile("cli; hlt");
	printf("hostile: haltgood: vcpu 0 woke up\n");
	return 1;
}
