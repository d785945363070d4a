/* Basic blocks for the soft PMU's stepper: straight-line guest code it lets run to a breakpoint. */
#include <stddef.h>

#include "hv/step_block.h"

/*
 * Which instructions a block may hold: a short list of common encodings whose length is sure
 * and which cannot change what the stepper watches (no flags image, no TF, no CPL or mode
 * change, no interrupt shadow, no exit of their own but faults, which the stepper intercepts).
 * Anything else ends the block and is single-stepped. Lengths: SDM Vol. 2A 2.1 and Vol. 2D
 * appendix A (Tables for the groups).
 */
enum {
	P_MODRM		= 1 << 0,
	P_IMM8		= 1 << 1,
	P_IMMZ		= 1 << 2,	/* 2 or 4 bytes by operand size */
	P_IMMV		= 1 << 3,	/* 2, 4 or 8 (MOV r, imm: REX.W) */
	P_MOFFS		= 1 << 4,	/* an address-size offset (MOV AL/eAX, moffs) */
	P_WRITE_RM	= 1 << 5,	/* writes memory when ModRM names memory */
	P_WRITE		= 1 << 6,	/* writes memory always (PUSH, MOVS, STOS) */
	P_STRING	= 1 << 7,	/* takes REP (F2/F3) */
	P_NO64		= 1 << 8,	/* another instruction, or #UD, in 64-bit mode */
	P_ONLY64	= 1 << 9,
	P_GROUP		= 1 << 10,	/* ModRM.reg picks the form: see group_ok() */
	P_MEMONLY	= 1 << 11,	/* #UD with a register operand (LEA) */
	P_OK		= 1 << 12,
	P_SSE		= 1 << 13,	/* 66, F2, F3 select the form (SDM Vol. 2A 2.1.1): any */
};

#define ALU_RM		(P_OK | P_MODRM | P_WRITE_RM)	/* op r/m, reg */
#define ALU_R		(P_OK | P_MODRM)		/* op reg, r/m */
#define SSE_R		(P_OK | P_MODRM | P_SSE)	/* SSE/MMX op xmm, xmm/m */
#define SSE_RM		(P_OK | P_MODRM | P_SSE | P_WRITE_RM)	/* a store to xmm/m */

