/* The local xAPIC's register page: its default address, register offsets and fields (SDM Vol. 3A ch. 11). */
#ifndef PERFVISOR_X86_APIC_H
#define PERFVISOR_X86_APIC_H

/*
 * The address and the offsets are plain numbers so that assembly can use them too; the
 * fields below are C only.
 */

/* Where IA32_APIC_BASE puts the page after reset (SDM Vol. 3A 11.4.1, 11.4.4). */
#define APIC_DEFAULT_BASE	0xFEE00000

/* Register offsets in the page (SDM Vol. 3A table 11-1). */
#define APIC_ID			0x020
#define APIC_VERSION		0x030
#define APIC_TPR		0x080
#define APIC_APR		0x090
#define APIC_PPR		0x0A0
#define APIC_EOI		0x0B0
#define APIC_RRD		0x0C0
#define APIC_LDR		0x0D0
#define APIC_DFR		0x0E0
#define APIC_SPIV		0x0F0
#define APIC_ISR		0x100	/* eight registers, 0x10 apart, to 0x170 */
#define APIC_TMR		0x180	/* eight, to 0x1F0 */
#define APIC_IRR		0x200	/* eight, to 0x270 */
#define APIC_ESR		0x280
#define APIC_ICR_LO		0x300
#define APIC_ICR_HI		0x310
#define APIC_LVT_TIMER		0x320	/* the first LVT entry; the others follow 0x10 apart */
#define APIC_LVT_PMC		0x340
#define APIC_TIMER_ICR		0x380
#define APIC_TIMER_CCR		0x390
#define APIC_TIMER_DCR		0x3E0
#define APIC_SELF_IPI		0x3F0	/* x2APIC mode only (SDM Vol. 3A 11.12.11) */

/* Spurious-interrupt vector register: APIC software enable (SDM Vol. 3A 11.9). */
#define APIC_SPIV_ENABLE	(1u << 8)

/*
 * LVT entries: NMI delivery mode, mask and the timer's periodic and TSC-deadline modes (SDM Vol. 3A
 * 11.5.1, 11.5.4.1).
 */
#define APIC_LVT_NMI		(4u << 8)
#define APIC_LVT_MASKED		(1u << 16)
#define APIC_LVT_PERIODIC	(1u << 17)
#define APIC_LVT_TSC_DEADLINE	(2u << 17)

/* Timer divide configuration: divide by 1 (SDM Vol. 3A 11.5.4). */
#define APIC_DCR_DIVIDE_1	0xB

/* Error status register (SDM Vol. 3A 11.5.3). */
#define APIC_ESR_SEND_ILLEGAL	(1u << 5)
#define APIC_ESR_RECV_ILLEGAL	(1u << 6)
#define APIC_ESR_ILLEGAL_REG	(1u << 7)

/*
 * ICR low word: delivery mode in bits 10:8 (0x300 is reserved), logical destination, delivery
 * status, level, destination shorthand in bits 19:18 (SDM Vol. 3A 11.6.1).
 */
#define APIC_ICR_FIXED		0x000
#define APIC_ICR_LOWEST		0x100
#define APIC_ICR_SMI		0x200
#define APIC_ICR_RESERVED	0x300
#define APIC_ICR_NMI		0x400
#define APIC_ICR_INIT		0x500
#define APIC_ICR_SIPI		0x600
#define APIC_ICR_EXTINT		0x700
#define APIC_ICR_LOGICAL	(1u << 11)
#define APIC_ICR_BUSY		(1u << 12)
#define APIC_ICR_ASSERT		(1u << 14)
#define APIC_ICR_SELF		(1u << 18)
#define APIC_ICR_ALL		(2u << 18)
#define APIC_ICR_OTHERS		(3u << 18)


/* IA32_APIC_BASE fields besides the page address (SDM Vol. 3A 11.4.4, figure 11-5). */
#define APIC_BASE_BSP		(1ull << 8)
#define APIC_BASE_EXTD		(1ull << 10)	/* x2APIC mode */
#define APIC_BASE_ENABLE	(1ull << 11)

#endif
