/* Control-register bits guests set on their way into long mode and for RDPMC (SDM Vol. 3A 2.5). */
#ifndef PERFVISOR_X86_CR_H
#define PERFVISOR_X86_CR_H

#include "include/x86/bit.h"

#define CR0_PE		X86_BIT(0)	/* protection enable */
#define CR0_MP		X86_BIT(1)	/* monitor coprocessor */
#define CR0_EM		X86_BIT(2)	/* x87 emulation */
#define CR0_TS		X86_BIT(3)	/* task switched */
#define CR0_NW		X86_BIT(29)	/* not write-through */
#define CR0_CD		X86_BIT(30)	/* cache disable */
#define CR0_PG		X86_BIT(31)	/* paging */

#define CR4_PAE		X86_BIT(5)	/* physical address extension */
#define CR4_PCE		X86_BIT(8)	/* RDPMC at any CPL */
#define CR4_OSFXSR	X86_BIT(9)	/* FXSAVE/FXRSTOR and SSE */
#define CR4_OSXMMEXCPT	X86_BIT(10)	/* unmasked SSE exceptions */

#endif