/* One-byte opcodes a block may hold (0 = not plain). */
static const uint16_t map1[256] = {
	[0x00] = ALU_RM, [0x01] = ALU_RM, [0x02] = ALU_R, [0x03] = ALU_R,
	[0x04] = P_OK | P_IMM8, [0x05] = P_OK | P_IMMZ,
	[0x08] = ALU_RM, [0x09] = ALU_RM, [0x0a] = ALU_R, [0x0b] = ALU_R,
	[0x0c] = P_OK | P_IMM8, [0x0d] = P_OK | P_IMMZ,
	[0x10] = ALU_RM, [0x11] = ALU_RM, [0x12] = ALU_R, [0x13] = ALU_R,
	[0x14] = P_OK | P_IMM8, [0x15] = P_OK | P_IMMZ,
	[0x18] = ALU_RM, [0x19] = ALU_RM, [0x1a] = ALU_R, [0x1b] = ALU_R,
	[0x1c] = P_OK | P_IMM8, [0x1d] = P_OK | P_IMMZ,
	[0x20] = ALU_RM, [0x21] = ALU_RM, [0x22] = ALU_R, [0x23] = ALU_R,
	[0x24] = P_OK | P_IMM8, [0x25] = P_OK | P_IMMZ,
	[0x28] = ALU_RM, [0x29] = ALU_RM, [0x2a] = ALU_R, [0x2b] = ALU_R,
	[0x2c] = P_OK | P_IMM8, [0x2d] = P_OK | P_IMMZ,
	[0x30] = ALU_RM, [0x31] = ALU_RM, [0x32] = ALU_R, [0x33] = ALU_R,
	[0x34] = P_OK | P_IMM8, [0x35] = P_OK | P_IMMZ,
	[0x38] = ALU_R, [0x39] = ALU_R, [0x3a] = ALU_R, [0x3b] = ALU_R,	/* CMP only reads */
	[0x3c] = P_OK | P_IMM8, [0x3d] = P_OK | P_IMMZ,
	/* INC/DEC r outside 64-bit mode (REX prefixes in it) */
	[0x40 ... 0x4f] = P_OK | P_NO64,
	[0x50 ... 0x57] = P_OK | P_WRITE,			/* PUSH r */
	[0x58 ... 0x5f] = P_OK,					/* POP r */
	[0x63] = P_OK | P_MODRM | P_ONLY64,			/* MOVSXD (ARPL elsewhere) */
	[0x68] = P_OK | P_IMMZ | P_WRITE, [0x6a] = P_OK | P_IMM8 | P_WRITE,	/* PUSH imm */
	[0x69] = P_OK | P_MODRM | P_IMMZ, [0x6b] = P_OK | P_MODRM | P_IMM8,	/* IMUL */
	[0x80] = P_OK | P_MODRM | P_IMM8 | P_GROUP, [0x81] = P_OK | P_MODRM | P_IMMZ | P_GROUP,
	[0x83] = P_OK | P_MODRM | P_IMM8 | P_GROUP,
	[0x84] = ALU_R, [0x85] = ALU_R,				/* TEST */
	[0x86] = ALU_RM, [0x87] = ALU_RM, [0x88] = ALU_RM, [0x89] = ALU_RM,	/* XCHG, MOV */
	[0x8a] = ALU_R, [0x8b] = ALU_R,
	[0x8d] = P_OK | P_MODRM | P_MEMONLY,			/* LEA */
	[0x90 ... 0x97] = P_OK,					/* NOP, PAUSE, XCHG */
	[0x98] = P_OK, [0x99] = P_OK,				/* CBW, CWD */
	[0xa0] = P_OK | P_MOFFS, [0xa1] = P_OK | P_MOFFS,
	[0xa2] = P_OK | P_MOFFS | P_WRITE, [0xa3] = P_OK | P_MOFFS | P_WRITE,
	[0xa4] = P_OK | P_STRING | P_WRITE, [0xa5] = P_OK | P_STRING | P_WRITE,	/* MOVS */
	[0xa6] = P_OK | P_STRING, [0xa7] = P_OK | P_STRING,			/* CMPS */
	[0xa8] = P_OK | P_IMM8, [0xa9] = P_OK | P_IMMZ,				/* TEST */
	[0xaa] = P_OK | P_STRING | P_WRITE, [0xab] = P_OK | P_STRING | P_WRITE,	/* STOS */
	[0xac ... 0xaf] = P_OK | P_STRING,				/* LODS, SCAS */
	[0xb0 ... 0xb7] = P_OK | P_IMM8, [0xb8 ... 0xbf] = P_OK | P_IMMV,	/* MOV r, imm */
	[0xc0] = P_OK | P_MODRM | P_IMM8 | P_WRITE_RM, [0xc1] = P_OK | P_MODRM | P_IMM8 | P_WRITE_RM,
	[0xc6] = P_OK | P_MODRM | P_IMM8 | P_WRITE_RM | P_GROUP,	/* MOV r/m, imm (/0) */
	[0xc7] = P_OK | P_MODRM | P_IMMZ | P_WRITE_RM | P_GROUP,
	[0xd0 ... 0xd3] = ALU_RM,				/* shifts */
	[0xf5] = P_OK, [0xf8] = P_OK, [0xf9] = P_OK, [0xfc] = P_OK, [0xfd] = P_OK,
	[0xf6] = P_OK | P_MODRM | P_GROUP, [0xf7] = P_OK | P_MODRM | P_GROUP,
	[0xfe] = P_OK | P_MODRM | P_GROUP, [0xff] = P_OK | P_MODRM | P_GROUP,
};

/*
 * Two-byte opcodes (0F xx) a block may hold: the integer ones above, and the legacy-encoded
 * SSE/SSE2 and MMX arithmetic, moves and compares (Vol. 2D table A-3), whose prefixes pick
 * the form but never the length; not MASKMOVQ/MASKMOVDQU (F7), which store at RDI.
 */
