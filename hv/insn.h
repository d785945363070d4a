/* Decoding the guest MOV-family instruction behind an MMIO EPT violation, and applying its data. */
#ifndef PERFVISOR_HV_INSN_H
#define PERFVISOR_HV_INSN_H

#include <stdbool.h>
#include <stdint.h>

/* Longest legal instruction; longer ones raise #GP (SDM Vol. 2A 2.3.11). */
#define INSN_MAX_LEN	15

/* Code-segment mode of the guest at the faulting RIP (64-bit, or CS.D set / clear). */
enum insn_mode {
	INSN_MODE_16,
	INSN_MODE_32,
	INSN_MODE_64,
};

enum insn_err {
	INSN_OK = 0,
	INSN_ERR_TRUNCATED,	/* the bytes given end before the instruction does */
	INSN_ERR_TOO_LONG,	/* more than INSN_MAX_LEN bytes */
	INSN_ERR_LOCK,		/* LOCK prefix */
	INSN_ERR_REP,		/* REP/REPNE prefix: string or SIMD instruction */
	INSN_ERR_OPCODE,	/* not MOV, MOVZX or MOVSX */
	INSN_ERR_NOT_MEMORY,	/* ModRM names a register: no memory access */
};

enum insn_src {
	INSN_SRC_REG,		/* a store of a register, or a load */
	INSN_SRC_IMM,		/* a store of an immediate */
};

enum insn_ext {
	INSN_EXT_NONE,		/* MOV: memory and register are the same width */
	INSN_EXT_ZERO,		/* MOVZX */
	INSN_EXT_SIGN,		/* MOVSX */
};

/*
 * One decoded memory access. The address is not decoded: the EPT violation gives it.
 * Register numbers follow the encoding: RAX=0 RCX=1 RDX=2 RBX=3 RSP=4 RBP=5 RSI=6 RDI=7 R8..R15.
 */
struct insn_mmio {
	unsigned len;		/* instruction length, to advance RIP */
	bool write;		/* store to memory; else a load from memory into reg */
	unsigned size;		/* bytes accessed in memory: 1, 2, 4 or 8 */
	enum insn_src src;	/* where a store's data comes from */
	unsigned reg;		/* GPR stored from (INSN_SRC_REG) or loaded into */
	bool high_byte;		/* reg (0..3) means AH/CH/DH/BH: bits 15:8 of that GPR */
	unsigned reg_size;	/* width of the register operand: 1, 2, 4 or 8 */
	enum insn_ext ext;	/* how a load widens size bytes to reg_size */
	uint64_t imm;		/* INSN_SRC_IMM: the value stored, size bytes wide */
};

/*
 * Decode the instruction in bytes[0..n) (fetched from guest RIP; bytes past INSN_MAX_LEN are
 * never looked at). Never reads past n. Fills *out and returns INSN_OK, or returns an error and
 * leaves *out unspecified.
 */
enum insn_err insn_decode_mmio(const uint8_t *bytes, unsigned n, enum insn_mode mode,
			       struct insn_mmio *out);

/* Words for an error, for the message that kills the domain or reflects the fault. */
const char *insn_strerror(enum insn_err err);

/* The size bytes a store writes (zero-extended), given the value of GPR in->reg. */
uint64_t insn_store_value(const struct insn_mmio *in, uint64_t reg_val);

/* The new value of GPR in->reg, whose old value is old, after a load that read val. */
uint64_t insn_load_result(const struct insn_mmio *in, uint64_t old, uint64_t val);

#endif
