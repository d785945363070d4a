/* Unit tests for hv/insn.c: MMIO instruction decoding on encodings taken from the GNU assembler. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/insn.c"

#define M16	INSN_MODE_16
#define M32	INSN_MODE_32
#define M64	INSN_MODE_64

/* The bytes of one instruction and how many there are. */
#define B(...)	.bytes = { __VA_ARGS__ }, .n = sizeof((uint8_t[]){ __VA_ARGS__ })

#define STORE(sz, r)	.write = true, .size = sz, .reg = r, .reg_size = sz
#define STORE_IMM(sz, v) .write = true, .size = sz, .src = INSN_SRC_IMM, .imm = v, .reg_size = sz
#define LOAD(sz, r)	.size = sz, .reg = r, .reg_size = sz
/* MOVZX/MOVSX: sz bytes of memory into a register of rsz bytes. */
#define ZX(sz, r, rsz)	.size = sz, .reg = r, .reg_size = rsz, .ext = INSN_EXT_ZERO
#define SX(sz, r, rsz)	.size = sz, .reg = r, .reg_size = rsz, .ext = INSN_EXT_SIGN

struct enc {
	const char *text;	/* as objdump prints it */
	enum insn_mode mode;
	uint8_t bytes[INSN_MAX_LEN];
	unsigned n;		/* the instruction's length */
	bool write;
	unsigned size;
	enum insn_src src;
	unsigned reg;
	bool high;
	unsigned reg_size;
	enum insn_ext ext;
	uint64_t imm;
};

