/* What the guest instruction about to be single-stepped means for the soft (TF-stepping) PMU. */
#include <stddef.h>

#include "pmu/soft_classify.h"

/* Longest legal instruction (SDM Vol. 2A 2.3.11). */
#define SOFT_MAX_LEN	15

/*
 * What counts as a branch is a documented choice. Intel's BR_INST_RETIRED.ALL_BRANCHES counts
 * branch instructions at retirement (SDM Vol. 3B ch. 20, architectural event "Branch Instructions
 * Retired", C4H/00H); the model tables split it into CONDITIONAL (taken or not), NEAR_CALL,
 * NEAR_RETURN, NEAR_TAKEN and FAR_BRANCH. So: Jcc, LOOPcc/JrCXZ, near and far JMP/CALL/RET, and
 * every instruction that makes a far transfer: INT n, INT3, INT1, INTO (also with OF=0, like a
 * Jcc not taken), IRET, SYSCALL/SYSRET, SYSENTER/SYSEXIT. Interrupts and exceptions are not
 * instructions and are left out (AMD's event would count them). VMCALL exits instead of
 * transferring control in the guest: not a branch.
 */
enum {
	R_BRANCH	= 1 << 0,
	R_PUSHF		= 1 << 1,
	R_LOADF		= 1 << 2,
	R_R11		= 1 << 3,	/* SYSCALL saves RFLAGS in R11 (SDM Vol. 2B SYSCALL) */
	R_IDT		= 1 << 4,	/* IDT delivery clears TF (Vol. 3A 6.12.1) */
	R_LSTAR		= 1 << 5,	/* SYSCALL: RFLAGS &= ~IA32_FMASK, RIP = IA32_LSTAR */
	R_IMM8		= 1 << 6,	/* the vector is the imm8 after the opcode (INT n) */
	R_HALT		= 1 << 7,
	R_EXITS		= 1 << 8,
	R_SHADOW	= 1 << 9,	/* MOV/POP SS hold #DB back (Vol. 3A 6.8.3) */
	R_MODRM		= 1 << 10,	/* the row is chosen by the ModRM byte */
	R_MEM		= 1 << 11,	/* #UD with a register operand (far pointer in memory) */
	R_NO64		= 1 << 12,	/* #UD in 64-bit mode (SDM Vol. 2D appendix A, "i64") */
	R_ONLY64	= 1 << 13,	/* #UD outside 64-bit mode (Vol. 2B SYSCALL) */
	R_UD		= 1 << 14,	/* always #UD */
	R_STI		= 1 << 15,	/* interrupts wait one instruction (Vol. 2B STI) */
};

/*
 * The opcodes that matter for stepping (SDM Vol. 2D appendix A, Tables ); any
 * other opcode is an ordinary instruction. ModRM rows match when (modrm & mask) == val, and the
 * first match wins, so each ModRM opcode ends with a catch-all row; all rows of one opcode agree
 * on R_MODRM, which is read from the first before the ModRM byte is.
 */
struct row {
	uint8_t map;		/* 1: one-byte opcodes, 2: after 0F */
	uint8_t lo, hi;		/* opcode range */
	uint8_t mask, val;	/* R_MODRM rows only */
	uint16_t flags;
	uint8_t vector;
};

#define REG(r)		0x38, (r) << 3	/* ModRM.reg selects the group member */
#define MODRM(b)	0xff, (b)	/* the whole ModRM byte selects it */
#define ANY		0, 0