static const uint16_t map2[256] = {
	[0x10] = SSE_R, [0x11] = SSE_RM, [0x12] = SSE_R, [0x13] = SSE_RM,
	[0x14] = SSE_R, [0x15] = SSE_R, [0x16] = SSE_R, [0x17] = SSE_RM,
	[0x28] = SSE_R, [0x29] = SSE_RM, [0x2a] = SSE_R, [0x2b] = SSE_RM,
	[0x2c ... 0x2f] = SSE_R,
	[0x50 ... 0x6f] = SSE_R,
	[0x70] = SSE_R | P_IMM8, [0x71 ... 0x73] = SSE_R | P_IMM8,
	[0x74 ... 0x76] = SSE_R,
	[0x7e] = SSE_RM, [0x7f] = SSE_RM,
	[0xae] = P_OK | P_MODRM | P_GROUP,			/* LFENCE, MFENCE, SFENCE */
	[0xb8] = SSE_R,						/* POPCNT (F3) */
	[0xc2] = SSE_R | P_IMM8, [0xc6] = SSE_R | P_IMM8,
	[0xd1 ... 0xd5] = SSE_R, [0xd6] = SSE_RM, [0xd7 ... 0xe6] = SSE_R,
	[0xe7] = SSE_RM, [0xe8 ... 0xf6] = SSE_R, [0xf8 ... 0xfe] = SSE_R,
	[0x1f] = P_OK | P_MODRM,				/* NOP r/m */
	[0x31] = P_OK,						/* RDTSC (offset, no exit) */
	[0x40 ... 0x4f] = ALU_R,				/* CMOVcc */
	[0x90 ... 0x9f] = ALU_RM,				/* SETcc */
	[0xa3] = ALU_R, [0xab] = ALU_RM, [0xb3] = ALU_RM, [0xbb] = ALU_RM,	/* BT, BTS... */
	[0xa4] = P_OK | P_MODRM | P_IMM8 | P_WRITE_RM, [0xa5] = ALU_RM,	/* SHLD */
	[0xac] = P_OK | P_MODRM | P_IMM8 | P_WRITE_RM, [0xad] = ALU_RM,	/* SHRD */
	[0xaf] = ALU_R,						/* IMUL */
	[0xb0] = ALU_RM, [0xb1] = ALU_RM,			/* CMPXCHG */
	[0xb6] = ALU_R, [0xb7] = ALU_R, [0xbe] = ALU_R, [0xbf] = ALU_R,	/* MOVZX, MOVSX */
	[0xba] = P_OK | P_MODRM | P_IMM8 | P_GROUP,		/* BT/BTS/BTR/BTC imm8 */
	[0xbc] = SSE_R, [0xbd] = SSE_R,				/* BSF/TZCNT, BSR/LZCNT */
	[0xc0] = ALU_RM, [0xc1] = ALU_RM,			/* XADD */
	[0xc8 ... 0xcf] = P_OK,					/* BSWAP */
};

/* Group members a block may hold, and whether they write r/m; false: not plain. */
static bool group_ok(unsigned map, uint8_t op, unsigned reg, bool *write_rm)
{
	*write_rm = false;
	if (map == 2 && op == 0xae)	/* register forms /5 /6 /7: the fences; the rest XSAVE... */
		return reg >= 5;
	if (map == 2)			/* 0F BA: /4 BT reads, /5-/7 write, /0-/3 #UD */
		return reg >= 4 && ((*write_rm = reg >= 5), true);
	switch (op) {
	case 0x80: case 0x81: case 0x83:	/* ADD..CMP: /7 CMP only reads */
		*write_rm = reg != 7;
		return true;
	case 0xc6: case 0xc7:			/* MOV /0; the rest is XABORT/XBEGIN or #UD */
		*write_rm = true;
		return reg == 0;
	case 0xf6: case 0xf7:			/* TEST /0 /1, NOT /2, NEG /3, MUL..IDIV /4-/7 */
		*write_rm = reg == 2 || reg == 3;
		return true;
	case 0xfe:				/* INC, DEC */
		*write_rm = true;
		return reg <= 1;
	default:				/* FF: INC, DEC; PUSH /6 (writes the stack) */
		*write_rm = true;
		return reg <= 1 || reg == 6;
	}
}

