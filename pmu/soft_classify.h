/* What the guest instruction about to be single-stepped means for the soft (TF-stepping) PMU. */
#ifndef PERFVISOR_PMU_SOFT_CLASSIFY_H
#define PERFVISOR_PMU_SOFT_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Code-segment mode at guest RIP: 64-bit (CS.L), else CS.D set (32) or clear (16, real mode). */
enum soft_mode {
	SOFT_MODE_16,
	SOFT_MODE_32,
	SOFT_MODE_64,
};

/* Where execution goes when an instruction leaves with TF clear. */
enum soft_target {
	SOFT_TGT_NONE,
	SOFT_TGT_IDT,		/* handler of IDT entry `vector` (IVT entry in real mode) */
	SOFT_TGT_LSTAR,		/* RIP from IA32_LSTAR (SYSCALL, 64-bit mode only) */
};

/*
 * One classified instruction. Only the prefixes, the opcode and, where the opcode needs it, the
 * ModRM byte or INT's imm8 are read: the instruction's length is not needed because the #DB trap
 * reports where execution went.
 */
struct soft_insn {
	bool known;		/* false: bytes ran out before the opcode (ModRM, imm8) did, over
				 * 15 bytes, or an opcode examined here that raises #UD here (LOCK
				 * on it, 9A/EA/CE/17 in 64-bit mode, SYSCALL/SYSRET outside it,
				 * FF /3 /5 on a register, FF /7); then nothing else is set */
	bool branch;		/* counts as a retired branch instruction (see soft_classify.c) */
	bool pushes_flags;	/* PUSHF/D/Q: the image at the new RSP holds the stepping TF */
	bool loads_flags;	/* POPF/D/Q, IRET/D/Q, SYSRET: RFLAGS comes from a guest image */
	bool flags_to_r11;	/* SYSCALL: R11 gets RFLAGS, stepping TF included */
	bool clears_tf;		/* no #DB follows: INT n, INT3, INT1, INTO when OF=1, SYSCALL
				 * when IA32_FMASK bit 8 is set; execution continues at target */
	enum soft_target target;
	uint8_t vector;		/* SOFT_TGT_IDT: n for INT n, 3 INT3, 4 INTO, 1 INT1 */
	bool halts;		/* HLT */
	bool exits;		/* VM exit whatever the controls (SDM Vol. 3C 26.1.2): VMCALL,
				 * VMLAUNCH, VMRESUME, VMXOFF, CPUID, INVD, GETSEC, XSETBV */
	bool ss_shadow;		/* MOV SS / POP SS: no #DB until after the next instruction */
	bool sti;		/* STI: with IF clear before it, interrupts wait until after the
				 * next instruction (SDM Vol. 2B STI) */
	uint8_t ss_len;		/* ss_shadow: this instruction's length, to find the next one;
				 * 0 for MOV SS from memory (would need ModRM/SIB/disp sizing) */
	bool rep_string;	/* a string instruction with REP/REPE/REPNE: the single-step trap
				 * comes after each iteration (SDM Vol. 3A 18.3.1.4), with RIP
				 * still on it until the last */
};

/*
 * Classify the instruction in bytes[0..n) fetched at guest RIP. Never reads past n, nor past the
 * 15th byte (SDM Vol. 2A 2.3.11). Fills *out (all false/0 but what applies) and returns
 * out->known.
 */
bool soft_classify(const uint8_t *bytes, unsigned n, enum soft_mode mode, struct soft_insn *out);

#endif
