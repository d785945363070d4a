/* Exception and interrupt vectors the architecture fixes (SDM Vol. 3A table 6-1). */
#ifndef PERFVISOR_X86_TRAP_H
#define PERFVISOR_X86_TRAP_H

#define EXC_DB		1	/* debug */
#define EXC_NMI		2	/* non-maskable interrupt */
#define EXC_UD		6	/* invalid opcode */
#define EXC_MC		18	/* machine check */

#endif
