/* Debug-register bits the hypervisor and guests name (SDM Vol. 3A 18.2). */
#ifndef PERFVISOR_X86_DR_H
#define PERFVISOR_X86_DR_H

#include "include/x86/bit.h"

/* DR6 (18.2.3): B0-B3 say which breakpoint hit, BS a single step; FIXED1 bits read as 1. */
#define DR6_B(n)	X86_BIT(n)
#define DR6_BD		X86_BIT(13)
#define DR6_BS		X86_BIT(14)
#define DR6_FIXED1	0xFFFF0FF0ull
#define DR6_BITS	0x0000E00Full	/* B0-B3, BD, BS, BT */

/* DR7 (18.2.4): local enable of breakpoint k, general detect; bit 10 reads as 1. */
#define DR7_L(k)	X86_BIT(2 * (k))
#define DR7_GD		X86_BIT(13)
#define DR7_FIXED1	0x400ull
#define DR7_BITS	0xFFFF23FFull	/* L0-G3, LE, GE, GD, R/W and LEN of each */

#endif