/* Bytes of ModRM's SIB and displacement (SDM Vol. 2A Tables 2-1 to 2-3, 2.2.1.6). */
static unsigned memory_bytes(const uint8_t *b, unsigned avail, uint8_t modrm, unsigned asize,
			     bool *ok)
{
	unsigned mod = modrm >> 6, rm = modrm & 7;

	*ok = true;
	if (mod == 3)
		return 0;
	if (asize == 2)
		return mod == 1 ? 1 : mod == 2 || (mod == 0 && rm == 6) ? 2 : 0;
	if (rm == 4) {
		if (!avail) {
			*ok = false;
			return 0;
		}
		return 1 + (mod == 1 ? 1 : mod == 2 || (mod == 0 && (b[0] & 7) == 5) ? 4 : 0);
	}
	return mod == 1 ? 1 : mod == 2 || (mod == 0 && rm == 5) ? 4 : 0;
}

/* Opcodes with a register in their low 3 bits: INC/DEC, XCHG, MOV r, imm, BSWAP. */
static bool reg_in_opcode(unsigned map, uint8_t op)
{
	return map == 1 ? (op >= 0x40 && op <= 0x4f) || (op >= 0x90 && op <= 0x97) ||
			  (op >= 0xb0 && op <= 0xbf) : op >= 0xc8;
}

#define ALL_GPRS	0xFFFFu

/* Register r as a bit; without REX, byte registers 4-7 are AH, CH, DH, BH (SDM Vol. 2A 2.1.5). */
static uint32_t gpr_bit(unsigned r, bool byte, unsigned rex)
{
	return 1u << (byte && !rex && r >= 4 ? r - 4 : r);
}

/*
 * The general registers a plain instruction may write (bit r: register r), for counted loops;
 * all of them where the table below does not say. SDM Vol. 2D appendix A for the operands.
 */
static uint32_t gpr_writes(unsigned map, uint8_t op, uint16_t f, uint8_t modrm, unsigned rex)
{
	unsigned reg = ((modrm >> 3) & 7) | (rex & 4) << 1, rm = (modrm & 7) | (rex & 1) << 3;
	unsigned opreg = (op & 7) | (rex & 1) << 3;
	bool direct = (modrm >> 6) == 3, byte = !(op & 1);
	uint32_t to_rm = direct ? gpr_bit(rm, byte, rex) : 0;

	if (f & P_SSE)
		return ALL_GPRS;
	if (map == 2) {
		switch (op) {
		case 0x1f: case 0xa3: case 0xae:		/* NOP, BT, fences */
			return 0;
		case 0x40 ... 0x4f: case 0xaf: case 0xb6: case 0xb7: case 0xbe: case 0xbf:
			return 1u << reg;			/* CMOVcc, IMUL, MOVZX, MOVSX */
		case 0x90 ... 0x9f:				/* SETcc */
			return direct ? gpr_bit(rm, true, rex) : 0;
		case 0xa4: case 0xa5: case 0xab: case 0xac: case 0xad: case 0xb3: case 0xbb:
			return direct ? 1u << rm : 0;		/* SHLD, SHRD, BTS, BTR, BTC */
		case 0xba:					/* /4 BT reads */
			return ((modrm >> 3) & 7) == 4 || !direct ? 0 : 1u << rm;
		case 0xc8 ... 0xcf:				/* BSWAP */
			return 1u << opreg;
		default:
			return ALL_GPRS;
		}
	}
	if (op < 0x40 && (op & 7) <= 5) {		/* ADD..CMP: CMP (38-3D) only reads */
		if (op >= 0x38)
			return 0;
		return (op & 7) >= 4 ? 1u : (op & 7) >= 2 ? gpr_bit(reg, byte, rex) : to_rm;
	}
	switch (op) {
	case 0x40 ... 0x4f:				/* INC, DEC (outside 64-bit mode) */
		return 1u << (op & 7);
	case 0x50 ... 0x57: case 0x68: case 0x6a:	/* PUSH */
		return 1u << 4;
	case 0x58 ... 0x5f:				/* POP */
		return 1u << 4 | 1u << opreg;
	case 0x63: case 0x69: case 0x6b: case 0x8b: case 0x8d:
		return 1u << reg;			/* MOVSXD, IMUL, MOV, LEA */
	case 0x8a:
		return gpr_bit(reg, true, rex);
	case 0x80: case 0x81: case 0x83:		/* /7 CMP reads */
		return ((modrm >> 3) & 7) == 7 ? 0 : direct ? gpr_bit(rm, op == 0x80, rex) : 0;
	case 0x84: case 0x85: case 0xa2: case 0xa3: case 0xa8: case 0xa9:	/* TEST, stores */
	case 0xf5: case 0xf8: case 0xf9: case 0xfc: case 0xfd:			/* flags */
		return 0;
	case 0x86: case 0x87: case 0x88: case 0x89:	/* XCHG (both), MOV */
		return to_rm | (op <= 0x87 ? gpr_bit(reg, byte, rex) : 0);
	case 0x90:					/* NOP; with REX.B XCHG R8, RAX */
		return rex & 1 ? 1u | 1u << 8 : 0;
	case 0x91 ... 0x97:				/* XCHG r, RAX */
		return 1u | 1u << opreg;
	case 0x98: case 0xa0: case 0xa1:		/* CBW, MOV AL/eAX, moffs */
		return 1u;
	case 0x99:					/* CWD: rDX */
		return 1u << 2;
	case 0xb0 ... 0xb7:
		return gpr_bit(opreg, true, rex);
	case 0xb8 ... 0xbf:
		return 1u << opreg;
	case 0xc0: case 0xc1: case 0xc6: case 0xc7: case 0xd0 ... 0xd3:	/* shifts, MOV imm */
		return to_rm;
	case 0xf6: case 0xf7:				/* TEST, NOT, NEG; MUL..IDIV: rAX, rDX */
		return ((modrm >> 3) & 7) <= 1 ? 0 : ((modrm >> 3) & 7) <= 3 ? to_rm : 1u | 1u << 2;
	case 0xfe: case 0xff:				/* INC, DEC; FF /6 PUSH */
		return ((modrm >> 3) & 7) == 6 ? 1u << 4 : to_rm;
	default:					/* string instructions */
		return ALL_GPRS;
	}
}