static const struct row rows[] = {
	{ 1, 0x17, 0x17, ANY, R_SHADOW | R_NO64, 0 },			/* POP SS */
	{ 1, 0x70, 0x7f, ANY, R_BRANCH, 0 },				/* Jcc rel8 */
	{ 1, 0x8e, 0x8e, REG(2), R_MODRM | R_SHADOW, 0 },		/* MOV SS, r/m16 */
	{ 1, 0x8e, 0x8e, ANY, R_MODRM, 0 },
	{ 1, 0x9a, 0x9a, ANY, R_BRANCH | R_NO64, 0 },			/* CALL ptr16:16/32 */
	{ 1, 0x9c, 0x9c, ANY, R_PUSHF, 0 },
	{ 1, 0x9d, 0x9d, ANY, R_LOADF, 0 },				/* POPF */
	{ 1, 0xc2, 0xc3, ANY, R_BRANCH, 0 },				/* RET near */
	{ 1, 0xca, 0xcb, ANY, R_BRANCH, 0 },				/* RET far */
	{ 1, 0xcc, 0xcc, ANY, R_BRANCH | R_IDT, 3 },			/* INT3 */
	{ 1, 0xcd, 0xcd, ANY, R_BRANCH | R_IDT | R_IMM8, 0 },		/* INT n */
	{ 1, 0xce, 0xce, ANY, R_BRANCH | R_IDT | R_NO64, 4 },		/* INTO */
	{ 1, 0xcf, 0xcf, ANY, R_BRANCH | R_LOADF, 0 },			/* IRET */
	{ 1, 0xe0, 0xe3, ANY, R_BRANCH, 0 },				/* LOOPcc, JrCXZ */
	{ 1, 0xe8, 0xe9, ANY, R_BRANCH, 0 },				/* CALL, JMP rel */
	{ 1, 0xea, 0xea, ANY, R_BRANCH | R_NO64, 0 },			/* JMP ptr16:16/32 */
	{ 1, 0xeb, 0xeb, ANY, R_BRANCH, 0 },				/* JMP rel8 */
	{ 1, 0xf1, 0xf1, ANY, R_BRANCH | R_IDT, 1 },			/* INT1 (ICEBP) */
	{ 1, 0xf4, 0xf4, ANY, R_HALT, 0 },
	{ 1, 0xfb, 0xfb, ANY, R_STI, 0 },
	{ 1, 0xff, 0xff, REG(2), R_MODRM | R_BRANCH, 0 },		/* CALL r/m */
	{ 1, 0xff, 0xff, REG(3), R_MODRM | R_BRANCH | R_MEM, 0 },	/* CALL m16:16/32/64 */
	{ 1, 0xff, 0xff, REG(4), R_MODRM | R_BRANCH, 0 },		/* JMP r/m */
	{ 1, 0xff, 0xff, REG(5), R_MODRM | R_BRANCH | R_MEM, 0 },	/* JMP m16:16/32/64 */
	{ 1, 0xff, 0xff, REG(7), R_MODRM | R_UD, 0 },
	{ 1, 0xff, 0xff, ANY, R_MODRM, 0 },				/* INC, DEC, PUSH */
	{ 2, 0x01, 0x01, MODRM(0xc1), R_MODRM | R_EXITS, 0 },		/* VMCALL */
	{ 2, 0x01, 0x01, MODRM(0xc2), R_MODRM | R_EXITS, 0 },		/* VMLAUNCH */
	{ 2, 0x01, 0x01, MODRM(0xc3), R_MODRM | R_EXITS, 0 },		/* VMRESUME */
	{ 2, 0x01, 0x01, MODRM(0xc4), R_MODRM | R_EXITS, 0 },		/* VMXOFF */
	{ 2, 0x01, 0x01, MODRM(0xd1), R_MODRM | R_EXITS, 0 },		/* XSETBV */
	{ 2, 0x01, 0x01, ANY, R_MODRM, 0 },				/* SGDT, LIDT, SWAPGS... */
	{ 2, 0x05, 0x05, ANY, R_BRANCH | R_R11 | R_LSTAR | R_ONLY64, 0 },	/* SYSCALL */
	{ 2, 0x07, 0x07, ANY, R_BRANCH | R_LOADF | R_ONLY64, 0 },	/* SYSRET */
	{ 2, 0x08, 0x08, ANY, R_EXITS, 0 },				/* INVD */
	/* SYSENTER leaves TF alone (Vol. 2B SYSENTER): the #DB comes at its target. */
	{ 2, 0x34, 0x35, ANY, R_BRANCH, 0 },				/* SYSENTER, SYSEXIT */
	{ 2, 0x37, 0x37, ANY, R_EXITS, 0 },				/* GETSEC */
	{ 2, 0x80, 0x8f, ANY, R_BRANCH, 0 },				/* Jcc rel16/32 */
	{ 2, 0xa2, 0xa2, ANY, R_EXITS, 0 },				/* CPUID */
};