/* Bytes from `as --64/--32` and `gcc -O2` output run through `objdump -d`. */
static const struct enc encs[] = {
	{ "mov %eax,0x300(%rdx)", M64, B(0x89, 0x82, 0x00, 0x03, 0x00, 0x00), STORE(4, 0) },
	{ "movl $0x100,0xfee000f0 (addr32, SIB no base)", M64,
	  B(0x67, 0xc7, 0x04, 0x25, 0xf0, 0x00, 0xe0, 0xfe, 0x00, 0x01, 0x00, 0x00),
	  STORE_IMM(4, 0x100) },
	{ "movl $0x0,(%rax) (gcc APIC EOI)", M64, B(0xc7, 0x00, 0x00, 0x00, 0x00, 0x00),
	  STORE_IMM(4, 0) },
	{ "mov 0x20(%rax),%ecx", M64, B(0x8b, 0x48, 0x20), LOAD(4, 1) },
	{ "movzbl (%rdi),%eax", M64, B(0x0f, 0xb6, 0x07), ZX(1, 0, 4) },
	{ "movzwl 0x10(%rsi),%r9d", M64, B(0x44, 0x0f, 0xb7, 0x4e, 0x10),
	  ZX(2, 9, 4) },
	{ "movsbl -0x1(%rbx),%edx", M64, B(0x0f, 0xbe, 0x53, 0xff), SX(1, 2, 4) },
	{ "movswq 0x8(%rcx),%r12", M64, B(0x4c, 0x0f, 0xbf, 0x61, 0x08),
	  SX(2, 12, 8) },
	{ "movzbw (%rax),%ax", M64, B(0x66, 0x0f, 0xb6, 0x00), ZX(1, 0, 2) },
	{ "mov %ah,(%rcx)", M64, B(0x88, 0x21), STORE(1, 0), .high = true },
	{ "mov %sil,(%rcx)", M64, B(0x40, 0x88, 0x31), STORE(1, 6) },
	{ "mov %bh,0x7f(%rdx)", M64, B(0x88, 0x7a, 0x7f), STORE(1, 3), .high = true },
	{ "mov (%rax),%bh", M64, B(0x8a, 0x38), LOAD(1, 3), .high = true },
	{ "mov (%rax),%dil", M64, B(0x40, 0x8a, 0x38), LOAD(1, 7) },
	{ "mov %r8,(%r9)", M64, B(0x4d, 0x89, 0x01), STORE(8, 8) },
	{ "mov %r15d,0x12345678(%r13,%r14,8)", M64,
	  B(0x47, 0x89, 0xbc, 0xf5, 0x78, 0x56, 0x34, 0x12), STORE(4, 15) },
	{ "mov 0x0(%rip),%r10", M64, B(0x4c, 0x8b, 0x15, 0x00, 0x00, 0x00, 0x00), LOAD(8, 10) },
	{ "mov %eax,0x100(%rip)", M64, B(0x89, 0x05, 0x00, 0x01, 0x00, 0x00), STORE(4, 0) },
	{ "mov %ax,0x20(%rdx)", M64, B(0x66, 0x89, 0x42, 0x20), STORE(2, 0) },
	{ "movw $0xbeef,0xb0(%rax)", M64, B(0x66, 0xc7, 0x80, 0xb0, 0x00, 0x00, 0x00, 0xef, 0xbe),
	  STORE_IMM(2, 0xbeef) },
	{ "movq $0xfffffffffffffffe,0x40(%r11)", M64,
	  B(0x49, 0xc7, 0x43, 0x40, 0xfe, 0xff, 0xff, 0xff), STORE_IMM(8, 0xfffffffffffffffeull) },
	{ "movq $0x7fffffff,(%rsp)", M64, B(0x48, 0xc7, 0x04, 0x24, 0xff, 0xff, 0xff, 0x7f),
	  STORE_IMM(8, 0x7fffffff) },
	{ "movb $0x5a,0x0(%rbp)", M64, B(0xc6, 0x45, 0x00, 0x5a), STORE_IMM(1, 0x5a) },
	{ "mov (%rsp,%rax,4),%esi", M64, B(0x8b, 0x34, 0x84), LOAD(4, 6) },
	{ "mov 0x10(,%rbx,2),%edi", M64, B(0x8b, 0x3c, 0x5d, 0x10, 0x00, 0x00, 0x00), LOAD(4, 7) },
	{ "mov %fs:(%rax),%eax", M64, B(0x64, 0x8b, 0x00), LOAD(4, 0) },
	{ "mov (%eax),%eax", M64, B(0x67, 0x8b, 0x00), LOAD(4, 0) },
	{ "mov %eax,-0x11ffd00(%ebx,%ecx,1)", M64,
	  B(0x67, 0x89, 0x84, 0x0b, 0x00, 0x03, 0xe0, 0xfe), STORE(4, 0) },
	{ "movabs 0xfee00000,%rax", M64,
	  B(0x48, 0xa1, 0x00, 0x00, 0xe0, 0xfe, 0x00, 0x00, 0x00, 0x00), LOAD(8, 0) },
	{ "movabs %eax,0xfee00310 (gcc APIC ICR)", M64,
	  B(0xa3, 0x10, 0x03, 0xe0, 0xfe, 0x00, 0x00, 0x00, 0x00), STORE(4, 0) },
	{ "movabs 0xfee00020,%al", M64, B(0xa0, 0x20, 0x00, 0xe0, 0xfe, 0x00, 0x00, 0x00, 0x00),
	  LOAD(1, 0) },
	{ "addr32 mov 0xfee00300,%eax", M64, B(0x67, 0xa1, 0x00, 0x03, 0xe0, 0xfe), LOAD(4, 0) },
	{ "addr32 mov %al,0xfee00300", M64, B(0x67, 0xa2, 0x00, 0x03, 0xe0, 0xfe), STORE(1, 0) },
	{ "mov %r11w,(%rbx)", M64, B(0x66, 0x44, 0x89, 0x1b), STORE(2, 11) },
	{ "mov 0x200(%rdi),%rax", M64, B(0x48, 0x8b, 0x87, 0x00, 0x02, 0x00, 0x00), LOAD(8, 0) },
	/* REX then 66: the REX does not precede the opcode, so it is ignored: %cx, not %r9w. */
	{ "9 cs prefixes + mov %eax,0x300(%rdx): 15 bytes", M64,
	  B(0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
	    0x89, 0x82, 0x00, 0x03, 0x00, 0x00), STORE(4, 0) },
	{ "rex.R data16 mov %cx,(%rax)", M64, B(0x44, 0x66, 0x89, 0x08), STORE(2, 1) },

	{ "movl $0x100,0xfee000f0", M32,
	  B(0xc7, 0x05, 0xf0, 0x00, 0xe0, 0xfe, 0x00, 0x01, 0x00, 0x00), STORE_IMM(4, 0x100) },
	{ "mov %eax,0x300(%edx)", M32, B(0x89, 0x82, 0x00, 0x03, 0x00, 0x00), STORE(4, 0) },
	{ "mov 0x20(%eax),%ecx", M32, B(0x8b, 0x48, 0x20), LOAD(4, 1) },
	{ "mov %eax,0xfee00300", M32, B(0xa3, 0x00, 0x03, 0xe0, 0xfe), STORE(4, 0) },
	{ "mov 0xfee00020,%eax", M32, B(0xa1, 0x20, 0x00, 0xe0, 0xfe), LOAD(4, 0) },
	{ "mov 0xfee00030,%ebx", M32, B(0x8b, 0x1d, 0x30, 0x00, 0xe0, 0xfe), LOAD(4, 3) },
	{ "movzbl 0x3(%esi),%eax", M32, B(0x0f, 0xb6, 0x46, 0x03), ZX(1, 0, 4) },
	{ "movzwl 0x6(%edi),%edx", M32, B(0x0f, 0xb7, 0x57, 0x06), ZX(2, 2, 4) },
	{ "movsbw (%ebx),%cx", M32, B(0x66, 0x0f, 0xbe, 0x0b), SX(1, 1, 2) },
	{ "mov %dx,0x10(%ecx)", M32, B(0x66, 0x89, 0x51, 0x10), STORE(2, 2) },
	{ "movw $0x1234,(%edi)", M32, B(0x66, 0xc7, 0x07, 0x34, 0x12), STORE_IMM(2, 0x1234) },
	{ "mov %dh,(%esi)", M32, B(0x88, 0x36), STORE(1, 2), .high = true },
	{ "movb $0x7,0x400(%esi,%edi,2)", M32,
	  B(0xc6, 0x84, 0x7e, 0x00, 0x04, 0x00, 0x00, 0x07), STORE_IMM(1, 7) },
	{ "mov 0x8(%esp),%ebp", M32, B(0x8b, 0x6c, 0x24, 0x08), LOAD(4, 5) },
	{ "mov (%si),%eax", M32, B(0x67, 0x8b, 0x04), LOAD(4, 0) },
	{ "mov 0x1234,%ax", M32, B(0x66, 0xa1, 0x34, 0x12, 0x00, 0x00), LOAD(2, 0) },

	{ "mov %eax,(%bx,%si)", M16, B(0x66, 0x89, 0x00), STORE(4, 0) },
	{ "mov 0x20(%bp),%cx", M16, B(0x8b, 0x4e, 0x20), LOAD(2, 1) },
	{ "mov 0x0(%bp),%dx", M16, B(0x8b, 0x56, 0x00), LOAD(2, 2) },
	{ "mov 0x1234(%di),%ax", M16, B(0x8b, 0x85, 0x34, 0x12), LOAD(2, 0) },
	{ "mov 0x5678,%bx", M16, B(0x8b, 0x1e, 0x78, 0x56), LOAD(2, 3) },
	{ "movw $0xabcd,0x10(%bx)", M16, B(0xc7, 0x47, 0x10, 0xcd, 0xab), STORE_IMM(2, 0xabcd) },
	{ "movb $0x1,(%si)", M16, B(0xc6, 0x04, 0x01), STORE_IMM(1, 1) },
	{ "movl $0x100,0xf0(%bx)", M16, B(0x66, 0xc7, 0x87, 0xf0, 0x00, 0x00, 0x01, 0x00, 0x00),
	  STORE_IMM(4, 0x100) },
	{ "mov %eax,-0x11ffd00(%ebx)", M16, B(0x67, 0x66, 0x89, 0x83, 0x00, 0x03, 0xe0, 0xfe),
	  STORE(4, 0) },
	{ "mov 0x300,%ax", M16, B(0xa1, 0x00, 0x03), LOAD(2, 0) },
	{ "movzbw (%bx),%ax", M16, B(0x0f, 0xb6, 0x07), ZX(1, 0, 2) },
};

