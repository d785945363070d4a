/* Decoding the guest MOV-family instruction behind an MMIO EPT violation, and applying its data. */
#include "hv/insn.h"

/* REX bits that matter here; X and B only pick index/base registers (SDM Vol. 2A 2.2.1.2). */
#define REX_W	0x8
#define REX_R	0x4

/* The instruction bytes and how far decoding has consumed them. */
struct reader {
	const uint8_t *bytes;
	unsigned avail;		/* bytes the caller fetched, capped at INSN_MAX_LEN */
	unsigned pos;
};

/* Consume count bytes, failing rather than reading past what was fetched. */
static enum insn_err skip(struct reader *r, unsigned count)
{
	if (r->pos + count > INSN_MAX_LEN)
		return INSN_ERR_TOO_LONG;
	if (r->pos + count > r->avail)
		return INSN_ERR_TRUNCATED;
	r->pos += count;
	return INSN_OK;
}

/* Consume a little-endian field of count bytes (at most 8). */
static enum insn_err take(struct reader *r, unsigned count, uint64_t *v)
{
	enum insn_err err = skip(r, count);
	const uint8_t *field;

	*v = 0;
	if (err)
		return err;
	field = r->bytes + r->pos - count;
	while (count--)
		*v = *v << 8 | field[count];
	return INSN_OK;
}

/*
 * Consume the SIB byte and displacement that a memory ModRM implies; only the length matters
 * (SDM Vol. 2A 2.1.5, Tables 2-1 to 2-3). REX.B does not change the rm/base special cases
 * (SDM Vol. 2A 2.2.1.2), and RIP-relative is the mod=00 rm=101 disp32 form (2.2.1.6).
 */
static enum insn_err skip_memory_operand(struct reader *r, uint8_t modrm, unsigned addr_size)
{
	unsigned mod = modrm >> 6, rm = modrm & 7;
	uint64_t sib;
	enum insn_err err;

	if (mod == 3)
		return INSN_ERR_NOT_MEMORY;
	if (addr_size == 2) {
		if (mod == 0 && rm == 6)
			return skip(r, 2);
		return skip(r, mod == 1 ? 1 : mod == 2 ? 2 : 0);
	}
	if (rm == 4) {
		err = take(r, 1, &sib);
		if (err)
			return err;
		if (mod == 0 && (sib & 7) == 5)
			return skip(r, 4);
	} else if (mod == 0 && rm == 5) {
		return skip(r, 4);
	}
	return skip(r, mod == 1 ? 1 : mod == 2 ? 4 : 0);
}

/* The prefixes that change how the rest of the instruction decodes. */
struct prefixes {
	bool opsize;		/* 66 */
	bool addrsize;		/* 67 */
	uint8_t rex;		/* the whole REX byte, 0 when absent */
};

/* Consume legacy prefixes and REX (SDM Vol. 2A 2.1.1, 2.2.1), then the opcode byte. */
static enum insn_err take_opcode(struct reader *r, enum insn_mode mode, struct prefixes *p,
				 uint64_t *op)
{
	enum insn_err err;

	for (;;) {
		err = take(r, 1, op);
		if (err)
			return err;
		/* 40-4F are INC/DEC outside 64-bit mode. */
		if (mode == INSN_MODE_64 && (*op & 0xf0) == 0x40) {
			p->rex = *op;
			continue;
		}
		switch (*op) {
		case 0xf0:
			return INSN_ERR_LOCK;
		case 0xf2:
		case 0xf3:
			return INSN_ERR_REP;
		case 0x66:
			p->opsize = true;
			break;
		case 0x67:
			p->addrsize = true;
			break;
		/* Segment overrides only change the address, which the EPT exit already gives. */
		case 0x26:
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0x64:
		case 0x65:
			break;
		default:
			return INSN_OK;
		}
		/* A REX not immediately before the opcode is ignored (SDM Vol. 2A 2.2.1). */
		p->rex = 0;
	}
}

/* Operand and address sizes in bytes from the mode and prefixes (SDM Vol. 1 3.6.1, Table 3-4). */
static unsigned operand_size(enum insn_mode mode, bool opsize_pfx, uint8_t rex)
{
	if (rex & REX_W)
		return 8;
	if (mode == INSN_MODE_16)
		return opsize_pfx ? 4 : 2;
	return opsize_pfx ? 2 : 4;
}

static unsigned address_size(enum insn_mode mode, bool addrsize_pfx)
{
	if (mode == INSN_MODE_64)
		return addrsize_pfx ? 4 : 8;
	if (mode == INSN_MODE_32)
		return addrsize_pfx ? 2 : 4;
	return addrsize_pfx ? 4 : 2;
}

/*
 * Fill in the access an opcode makes, or fail for opcodes that are not MOV/MOVZX/MOVSX with a
 * memory operand (SDM Vol. 2B MOV, MOVZX, MOVSX). *out starts zeroed, so reg is 0 (AL/eAX) for the
 * moffs forms. Sets *modrm_form for opcodes with a ModRM byte.
 */