/*
 * The length of the plain instruction at b (0: not one a block may hold); *writes: it may
 * write memory, so the block ends after it (a store could change the code that follows);
 * *stack: bytes it pops off the stack (POP r), or -1 when it may change RSP otherwise (any
 * register operand numbered 4, whatever REX makes of it: a RET after it is left to the stepper);
 * *regs, unless regs is NULL: the general registers it may write (gpr_writes()).
 */
static unsigned plain_len(const uint8_t *b, unsigned avail, enum insn_mode mode, bool *writes,
			  int *stack, uint32_t *regs)
{
	unsigned pos = 0, map = 1, osize = mode == INSN_MODE_16 ? 2 : 4;
	unsigned asize = mode == INSN_MODE_64 ? 8 : mode == INSN_MODE_32 ? 4 : 2;
	bool rep = false, rex_w = false, rex_b = false, write_rm;
	unsigned rex = 0;
	uint16_t f;
	uint8_t op, modrm = 0;

	if (avail > INSN_MAX_LEN)
		avail = INSN_MAX_LEN;
	for (;; pos++) {
		if (pos >= avail)
			return 0;
		op = b[pos];
		if (op == 0x66)
			osize = mode == INSN_MODE_16 ? 4 : 2;
		else if (op == 0x67)
			asize = mode == INSN_MODE_64 ? 4 : mode == INSN_MODE_32 ? 2 : 4;
		else if (op == 0xf2 || op == 0xf3)
			rep = true;
		else if (op != 0x26 && op != 0x2e && op != 0x36 && op != 0x3e && op != 0x64 &&
			 op != 0x65)
			break;
	}
	/* REX must come last (SDM Vol. 2A 2.2.1); W makes operands 64-bit. */
	if (mode == INSN_MODE_64 && (op & 0xf0) == 0x40) {
		rex = op;
		rex_w = op & 8;
		rex_b = op & 1;
		if (++pos >= avail)
			return 0;
		op = b[pos];
		if ((op & 0xf0) == 0x40)
			return 0;
	}
	if (op == 0x0f) {
		if (++pos >= avail)
			return 0;
		op = b[pos];
		map = 2;
	}
	pos++;
	f = map == 1 ? map1[op] : map2[op];
	if (!(f & P_OK) || ((f & P_NO64) && mode == INSN_MODE_64) ||
	    ((f & P_ONLY64) && mode != INSN_MODE_64))
		return 0;
	/* F2/F3 only as REP of a string instruction, or PAUSE (F3 90); elsewhere they make
	 * another instruction (POPCNT, TZCNT, SSE). */
	if (rep && !(f & (P_STRING | P_SSE)) && !(map == 1 && op == 0x90))
		return 0;
	write_rm = f & P_WRITE_RM;
	if (f & P_MODRM) {
		bool ok;

		if (pos >= avail)
			return 0;
		modrm = b[pos++];
		if ((f & P_GROUP) && !group_ok(map, op, (modrm >> 3) & 7, &write_rm))
			return 0;
		/* FF /6 is PUSH r/m: it writes the stack whatever its operand. */
		if (map == 1 && op == 0xff && ((modrm >> 3) & 7) == 6)
			f |= P_WRITE;
		if ((f & P_MEMONLY) && (modrm >> 6) == 3)
			return 0;
		/* 0F AE with memory is FXSAVE, LDMXCSR, CLFLUSH...: not plain. */
		if (map == 2 && op == 0xae && (modrm >> 6) != 3)
			return 0;
		pos += memory_bytes(b + pos, avail - pos, modrm, asize, &ok);
		if (!ok)
			return 0;
	}
	if (f & P_IMM8)
		pos += 1;
	if (f & P_IMMZ)
		pos += osize == 2 ? 2 : 4;
	if (f & P_IMMV)
		pos += rex_w ? 8 : osize;
	if (f & P_MOFFS)
		pos += asize;
	/* F6/F7 /0 /1 (TEST) carry an immediate; the other members none. */
	if ((op == 0xf6 || op == 0xf7) && map == 1 && ((modrm >> 3) & 7) <= 1)
		pos += op == 0xf6 ? 1 : osize == 2 ? 2 : 4;
	if (pos > avail)
		return 0;
	*writes = (f & P_WRITE) || (write_rm && (modrm >> 6) != 3);
	if (regs)
		*regs = gpr_writes(map, op, f, modrm, rex);
	*stack = 0;
	if (map == 1 && op >= 0x58 && op <= 0x5f)
		*stack = (op & 7) == 4 && !rex_b ? -1 : osize == 2 ? 2 : mode == INSN_MODE_64 ? 8 : 4;
	else if ((f & P_MODRM) ? ((modrm >> 3) & 7) == 4 || (modrm & 0xc7) == 0xc4 :
				 reg_in_opcode(map, op) && (op & 7) == 4)
		*stack = -1;
	return pos;
}