static bool same(const struct insn_mmio *got, const struct enc *e)
{
	return got->len == e->n && got->write == e->write && got->size == e->size &&
	       got->src == e->src && got->reg == e->reg && got->high_byte == e->high &&
	       got->reg_size == e->reg_size && got->ext == e->ext && got->imm == e->imm;
}

/* Decode exactly the k bytes in a heap block of that size, so ASan catches any read past them. */
static enum insn_err decode_exact(const uint8_t *bytes, unsigned k, enum insn_mode mode,
				  struct insn_mmio *out)
{
	uint8_t *copy = malloc(k ? k : 1);
	enum insn_err err;

	memcpy(copy, bytes, k);
	err = insn_decode_mmio(copy, k, mode, out);
	free(copy);
	return err;
}

static void test_encodings(void)
{
	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		uint8_t padded[INSN_MAX_LEN + 1];
		struct insn_mmio got;
		enum insn_err err;
		unsigned k, bad = 0;

		err = decode_exact(e->bytes, e->n, e->mode, &got);
		check(err == INSN_OK && same(&got, e),
		      "%s: len %u write %d size %u src %d reg %u high %d reg_size %u ext %d "
		      "imm %#llx (err %d)", e->text, got.len, got.write, got.size, got.src, got.reg,
		      got.high_byte, got.reg_size, got.ext, (unsigned long long)got.imm, err);

		/* Bytes past the instruction (as fetched from a page) change nothing. */
		memset(padded, 0x0f, sizeof(padded));
		memcpy(padded, e->bytes, e->n);
		err = decode_exact(padded, sizeof(padded), e->mode, &got);
		check(err == INSN_OK && same(&got, e), "%s: same with trailing bytes", e->text);

		for (k = 0; k < e->n; k++)
			if (decode_exact(e->bytes, k, e->mode, &got) != INSN_ERR_TRUNCATED)
				bad++;
		check(bad == 0, "%s: every truncation (0..%u bytes) is an error (%u were not)",
		      e->text, e->n - 1, bad);
	}
}

