/* Fuzz target for pmu/soft_classify.c: soft_classify() of any bytes, every length, every mode. */
#include "pmu/soft_classify.c"
#include "tests/fuzz/fakes.h"

#define BYTES_MAX	(SOFT_MAX_LEN + 2)	/* a little past the longest instruction */

/* Field by field: padding is not part of the result. */
static bool same_insn(const struct soft_insn *a, const struct soft_insn *b)
{
	return a->known == b->known && a->branch == b->branch &&
	       a->pushes_flags == b->pushes_flags && a->loads_flags == b->loads_flags &&
	       a->flags_to_r11 == b->flags_to_r11 && a->clears_tf == b->clears_tf &&
	       a->target == b->target && a->vector == b->vector && a->halts == b->halts &&
	       a->exits == b->exits && a->ss_shadow == b->ss_shadow && a->ss_len == b->ss_len;
}

static void check_insn(const struct soft_insn *s, size_t n)
{
	static const struct soft_insn unknown = { .known = false };

	if (!s->known) {
		FZ_CHECK(same_insn(s, &unknown), "an unknown instruction has fields set");
		return;
	}
	FZ_CHECK(s->ss_len <= n && s->ss_len <= SOFT_MAX_LEN, "ss_len %u of %zu", s->ss_len, n);
	FZ_CHECK(s->ss_shadow || !s->ss_len, "ss_len without a shadow");
	FZ_CHECK(s->clears_tf == (s->target != SOFT_TGT_NONE), "clears_tf and target disagree");
	FZ_CHECK(s->target == SOFT_TGT_IDT || !s->vector, "vector without the IDT");
	FZ_CHECK(!s->flags_to_r11 || s->target == SOFT_TGT_LSTAR, "R11 without SYSCALL");
}

/*
 * Input: the instruction bytes. Each mode classifies every prefix of them: a prefix that
 * classifies must classify the same with more bytes after it.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = { data, size };
	size_t n;
	uint8_t *bytes = fz_bytes(&in, BYTES_MAX, &n);

	for (int mode = SOFT_MODE_16; mode <= SOFT_MODE_64; mode++) {
		struct soft_insn full, part;
		bool known = soft_classify(bytes, (unsigned)n, mode, &full);

		check_insn(&full, n);
		for (size_t k = 0; k < n; k++) {
			fz_limit(bytes, n, k);
			if (!soft_classify(bytes, (unsigned)k, mode, &part))
				continue;
			check_insn(&part, k);
			FZ_CHECK(known && same_insn(&part, &full),
				 "mode %d: %zu bytes classify, %zu bytes differently", mode, k, n);
		}
		fz_limit(bytes, n, n);
	}
	fz_free(bytes, n);
	return 0;
}