/*
 * A direct branch at b with no prefix (prefixes change operand size or mean BND/hints):
 * its length, and its targets relative to the next instruction. 0: not one.
 */
static unsigned direct_branch(const uint8_t *b, unsigned avail, int64_t rel[2], unsigned *n)
{
	if (avail >= 2 && ((b[0] >= 0x70 && b[0] <= 0x7f) || (b[0] >= 0xe0 && b[0] <= 0xe3) ||
			   b[0] == 0xeb)) {
		rel[0] = 0;
		rel[1] = (int8_t)b[1];
		*n = b[0] == 0xeb ? 1 : 2;
		if (*n == 1)
			rel[0] = rel[1];
		return 2;
	}
	if (avail >= 5 && (b[0] == 0xe8 || b[0] == 0xe9)) {
		rel[0] = (int32_t)(b[1] | b[2] << 8 | b[3] << 16 | (uint32_t)b[4] << 24);
		*n = 1;
		return 5;
	}
	if (avail >= 6 && b[0] == 0x0f && b[1] >= 0x80 && b[1] <= 0x8f) {
		rel[0] = 0;
		rel[1] = (int32_t)(b[2] | b[3] << 8 | b[4] << 16 | (uint32_t)b[5] << 24);
		*n = 2;
		return 6;
	}
	return 0;
}

/* A near RET (C3, REPZ RET, C2 iw): its length, 0 if not one. */
static unsigned near_ret(const uint8_t *b, unsigned avail)
{
	if (avail >= 1 && b[0] == 0xc3)
		return 1;
	if (avail >= 2 && b[0] == 0xf3 && b[1] == 0xc3)
		return 2;
	return avail >= 3 && b[0] == 0xc2 ? 3 : 0;
}