struct bad {
	const char *text;
	enum insn_mode mode;
	uint8_t bytes[INSN_MAX_LEN + 1];
	unsigned n;
	enum insn_err err;
};

static const struct bad bads[] = {
	{ "lock incl (%rax)", M64, B(0xf0, 0xff, 0x00), INSN_ERR_LOCK },
	{ "lock mov %eax,(%rdx)", M64, B(0xf0, 0x89, 0x02), INSN_ERR_LOCK },
	{ "movsl", M64, B(0xa5), INSN_ERR_OPCODE },
	{ "rep movsb", M64, B(0xf3, 0xa4), INSN_ERR_REP },
	{ "movdqu (%rax),%xmm0", M64, B(0xf3, 0x0f, 0x6f, 0x00), INSN_ERR_REP },
	{ "add %eax,(%rax)", M64, B(0x01, 0x00), INSN_ERR_OPCODE },
	{ "vmovdqu (%rax),%ymm0", M64, B(0xc5, 0xfe, 0x6f, 0x00), INSN_ERR_OPCODE },
	{ "movq (%rax),%mm0", M64, B(0x0f, 0x6f, 0x00), INSN_ERR_OPCODE },
	{ "mov %eax,%ebx", M64, B(0x89, 0xc3), INSN_ERR_NOT_MEMORY },
	{ "movzbl %al,%eax", M64, B(0x0f, 0xb6, 0xc0), INSN_ERR_NOT_MEMORY },
	{ "C7 /1 (not MOV)", M64, B(0xc7, 0x08, 0x00, 0x00, 0x00, 0x00), INSN_ERR_OPCODE },
	{ "xbegin (C7 F8)", M64, B(0xc7, 0xf8, 0x00, 0x00, 0x00, 0x00), INSN_ERR_NOT_MEMORY },
	{ "dec %eax; mov (%eax),%eax in 32-bit mode", M32, B(0x48, 0x8b, 0x00), INSN_ERR_OPCODE },
	{ "14 cs prefixes + mov %eax,(%rax): 16 bytes", M64,
	  B(0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
	    0x89, 0x00), INSN_ERR_TOO_LONG },
	{ "15 prefixes, no opcode", M64,
	  B(0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e,
	    0x2e, 0x89), INSN_ERR_TOO_LONG },
};

static void test_errors(void)
{
	for (size_t i = 0; i < sizeof(bads) / sizeof(bads[0]); i++) {
		const struct bad *b = &bads[i];
		struct insn_mmio got;
		enum insn_err err = decode_exact(b->bytes, b->n, b->mode, &got);

		check(err == b->err, "%s: error %d (%s)", b->text, err, insn_strerror(err));
	}
}

