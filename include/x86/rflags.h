/* RFLAGS bits the hypervisor and guests name (SDM Vol. 1 3.4.3, Vol. 3A 2.3). */
#ifndef PERFVISOR_X86_RFLAGS_H
#define PERFVISOR_X86_RFLAGS_H

#include "include/x86/bit.h"

#define RFLAGS_TF	X86_BIT(8)	/* trap flag: single-step */
#define RFLAGS_IF	X86_BIT(9)	/* maskable interrupts enabled */
#define RFLAGS_DF	X86_BIT(10)	/* direction: string instructions step down */
#define RFLAGS_RF	X86_BIT(16)	/* resume flag: no instruction breakpoint on the next */

#endif
