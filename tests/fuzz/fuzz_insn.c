/* Fuzz target for hv/insn.c: insn_decode_mmio() of any bytes in every mode, and its helpers. */
#include "hv/insn.c"
#include "tests/fuzz/fakes.h"

#define BYTES_MAX	(INSN_MAX_LEN + 2)	/* a little past the longest instruction */

/* Field by field: padding is not part of the result. */
static bool same_access(const struct insn_mmio *a, const struct insn_mmio *b)
{
	return a->len == b->len && a->write == b->write && a->size == b->size &&
	       a->src == b->src && a->reg == b->reg && a->high_byte == b->high_byte &&
	       a->reg_size == b->reg_size && a->ext == b->ext && a->imm == b->imm;
}

static bool is_size(unsigned s)
{
	return s == 1 || s == 2 || s == 4 || s == 8;
}

static void check_access(const struct insn_mmio *m, size_t n, enum insn_mode mode, uint64_t reg,
			 uint64_t val)
{
	uint64_t mask = m->size == 8 ? ~0ull : (1ull << 8 * m->size) - 1, res;

	FZ_CHECK(m->len >= 1 && m->len <= n && m->len <= INSN_MAX_LEN, "length %u of %zu", m->len,
		 n);
	FZ_CHECK(is_size(m->size) && is_size(m->reg_size) && m->size <= m->reg_size,
		 "sizes %u, %u", m->size, m->reg_size);
	FZ_CHECK(m->reg < (mode == INSN_MODE_64 ? 16u : 8u), "register %u", m->reg);
	FZ_CHECK(!m->high_byte || (m->reg < 4 && m->reg_size == 1), "high byte of %u", m->reg);
	FZ_CHECK(m->src == INSN_SRC_REG || (m->write && !m->reg), "immediate load");
	FZ_CHECK(m->ext == INSN_EXT_NONE || !m->write, "extending store");
	FZ_CHECK(m->src == INSN_SRC_IMM || !m->imm, "stray immediate");
	FZ_CHECK(!(insn_store_value(m, reg) & ~mask), "store wider than %u", m->size);
	res = insn_load_result(m, reg, val);
	/* 8- and 16-bit loads keep the register's other bits; 32- and 64-bit ones replace it. */
	if (m->high_byte)
		FZ_CHECK(!((res ^ reg) & ~0xff00ull), "AH-style load");
	else if (m->reg_size < 4)
		FZ_CHECK(!((res ^ reg) >> 8 * m->reg_size), "%u-byte load", m->reg_size);
	else if (m->reg_size == 4)
		FZ_CHECK(!(res >> 32), "32-bit load not zero-extended");
}

/*
 * Input: two 8-byte values (a register and loaded data), then the instruction bytes. Each mode
 * decodes every prefix of them: a prefix that decodes must decode the same with more after it.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	uint64_t reg = fz_u64(&in), val = fz_u64(&in);
	size_t n;
	uint8_t *bytes = fz_bytes(&in, BYTES_MAX, &n);

	for (int mode = INSN_MODE_16; mode <= INSN_MODE_64; mode++) {
		struct insn_mmio full, part;
		enum insn_err err = insn_decode_mmio(bytes, (unsigned)n, mode, &full);

		FZ_CHECK(insn_strerror(err) && err <= INSN_ERR_NOT_MEMORY, "error %d", err);
		FZ_CHECK(err != INSN_ERR_TRUNCATED || n < INSN_MAX_LEN, "truncated at %zu", n);
		if (err == INSN_OK)
			check_access(&full, n, mode, reg, val);
		for (size_t k = 0; k < n; k++) {
			fz_limit(bytes, n, k);
			if (insn_decode_mmio(bytes, (unsigned)k, mode, &part) != INSN_OK)
				continue;
			FZ_CHECK(err == INSN_OK && same_access(&part, &full),
				 "mode %d: %zu bytes decode, %zu bytes differently", mode, k, n);
		}
		fz_limit(bytes, n, n);
	}
	fz_free(bytes, n);
	return 0;
}