/* The first row for map/op, and whose ModRM test passes when the ModRM byte is known. */
static const struct row *find_row(unsigned map, uint8_t op, const uint8_t *modrm)
{
	const struct row *r;

	for (r = rows; r < rows + sizeof(rows) / sizeof(rows[0]); r++)
		if (r->map == map && op >= r->lo && op <= r->hi &&
		    (!modrm || (*modrm & r->mask) == r->val))
			return r;
	return NULL;
}

/* Legacy prefixes (SDM Vol. 2A 2.1.1); REX (2.2.1) is handled by the caller, by mode. */
static bool legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0xf0: case 0xf2: case 0xf3:
	case 0x2e: case 0x36: case 0x3e: case 0x26: case 0x64: case 0x65:
	case 0x66: case 0x67:
		return true;
	default:
		return false;
	}
}

bool soft_classify(const uint8_t *bytes, unsigned n, enum soft_mode mode, struct soft_insn *out)
{
	unsigned avail = n < SOFT_MAX_LEN ? n : SOFT_MAX_LEN;
	unsigned pos = 0, map = 1;
	bool lock = false, rep = false;
	uint8_t op, modrm = 0, imm8 = 0;
	const struct row *r;

	*out = (struct soft_insn){ .known = false };

	/* 40-4F are REX only in 64-bit mode; elsewhere they are INC/DEC (an opcode). */
	for (;;) {
		if (pos >= avail)
			return false;
		op = bytes[pos++];
		if (legacy_prefix(op)) {
			lock |= op == 0xf0;
			rep |= op == 0xf2 || op == 0xf3;
		}
		else if (!(mode == SOFT_MODE_64 && (op & 0xf0) == 0x40))
			break;
	}
	if (op == 0x0f) {
		if (pos >= avail)
			return false;
		op = bytes[pos++];
		map = 2;
	}

	r = find_row(map, op, NULL);
	if (!r) {
		out->known = true;
		/* INS, OUTS, MOVS, CMPS, STOS, LODS, SCAS (SDM Vol. 2B REP/REPE/REPZ/REPNE/REPNZ). */
		out->rep_string = rep && map == 1 && ((op >= 0x6c && op <= 0x6f) ||
						      (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf));
		return true;
	}
	if (r->flags & R_MODRM) {
		if (pos >= avail)
			return false;
		modrm = bytes[pos++];
		r = find_row(map, op, &modrm);
	}
	if (r->flags & R_IMM8) {
		if (pos >= avail)
			return false;
		imm8 = bytes[pos++];
	}

	/* LOCK on any of these raises #UD (SDM Vol. 2A LOCK); catch-all rows may be lockable. */
	if ((lock && r->flags != R_MODRM) || (r->flags & R_UD))
		return false;
	if ((r->flags & R_NO64) && mode == SOFT_MODE_64)
		return false;
	if ((r->flags & R_ONLY64) && mode != SOFT_MODE_64)
		return false;
	if ((r->flags & R_MEM) && (modrm >> 6) == 3)
		return false;

	out->known = true;
	out->branch = r->flags & R_BRANCH;
	out->pushes_flags = r->flags & R_PUSHF;
	out->loads_flags = r->flags & R_LOADF;
	out->flags_to_r11 = r->flags & R_R11;
	out->halts = r->flags & R_HALT;
	out->exits = r->flags & R_EXITS;
	out->sti = r->flags & R_STI;
	/*
	 * INT n, INT3, INTO and INT1 clear TF through the gate, so no single-step trap follows them
	 * (SDM Vol. 3A 18.3.1.4); SYSCALL clears it when IA32_FMASK says so.
	 */
	if (r->flags & R_IDT) {
		out->clears_tf = true;
		out->target = SOFT_TGT_IDT;
		out->vector = r->flags & R_IMM8 ? imm8 : r->vector;
	} else if (r->flags & R_LSTAR) {
		out->clears_tf = true;
		out->target = SOFT_TGT_LSTAR;
	}
	if (r->flags & R_SHADOW) {
		out->ss_shadow = true;
		/* Without a memory operand the length is what was read so far. */
		if (!(r->flags & R_MODRM) || (modrm >> 6) == 3)
			out->ss_len = pos;
	}
	return true;
}