/* DEC r (FF /1 with a register; 48+r outside 64-bit mode) at b: true, with r and its width. */
static bool dec_reg(const uint8_t *b, enum insn_mode mode, uint8_t *r, uint8_t *bits)
{
	unsigned rex = 0;

	*bits = 32;
	if (*b == 0x66) {
		*bits = 16;
		b++;
	}
	if (mode == INSN_MODE_64 && (*b & 0xf0) == 0x40) {
		rex = *b++;
		if (rex & 8)
			*bits = 64;
	}
	if (mode != INSN_MODE_64 && *b >= 0x48 && *b <= 0x4f) {
		*r = *b & 7;
		return true;
	}
	*r = (b[1] & 7) | (rex & 1) << 3;
	return b[0] == 0xff && (b[1] & 0xf8) == 0xc8;
}

/* The registers instructions [from, to) of block b may write (bytes: the block's code). */
static uint32_t block_writes(const uint8_t *bytes, enum insn_mode mode, const struct step_block *b,
			     unsigned from, unsigned to)
{
	uint32_t all = 0, regs;
	bool writes;
	int stack;

	for (unsigned i = from; i < to; i++) {
		plain_len(bytes + b->off[i], b->off[i + 1] - b->off[i], mode, &writes, &stack, &regs);
		all |= regs;
	}
	return all;
}

/*
 * The block just decoded ends in a conditional branch back to its start: is it a counted loop?
 * LOOP (E2, no prefix: RCX, or ECX outside 64-bit mode) with no other instruction writing
 * RCX; or JNZ right after DEC r, with no other instruction writing r. Only loops pay for
 * finding out which registers their instructions write.
 */
static void counted_loop(const uint8_t *bytes, enum insn_mode mode, struct step_block *b)
{
	const uint8_t *br = bytes + b->off[b->n - 1];

	if (br[0] == 0xe2) {
		b->ctr = 1;
		b->ctr_bits = mode == INSN_MODE_64 ? 64 : 32;
		b->counted = !(block_writes(bytes, mode, b, 0, b->n - 1) & 1u << 1);
	} else if ((br[0] == 0x75 || (br[0] == 0x0f && br[1] == 0x85)) && b->n >= 2) {
		b->counted = dec_reg(bytes + b->off[b->n - 2], mode, &b->ctr, &b->ctr_bits) &&
			     b->ctr != 4 &&
			     !(block_writes(bytes, mode, b, 0, b->n - 2) & 1u << b->ctr);
		b->dec_jnz = b->counted;
	}
}

unsigned step_block_decode(const uint8_t *bytes, unsigned len, uint64_t rip, enum insn_mode mode,
			   unsigned max, bool stores, struct step_block *b)
{
	unsigned pos = 0, l, popped = 0;
	bool writes, rsp_known = true;
	int stack;

	b->start = rip;
	b->n = 0;
	b->branch = false;
	b->loops = false;
	b->ret = b->call = false;
	b->ntargets = 0;
	b->counted = b->dec_jnz = b->whole = false;
	b->store_end = 0;
	b->reads_tsc = false;
	b->off[0] = 0;
	if (max > BLOCK_MAX)
		max = BLOCK_MAX;
	while (b->n < max && (stores || !b->store_end)) {
		int64_t rel[2];
		unsigned nt;

		l = plain_len(bytes + pos, len - pos, mode, &writes, &stack, NULL);
		if (!l && mode == INSN_MODE_64 && rsp_known && !b->store_end &&
		    (l = near_ret(bytes + pos, len - pos))) {
			/* Its target is on the stack, which no instruction before it wrote. */
			b->ret = true;
			b->ret_pop = popped;
			b->ntargets = 1;
			b->branch = true;
			b->off[++b->n] = (uint16_t)(pos + l);
			return b->n;
		}
		if (!l) {
			/* 16-bit code wraps IP at 64 KiB: its targets are left to the stepper. */
			l = mode == INSN_MODE_16 ? 0 : direct_branch(bytes + pos, len - pos, rel, &nt);
			if (!l)
				break;
			for (unsigned t = 0; t < nt; t++) {
				uint64_t to = rip + pos + l + (uint64_t)rel[t];

				if (mode == INSN_MODE_32)
					to &= 0xFFFFFFFFu;
				/*
				 * A target inside the block would make an exit there ambiguous;
				 * its start is told apart by RF (step_block_retired).
				 */
				if (to > rip && to <= rip + pos)
					return b->n;
				if (to == rip)
					b->loops = true;
				b->target[t] = to;
			}
			b->ntargets = nt;
			b->branch = true;
			b->call = bytes[pos] == 0xe8;
			b->off[++b->n] = (uint16_t)(pos + l);
			if (nt == 2 && b->target[1] == rip && b->target[0] != rip)
				counted_loop(bytes, mode, b);
			return b->n;
		}
		/* RDTSC (0F 31) has no operand bytes: any instruction ending so is taken for one. */
		if (l >= 2 && bytes[pos + l - 2] == 0x0f && bytes[pos + l - 1] == 0x31)
			b->reads_tsc = true;
		pos += l;
		b->off[++b->n] = (uint16_t)pos;
		if (writes && !b->store_end)
			b->store_end = b->n;
		if (stack < 0)
			rsp_known = false;
		else
			popped += (unsigned)stack;
	}
	return b->n;
}

