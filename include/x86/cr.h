/* Control-register bits of CR0 and CR4 that hypervisor and guests name (SDM Vol. 3A 2.5). */
#ifndef PERFVISOR_X86_CR_H
#define PERFVISOR_X86_CR_H

#include "include/x86/bit.h"

#define CR0_PE		X86_BIT(0)	/* protection enable */
#define CR0_MP		X86_BIT(1)	/* monitor coprocessor */
#define CR0_EM		X86_BIT(2)	/* x87 emulation */
#define CR0_TS		X86_BIT(3)	/* task switched */
#define CR0_ET		X86_BIT(4)	/* extension type: reserved, always 1 */
#define CR0_NE		X86_BIT(5)	/* native x87 error reporting */
#define CR0_WP		X86_BIT(16)	/* write protect at CPL 0 */
#define CR0_NW		X86_BIT(29)	/* not write-through */
#define CR0_CD		X86_BIT(30)	/* cache disable */
#define CR0_PG		X86_BIT(31)	/* paging */

#define CR4_VME		X86_BIT(0)	/* virtual-8086 mode extensions */
#define CR4_PVI		X86_BIT(1)	/* protected-mode virtual interrupts */
#define CR4_TSD		X86_BIT(2)	/* RDTSC at CPL 0 only */
#define CR4_DE		X86_BIT(3)	/* debugging extensions */
#define CR4_PSE		X86_BIT(4)	/* 4-MByte pages in 32-bit paging */
#define CR4_PAE		X86_BIT(5)	/* physical address extension */
#define CR4_MCE		X86_BIT(6)	/* machine-check enable */
#define CR4_PGE		X86_BIT(7)	/* global pages */
#define CR4_PCE		X86_BIT(8)	/* RDPMC at any CPL */
#define CR4_OSFXSR	X86_BIT(9)	/* FXSAVE/FXRSTOR and SSE */
#define CR4_OSXMMEXCPT	X86_BIT(10)	/* unmasked SSE exceptions */
#define CR4_UMIP	X86_BIT(11)	/* user-mode instruction prevention */
#define CR4_LA57	X86_BIT(12)	/* 5-level paging */
#define CR4_VMXE	X86_BIT(13)	/* VMX enable */
#define CR4_FSGSBASE	X86_BIT(16)	/* RDFSBASE and friends */
#define CR4_PCIDE	X86_BIT(17)	/* process-context identifiers */
#define CR4_OSXSAVE	X86_BIT(18)	/* XSAVE and XCR0 */
#define CR4_SMEP	X86_BIT(20)	/* supervisor-mode execution prevention */
#define CR4_SMAP	X86_BIT(21)	/* supervisor-mode access prevention */
#define CR4_PKE		X86_BIT(22)	/* protection keys for user pages */

#endif