static enum insn_err classify(struct reader *r, uint8_t op, unsigned opsize, struct insn_mmio *out,
			      bool *modrm_form)
{
	uint64_t op2;
	enum insn_err err;

	*modrm_form = true;
	switch (op) {
	case 0x88:	/* MOV r/m8, r8 */
	case 0x89:	/* MOV r/m, r */
	case 0x8a:	/* MOV r8, r/m8 */
	case 0x8b:	/* MOV r, r/m */
		out->write = !(op & 2);
		out->size = op & 1 ? opsize : 1;
		out->reg_size = out->size;
		return INSN_OK;
	case 0xc6:	/* MOV r/m8, imm8 */
	case 0xc7:	/* MOV r/m, imm */
		out->write = true;
		out->src = INSN_SRC_IMM;
		out->size = op & 1 ? opsize : 1;
		out->reg_size = out->size;
		return INSN_OK;
	case 0xa0:	/* MOV AL, moffs8 */
	case 0xa1:	/* MOV eAX, moffs */
	case 0xa2:	/* MOV moffs8, AL */
	case 0xa3:	/* MOV moffs, eAX */
		*modrm_form = false;
		out->write = op & 2;
		out->size = op & 1 ? opsize : 1;
		out->reg_size = out->size;
		return INSN_OK;
	case 0x0f:
		err = take(r, 1, &op2);
		if (err)
			return err;
		if (op2 != 0xb6 && op2 != 0xb7 && op2 != 0xbe && op2 != 0xbf)
			return INSN_ERR_OPCODE;
		/* 0F B6/B7 MOVZX, 0F BE/BF MOVSX; bit 0 picks a word source over a byte one. */
		out->write = false;
		out->size = op2 & 1 ? 2 : 1;
		out->reg_size = opsize;
		out->ext = op2 & 8 ? INSN_EXT_SIGN : INSN_EXT_ZERO;
		return INSN_OK;
	default:
		return INSN_ERR_OPCODE;
	}
}

enum insn_err insn_decode_mmio(const uint8_t *bytes, unsigned n, enum insn_mode mode,
			       struct insn_mmio *out)
{
	struct reader r = { bytes, n < INSN_MAX_LEN ? n : INSN_MAX_LEN, 0 };
	struct prefixes p = { false, false, 0 };
	bool modrm_form;
	uint64_t op, modrm, field;
	unsigned addr_size;
	enum insn_err err;

	err = take_opcode(&r, mode, &p, &op);
	if (err)
		return err;
	*out = (struct insn_mmio){ 0 };
	err = classify(&r, op, operand_size(mode, p.opsize, p.rex), out, &modrm_form);
	if (err)
		return err;
	addr_size = address_size(mode, p.addrsize);

	if (!modrm_form) {
		/* moffs is as wide as the address size (SDM Vol. 2B MOV, note on moffs). */
		err = skip(&r, addr_size);
		if (err)
			return err;
		out->len = r.pos;
		return INSN_OK;
	}

	err = take(&r, 1, &modrm);
	if (err)
		return err;
	out->reg = (modrm >> 3 & 7) | (p.rex & REX_R ? 8 : 0);
	err = skip_memory_operand(&r, modrm, addr_size);
	if (err)
		return err;

	if (out->src == INSN_SRC_IMM) {
		/* C6/C7 are MOV only with ModRM.reg = 0 (/0). */
		if (modrm >> 3 & 7)
			return INSN_ERR_OPCODE;
		out->reg = 0;
		/* imm32 sign-extended for 64-bit stores (SDM Vol. 2B MOV, C7 /0 id with REX.W). */
		err = take(&r, out->size < 4 ? out->size : 4, &field);
		if (err)
			return err;
		out->imm = out->size == 8 ? (uint64_t)(int64_t)(int32_t)field : field;
	} else if (out->reg_size == 1 && !p.rex && out->reg >= 4) {
		/* Without any REX, byte registers 4-7 are AH, CH, DH, BH (SDM Vol. 2A 2.2.1.2). */
		out->reg -= 4;
		out->high_byte = true;
	}
	out->len = r.pos;
	return INSN_OK;
}

const char *insn_strerror(enum insn_err err)
{
	switch (err) {
	case INSN_OK:
		return "no error";
	case INSN_ERR_TRUNCATED:
		return "instruction bytes end before the instruction does";
	case INSN_ERR_TOO_LONG:
		return "instruction longer than 15 bytes";
	case INSN_ERR_LOCK:
		return "LOCK prefix on an MMIO access";
	case INSN_ERR_REP:
		return "REP/REPNE prefix (string or SIMD instruction) on an MMIO access";
	case INSN_ERR_OPCODE:
		return "not a MOV, MOVZX or MOVSX to or from memory";
	case INSN_ERR_NOT_MEMORY:
		return "ModRM names a register, not memory";
	}
	return "unknown decode error";
}

/* The low size bytes set. */
static uint64_t size_mask(unsigned size)
{
	return size >= 8 ? ~0ull : (1ull << size * 8) - 1;
}

uint64_t insn_store_value(const struct insn_mmio *in, uint64_t reg_val)
{
	if (in->src == INSN_SRC_IMM)
		return in->imm & size_mask(in->size);
	return (in->high_byte ? reg_val >> 8 : reg_val) & size_mask(in->size);
}

uint64_t insn_load_result(const struct insn_mmio *in, uint64_t old, uint64_t val)
{
	uint64_t v = val & size_mask(in->size);

	if (in->ext == INSN_EXT_SIGN && v >> (in->size * 8 - 1) & 1)
		v |= ~size_mask(in->size);
	v &= size_mask(in->reg_size);
	/*
	 * SDM Vol. 1 3.4.1.1: 32-bit results zero-extend into the 64-bit register, 8- and 16-bit
	 * results leave the other bits alone. Outside 64-bit mode bits 63:32 are undefined, so
	 * zero-extending is right in every mode.
	 */
	if (in->reg_size >= 4)
		return v;
	if (in->high_byte)
		return (old & ~0xff00ull) | v << 8;
	return (old & ~size_mask(in->reg_size)) | v;
}