/* Decode one encoding that the table above already checked. */
static struct insn_mmio decoded(const char *text)
{
	struct insn_mmio in = { 0 };

	for (size_t i = 0; i < sizeof(encs) / sizeof(encs[0]); i++)
		if (!strcmp(encs[i].text, text))
			insn_decode_mmio(encs[i].bytes, encs[i].n, encs[i].mode, &in);
	return in;
}

static void test_load_result(void)
{
	const uint64_t old = 0x1111222233334444ull;
	static const struct {
		const char *text;
		uint64_t val, want;
	} loads[] = {
		{ "mov 0x20(%rax),%ecx", 0x99999999deadbeefull, 0xdeadbeefull },
		{ "mov 0x200(%rdi),%rax", 0x0123456789abcdefull, 0x0123456789abcdefull },
		{ "mov 0x20(%bp),%cx", 0xffffbeefull, 0x111122223333beefull },
		{ "mov (%rax),%bh", 0xffabull, 0x111122223333ab44ull },
		{ "mov (%rax),%dil", 0xffabull, 0x11112222333344abull },
		{ "movabs 0xfee00020,%al", 0x80ull, 0x1111222233334480ull },
		{ "movzbl (%rdi),%eax", 0xff80ull, 0x80ull },
		{ "movzbw (%rax),%ax", 0xff80ull, 0x1111222233330080ull },
		{ "movsbl -0x1(%rbx),%edx", 0x80ull, 0xffffff80ull },
		{ "movsbl -0x1(%rbx),%edx", 0x7full, 0x7full },
		{ "movsbw (%ebx),%cx", 0x80ull, 0x111122223333ff80ull },
		{ "movswq 0x8(%rcx),%r12", 0x8000ull, 0xffffffffffff8000ull },
	};

	for (size_t i = 0; i < sizeof(loads) / sizeof(loads[0]); i++) {
		struct insn_mmio in = decoded(loads[i].text);
		uint64_t got = insn_load_result(&in, old, loads[i].val);

		check(got == loads[i].want, "load %#llx by %s into %#llx gives %#llx (want %#llx)",
		      (unsigned long long)loads[i].val, loads[i].text, (unsigned long long)old,
		      (unsigned long long)got, (unsigned long long)loads[i].want);
	}
}

static void test_store_value(void)
{
	static const struct {
		const char *text;
		uint64_t reg_val, want;
	} stores[] = {
		{ "mov %eax,0x300(%rdx)", 0xffffffff12345678ull, 0x12345678ull },
		{ "mov %ah,(%rcx)", 0xaabbccddull, 0xccull },
		{ "mov %sil,(%rcx)", 0xaabbccddull, 0xddull },
		{ "mov %ax,0x20(%rdx)", 0xaabbccddull, 0xccddull },
		{ "mov %r8,(%r9)", 0x8877665544332211ull, 0x8877665544332211ull },
		{ "movq $0xfffffffffffffffe,0x40(%r11)", 0x5555, 0xfffffffffffffffeull },
		{ "movw $0xbeef,0xb0(%rax)", 0x5555, 0xbeefull },
	};

	for (size_t i = 0; i < sizeof(stores) / sizeof(stores[0]); i++) {
		struct insn_mmio in = decoded(stores[i].text);
		uint64_t got = insn_store_value(&in, stores[i].reg_val);

		check(got == stores[i].want, "%s with register %#llx stores %#llx (want %#llx)",
		      stores[i].text, (unsigned long long)stores[i].reg_val,
		      (unsigned long long)got, (unsigned long long)stores[i].want);
	}
}

static void test_strerror(void)
{
	const char *seen[INSN_ERR_NOT_MEMORY + 1];
	bool distinct = true;

	for (int e = INSN_OK; e <= INSN_ERR_NOT_MEMORY; e++) {
		seen[e] = insn_strerror(e);
		for (int j = 0; j < e; j++)
			distinct &= strcmp(seen[j], seen[e]) != 0;
		distinct &= strcmp(seen[e], insn_strerror(-1)) != 0;
	}
	check(distinct, "every error has its own message");
	check(strstr(insn_strerror(INSN_ERR_LOCK), "LOCK") != NULL, "LOCK error says LOCK");
}

int main(void)
{
	test_encodings();
	test_errors();
	test_load_result();
	test_store_value();
	test_strerror();
	return unit_summary();
}
