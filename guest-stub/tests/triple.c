/* Misbehaving guest: loads an empty IDT and raises #UD, so the CPU triple-faults (must be killed). */
#include <stdint.h>
#include <stdio.h>

#include "guest-stub/rt/rt.h"

struct idt_ptr {
	uint16_t limit;
	uint64_t base;
} __attribute__((packed));

int main(void)
{
	static const struct idt_ptr empty = { 0, 0 };

	printf("triple: loading an empty IDT and executing UD2\n");
	/* #UD finds no gate (#GP), nor does #GP (#DF), nor #DF: SDM Vol. 3A 6.15, interrupt 8. */
	__asm__ volatile("lidt %0; ud2" : : "m"(empty));
	printf("triple: still running after a triple fault\n");
	return 1;
}