unsigned step_block_cut(struct step_block *b, unsigned max)
{
	if (b->n > max) {
		b->n = max;
		b->branch = b->loops = b->ret = b->call = b->counted = b->dec_jnz = false;
		b->ntargets = 0;
	}
	return b->n;
}

bool step_block_ret_target(struct step_block *b, uint64_t to)
{
	uint64_t last = b->start + b->off[b->n - 1];

	if (to > b->start && to <= last) {
		b->n--;
		b->branch = b->ret = false;
		b->ntargets = 0;
		return false;
	}
	b->loops = to == b->start;
	b->target[0] = to;
	return true;
}

bool step_block_whole(struct step_block *b, uint64_t ctr, uint64_t insn_room, uint64_t branch_room)
{
	uint64_t mask = b->ctr_bits == 64 ? ~0ull : (1ull << b->ctr_bits) - 1, turns = ctr & mask;

	/* Turns: LOOP and DEC;JNZ leave at 0, after as many turns as r held (0: 2^bits). */
	b->whole = b->counted && turns >= 2 && turns <= branch_room && turns <= insn_room / b->n;
	b->ctr_entry = ctr & mask;
	return b->whole;
}

/* A whole loop stopped at rip: the turns r counted, and the instructions of the one under way. */
static bool whole_retired(const struct step_block *b, uint64_t rip, uint64_t ctr, uint64_t *insns,
			  uint64_t *branches)
{
	uint64_t mask = b->ctr_bits == 64 ? ~0ull : (1ull << b->ctr_bits) - 1;
	uint64_t done = (b->ctr_entry - ctr) & mask;
	unsigned i;

	if (done > b->ctr_entry)
		return false;
	if (rip == b->target[0]) {
		*insns = done * b->n;
		*branches = done;
		return done == b->ctr_entry;
	}
	for (i = 0; i < b->n && rip != b->start + b->off[i]; i++)
		;
	if (i == b->n)
		return false;
	/* At the JNZ, this turn's DEC has retired: r counts the turn under way too. */
	if (b->dec_jnz && i == b->n - 1) {
		if (!done)
			return false;
		done--;
	}
	*insns = done * b->n + i;
	*branches = done;
	return true;
}

bool step_block_retired(const struct step_block *b, uint64_t rip, bool rf, uint64_t ctr,
			uint64_t *insns, uint64_t *branches)
{
	unsigned straight = b->branch ? b->n - 1 : b->n;

	*branches = 0;
	*insns = 0;
	if (b->whole)
		return whole_retired(b, rip, ctr, insns, branches);
	/*
	 * Entered with RF set (a looping block), RF still set at its start: no instruction
	 * completed, which would have cleared it (SDM Vol. 3A 18.3.1.1). A fault there after a
	 * turn cannot be: the breakpoint, a higher priority (SDM Vol. 3A 6.9), would have come.
	 */
	if (rip == b->start && rf)
		return true;
	if (b->branch && (rip == b->target[0] || (b->ntargets == 2 && rip == b->target[1]))) {
		*insns = b->n;
		*branches = 1;
		return true;
	}
	for (; *insns <= straight; (*insns)++) {
		uint64_t at = b->start + b->off[*insns];

		if (rip == at)
			return true;
		if (rip < at)
			break;
	}
	if (*insns > straight)
		*insns = straight;
	return false;
}
