/* Unit tests for pmu/soft_classify.c: stepping classes of encodings from the GNU assembler. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "pmu/soft_classify.c"

#define M16	SOFT_MODE_16
#define M32	SOFT_MODE_32
#define M64	SOFT_MODE_64

/* The bytes of one instruction and how many there are. */
#define B(...)	.bytes = { __VA_ARGS__ }, .n = sizeof((uint8_t[]){ __VA_ARGS__ })

/* The classification wanted once `need` bytes are there. */
#define PLAIN			.want = { .known = true }
#define W(...)			.want = { .known = true, __VA_ARGS__ }
#define BR			.branch = true
#define IDT(v)			.clears_tf = true, .target = SOFT_TGT_IDT, .vector = (v)
#define SHADOW(len)		.ss_shadow = true, .ss_len = (len)
/* Raises #UD (or cannot be) whatever the length: known stays false. */
#define BAD			.want = { .known = false }

struct enc {
	const char *text;	/* as objdump prints it */
	enum soft_mode mode;
	uint8_t bytes[16];
	unsigned n;		/* the instruction's length */
	unsigned need;		/* bytes the classifier must have: fewer give known=false */
	struct soft_insn want;
};

#define P14	0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66
#define S13	0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e, 0x2e

/* Bytes from `as --64`, `as --32` and `.code16` run through `objdump -d`. */
static const struct enc encs[] = {
	/* 64-bit mode: conditional and near branches */
	{ "jne .+2", M64, B(0x75, 0x00), 1, W(BR) },
	{ "jo .+2 (first Jcc rel8)", M64, B(0x70, 0x00), 1, W(BR) },
	{ "jg .+2 (last Jcc rel8)", M64, B(0x7f, 0x00), 1, W(BR) },
	{ "jo rel32 (first Jcc rel32)", M64, B(0x0f, 0x80, 0xfa, 0x00, 0x00, 0x00), 2, W(BR) },
	{ "jg rel32 (last Jcc rel32)", M64, B(0x0f, 0x8f, 0xfa, 0x00, 0x00, 0x00), 2, W(BR) },
	{ "jne rel32", M64, B(0x0f, 0x85, 0xfa, 0x0f, 0x00, 0x00), 2, W(BR) },
	{ "jno rel32 (0F 81, not 0F 01)", M64, B(0x0f, 0x81, 0xfa, 0x00, 0x00, 0x00), 2, W(BR) },
	{ "jmp rel32", M64, B(0xe9, 0xfb, 0x0f, 0x00, 0x00), 1, W(BR) },
	{ "jmp rel8", M64, B(0xeb, 0x00), 1, W(BR) },
	{ "call rel32", M64, B(0xe8, 0xfb, 0x0f, 0x00, 0x00), 1, W(BR) },
	{ "bnd jmp rel32", M64, B(0xf2, 0xe9, 0xfa, 0x0f, 0x00, 0x00), 2, W(BR) },
	{ "bnd call rel32", M64, B(0xf2, 0xe8, 0xfa, 0x0f, 0x00, 0x00), 2, W(BR) },
	{ "loop", M64, B(0xe2, 0x00), 1, W(BR) },
	{ "loope", M64, B(0xe1, 0x00), 1, W(BR) },
	{ "loopne", M64, B(0xe0, 0x00), 1, W(BR) },
	{ "jrcxz", M64, B(0xe3, 0x00), 1, W(BR) },
	{ "jecxz (addr32)", M64, B(0x67, 0xe3, 0xff), 2, W(BR) },
	/* 64-bit mode: group 5, every ModRM.reg, register and memory forms */
	{ "inc %eax (FF /0)", M64, B(0xff, 0xc0), 2, PLAIN },
	{ "incq (%rax) (FF /0)", M64, B(0x48, 0xff, 0x00), 3, PLAIN },
	{ "dec %rax (FF /1)", M64, B(0x48, 0xff, 0xc8), 3, PLAIN },
	{ "call *%rax (FF /2)", M64, B(0xff, 0xd0), 2, W(BR) },
	{ "call *0x10(%rax,%rbx,4)", M64, B(0xff, 0x54, 0x98, 0x10), 2, W(BR) },
	{ "call *%r11", M64, B(0x41, 0xff, 0xd3), 3, W(BR) },
	{ "lcall *(%rax) (FF /3)", M64, B(0xff, 0x18), 2, W(BR) },
	{ "rex.W lcall *(%rax)", M64, B(0x48, 0xff, 0x18), 3, W(BR) },
	{ "FF /3 on a register", M64, B(0xff, 0xd8), 0, BAD },
	{ "jmp *%rax (FF /4)", M64, B(0xff, 0xe0), 2, W(BR) },
	{ "jmp *0x12345678(%rip)", M64, B(0xff, 0x25, 0x78, 0x56, 0x34, 0x12), 2, W(BR) },
	{ "ljmp *(%rax) (FF /5)", M64, B(0xff, 0x28), 2, W(BR) },
	{ "FF /5 on a register", M64, B(0xff, 0xe8), 0, BAD },
	{ "push 0x8(%rsp) (FF /6)", M64, B(0xff, 0x74, 0x24, 0x08), 2, PLAIN },
	{ "FF /7 (memory)", M64, B(0xff, 0x38), 0, BAD },
	{ "FF /7 (register)", M64, B(0xff, 0xf8), 0, BAD },
	/* 64-bit mode: returns, with prefixes */
	{ "ret", M64, B(0xc3), 1, W(BR) },
	{ "ret $0x8", M64, B(0xc2, 0x08, 0x00), 1, W(BR) },
	{ "repz ret", M64, B(0xf3, 0xc3), 2, W(BR) },
	/* REP string instructions: one retirement after the last iteration's trap */
	{ "rep movsb", M64, B(0xf3, 0xa4), 2, W(.rep_string = true) },
	{ "rep stos %rax", M64, B(0xf3, 0x48, 0xab), 3, W(.rep_string = true) },
	{ "repne scasb", M64, B(0xf2, 0xae), 2, W(.rep_string = true) },
	{ "rep insb (exits: I/O)", M64, B(0xf3, 0x6c), 2, W(.rep_string = true) },
	{ "rep outsw", M32, B(0x66, 0xf3, 0x6f), 3, W(.rep_string = true) },
	{ "movsb (no REP: one step)", M64, B(0xa4), 1, PLAIN },
	{ "rep nop (pause)", M64, B(0xf3, 0x90), 2, PLAIN },
	{ "rep lea: not a string op", M64, B(0xf3, 0x48, 0x8d, 0x00), 3, PLAIN },
	{ "bnd ret", M64, B(0xf2, 0xc3), 2, W(BR) },
	{ "retw", M64, B(0x66, 0xc3), 2, W(BR) },
	{ "rex ret", M64, B(0x40, 0xc3), 2, W(BR) },
	{ "rex.W then 66 then ret", M64, B(0x48, 0x66, 0xc3), 3, W(BR) },
	{ "lret", M64, B(0xcb), 1, W(BR) },
	{ "lretq", M64, B(0x48, 0xcb), 2, W(BR) },
	{ "lret $0x10", M64, B(0xca, 0x10, 0x00), 1, W(BR) },
	/* 64-bit mode: interrupts and their returns */
	{ "iret", M64, B(0xcf), 1, W(BR, .loads_flags = true) },
	{ "iretq", M64, B(0x48, 0xcf), 2, W(BR, .loads_flags = true) },
	{ "iretw", M64, B(0x66, 0xcf), 2, W(BR, .loads_flags = true) },
	{ "int $0x80", M64, B(0xcd, 0x80), 2, W(BR, IDT(0x80)) },
	{ "int3", M64, B(0xcc), 1, W(BR, IDT(3)) },
	{ "int1", M64, B(0xf1), 1, W(BR, IDT(1)) },
	{ "into (invalid in 64-bit mode)", M64, B(0xce), 0, BAD },
	/* 64-bit mode: fast system calls */
	{ "syscall", M64, B(0x0f, 0x05), 2,
	  W(BR, .flags_to_r11 = true, .clears_tf = true, .target = SOFT_TGT_LSTAR) },
	{ "sysretl", M64, B(0x0f, 0x07), 2, W(BR, .loads_flags = true) },
	{ "sysretq", M64, B(0x48, 0x0f, 0x07), 3, W(BR, .loads_flags = true) },
	{ "sysenter", M64, B(0x0f, 0x34), 2, W(BR) },
	{ "sysexitl", M64, B(0x0f, 0x35), 2, W(BR) },
	{ "sysexitq", M64, B(0x48, 0x0f, 0x35), 3, W(BR) },
	/* 64-bit mode: far pointers are invalid */
	{ "9A (invalid in 64-bit mode)", M64, B(0x9a, 0x78, 0x56, 0x34, 0x12, 0x10, 0x00), 0, BAD },
	{ "EA (invalid in 64-bit mode)", M64, B(0xea, 0x78, 0x56, 0x34, 0x12, 0x10, 0x00), 0, BAD },
	/* 64-bit mode: 0F 01 forms and other instructions that exit */
	{ "vmcall", M64, B(0x0f, 0x01, 0xc1), 3, W(.exits = true) },
	{ "vmlaunch", M64, B(0x0f, 0x01, 0xc2), 3, W(.exits = true) },
	{ "vmresume", M64, B(0x0f, 0x01, 0xc3), 3, W(.exits = true) },
	{ "vmxoff", M64, B(0x0f, 0x01, 0xc4), 3, W(.exits = true) },
	{ "xsetbv", M64, B(0x0f, 0x01, 0xd1), 3, W(.exits = true) },
	{ "sgdt (%rax)", M64, B(0x0f, 0x01, 0x00), 3, PLAIN },
	{ "sidt (%rax)", M64, B(0x0f, 0x01, 0x08), 3, PLAIN },
	{ "lgdt (%rax)", M64, B(0x0f, 0x01, 0x10), 3, PLAIN },
	{ "swapgs", M64, B(0x0f, 0x01, 0xf8), 3, PLAIN },
	{ "rdtscp", M64, B(0x0f, 0x01, 0xf9), 3, PLAIN },
	{ "cpuid", M64, B(0x0f, 0xa2), 2, W(.exits = true) },
	{ "invd", M64, B(0x0f, 0x08), 2, W(.exits = true) },
	{ "getsec", M64, B(0x0f, 0x37), 2, W(.exits = true) },
	/* 64-bit mode: flags, HLT, SS */
	{ "pushf", M64, B(0x9c), 1, W(.pushes_flags = true) },
	{ "pushfw", M64, B(0x66, 0x9c), 2, W(.pushes_flags = true) },
	{ "popf", M64, B(0x9d), 1, W(.loads_flags = true) },
	{ "popfw", M64, B(0x66, 0x9d), 2, W(.loads_flags = true) },
	{ "hlt", M64, B(0xf4), 1, W(.halts = true) },
	{ "sti", M64, B(0xfb), 1, W(.sti = true) },
	{ "cli", M64, B(0xfa), 1, PLAIN },
	{ "mov %eax,%ss", M64, B(0x8e, 0xd0), 2, W(SHADOW(2)) },
	{ "mov %r8d,%ss", M64, B(0x41, 0x8e, 0xd0), 3, W(SHADOW(3)) },
	{ "mov (%rax),%ss", M64, B(0x8e, 0x10), 2, W(SHADOW(0)) },
	{ "mov 0x10(%rax,%rbx,2),%ss", M64, B(0x8e, 0x54, 0x58, 0x10), 2, W(SHADOW(0)) },
	{ "mov %eax,%ds", M64, B(0x8e, 0xd8), 2, PLAIN },
	{ "pop %ss (invalid in 64-bit mode)", M64, B(0x17), 0, BAD },
	/* 64-bit mode: look-alikes that are not branches */
	{ "movb $0x1,(%rax) (C6)", M64, B(0xc6, 0x00, 0x01), 1, PLAIN },
	{ "movl $0x1,(%rax) (C7)", M64, B(0xc7, 0x00, 0x01, 0x00, 0x00, 0x00), 1, PLAIN },
	{ "push %rax", M64, B(0x50), 1, PLAIN },
	{ "nop", M64, B(0x90), 1, PLAIN },
	{ "vzeroupper (VEX C5)", M64, B(0xc5, 0xf8, 0x77), 1, PLAIN },
	{ "lock incl (%rax)", M64, B(0xf0, 0xff, 0x00), 3, PLAIN },
	{ "lock jmp (#UD)", M64, B(0xf0, 0xeb, 0x00), 0, BAD },
	{ "lock ret (#UD)", M64, B(0xf0, 0xc3), 0, BAD },
	/* 15-byte limit (SDM Vol. 2A 2.3.11) */
	{ "14 prefixes + ret (15 bytes)", M64, B(P14, 0xc3), 15, W(BR) },
	{ "15 prefixes + ret (16 bytes)", M64, B(P14, 0x66, 0xc3), 0, BAD },
	{ "13 prefixes + call *%rax (15 bytes)", M64, B(S13, 0xff, 0xd0), 15, W(BR) },
	{ "14 prefixes + call *%rax (16 bytes)", M64, B(S13, 0x2e, 0xff, 0xd0), 0, BAD },

	/* 32-bit mode: 40-4F are INC/DEC, not REX */
	{ "inc %eax; ret", M32, B(0x40, 0xc3), 1, PLAIN },
	{ "dec %eax; syscall", M32, B(0x48, 0x0f, 0x05), 1, PLAIN },
	{ "jne .+2", M32, B(0x75, 0x00), 1, W(BR) },
	{ "jne rel32", M32, B(0x0f, 0x85, 0xfa, 0x0f, 0x00, 0x00), 2, W(BR) },
	{ "jmp rel32", M32, B(0xe9, 0xfb, 0x0f, 0x00, 0x00), 1, W(BR) },
	{ "call rel32", M32, B(0xe8, 0xfb, 0x0f, 0x00, 0x00), 1, W(BR) },
	{ "lcall $0x10,$0x12345678", M32, B(0x9a, 0x78, 0x56, 0x34, 0x12, 0x10, 0x00), 1, W(BR) },
	{ "ljmp $0x10,$0x12345678", M32, B(0xea, 0x78, 0x56, 0x34, 0x12, 0x10, 0x00), 1, W(BR) },
	{ "call *%eax", M32, B(0xff, 0xd0), 2, W(BR) },
	{ "call *0x10(%eax,%ebx,4)", M32, B(0xff, 0x54, 0x98, 0x10), 2, W(BR) },
	{ "lcall *(%eax)", M32, B(0xff, 0x18), 2, W(BR) },
	{ "ljmp *0x8(%ebp)", M32, B(0xff, 0x6d, 0x08), 2, W(BR) },
	{ "jmp *%ecx", M32, B(0xff, 0xe1), 2, W(BR) },
	{ "ret", M32, B(0xc3), 1, W(BR) },
	{ "lret", M32, B(0xcb), 1, W(BR) },
	{ "iret", M32, B(0xcf), 1, W(BR, .loads_flags = true) },
	{ "into", M32, B(0xce), 1, W(BR, IDT(4)) },
	{ "int $0x21", M32, B(0xcd, 0x21), 2, W(BR, IDT(0x21)) },
	{ "int3", M32, B(0xcc), 1, W(BR, IDT(3)) },
	{ "int1", M32, B(0xf1), 1, W(BR, IDT(1)) },
	{ "sysenter", M32, B(0x0f, 0x34), 2, W(BR) },
	{ "sysexit", M32, B(0x0f, 0x35), 2, W(BR) },
	{ "syscall (#UD outside 64-bit mode)", M32, B(0x0f, 0x05), 0, BAD },
	{ "sysret (#UD outside 64-bit mode)", M32, B(0x0f, 0x07), 0, BAD },
	{ "pushf", M32, B(0x9c), 1, W(.pushes_flags = true) },
	{ "popf", M32, B(0x9d), 1, W(.loads_flags = true) },
	{ "pop %ss", M32, B(0x17), 1, W(SHADOW(1)) },
	{ "mov %eax,%ss", M32, B(0x8e, 0xd0), 2, W(SHADOW(2)) },
	{ "mov (%eax),%ss", M32, B(0x8e, 0x10), 2, W(SHADOW(0)) },
	{ "hlt", M32, B(0xf4), 1, W(.halts = true) },
	{ "sti", M32, B(0xfb), 1, W(.sti = true) },
	{ "loop", M32, B(0xe2, 0x00), 1, W(BR) },
	{ "jcx (addr16)", M32, B(0x67, 0xe3, 0xff), 2, W(BR) },
	{ "vmcall", M32, B(0x0f, 0x01, 0xc1), 3, W(.exits = true) },

	/* 16-bit mode */
	{ "jne .+2", M16, B(0x75, 0x00), 1, W(BR) },
	{ "jne rel16", M16, B(0x0f, 0x85, 0xfc, 0x00), 2, W(BR) },
	{ "call rel16", M16, B(0xe8, 0xfd, 0x00), 1, W(BR) },
	{ "lcall $0x10,$0x1234", M16, B(0x9a, 0x34, 0x12, 0x10, 0x00), 1, W(BR) },
	{ "ljmp $0xf000,$0xfff0", M16, B(0xea, 0xf0, 0xff, 0x00, 0xf0), 1, W(BR) },
	{ "call *%ax", M16, B(0xff, 0xd0), 2, W(BR) },
	{ "lcall *(%bx)", M16, B(0xff, 0x1f), 2, W(BR) },
	{ "ljmp *0x10(%bp,%si)", M16, B(0xff, 0x6a, 0x10), 2, W(BR) },
	{ "ret", M16, B(0xc3), 1, W(BR) },
	{ "lret", M16, B(0xcb), 1, W(BR) },
	{ "iret", M16, B(0xcf), 1, W(BR, .loads_flags = true) },
	{ "iretl", M16, B(0x66, 0xcf), 2, W(BR, .loads_flags = true) },
	{ "int $0x10", M16, B(0xcd, 0x10), 2, W(BR, IDT(0x10)) },
	{ "into", M16, B(0xce), 1, W(BR, IDT(4)) },
	{ "pushf", M16, B(0x9c), 1, W(.pushes_flags = true) },
	{ "pushfl", M16, B(0x66, 0x9c), 2, W(.pushes_flags = true) },
	{ "popf", M16, B(0x9d), 1, W(.loads_flags = true) },
	{ "pop %ss", M16, B(0x17), 1, W(SHADOW(1)) },
	{ "mov %ax,%ss", M16, B(0x8e, 0xd0), 2, W(SHADOW(2)) },
	{ "hlt", M16, B(0xf4), 1, W(.halts = true) },
	{ "syscall (#UD outside 64-bit mode)", M16, B(0x0f, 0x05), 0, BAD },
};

static const char *const mode_names[] = { "16", "32", "64" };

/* The first field where two classifications differ, or NULL when they agree. */
static const char *differ(const struct soft_insn *a, const struct soft_insn *b)
{
	if (a->known != b->known)
		return "known";
	if (a->branch != b->branch)
		return "branch";
	if (a->pushes_flags != b->pushes_flags)
		return "pushes_flags";
	if (a->loads_flags != b->loads_flags)
		return "loads_flags";
	if (a->flags_to_r11 != b->flags_to_r11)
		return "flags_to_r11";
	if (a->clears_tf != b->clears_tf)
		return "clears_tf";
	if (a->target != b->target)
		return "target";
	if (a->vector != b->vector)
		return "vector";
	if (a->halts != b->halts)
		return "halts";
	if (a->exits != b->exits)
		return "exits";
	if (a->sti != b->sti)
		return "sti";
	if (a->ss_shadow != b->ss_shadow)
		return "ss_shadow";
	if (a->ss_len != b->ss_len)
		return "ss_len";
	return NULL;
}

/*
 * Classify the first len bytes from a heap buffer of exactly len bytes, so ASan catches any read
 * past n; returns the return value, which must equal out->known.
 */
static bool classify_exact(const struct enc *e, unsigned len, struct soft_insn *out)
{
	uint8_t *buf = malloc(len);
	bool ret;

	memcpy(buf, e->bytes, len < e->n ? len : e->n);
	if (len > e->n)
		memset(buf + e->n, 0xcc, len - e->n);	/* what follows must not matter */
	memset(out, 0x5a, sizeof(*out));		/* every field must be written */
	ret = soft_classify(buf, len, e->mode, out);
	free(buf);
	return ret;
}

/* The whole instruction, and then with trailing bytes: what the table wants. */
static void test_full(const struct enc *e)
{
	struct soft_insn got;
	const char *field = NULL;
	unsigned len;

	for (len = e->n; len <= e->n + 3 && !field; len++) {
		bool ret = classify_exact(e, len, &got);

		field = ret != got.known ? "return value" : differ(&got, &e->want);
	}
	check(!field, "%s-bit %s: classified (%s)", mode_names[e->mode], e->text,
	      field ? field : "all fields");
}

/* Every shorter input: nothing known below need, the full answer from need on. */
static void test_truncated(const struct enc *e)
{
	static const struct soft_insn unknown = { .known = false };
	struct soft_insn got;
	const char *field = NULL;
	unsigned len;

	for (len = 0; len < e->n && !field; len++) {
		bool ret = classify_exact(e, len, &got);
		bool short_of_need = !e->want.known || len < e->need;

		field = ret != got.known ? "return value" :
			differ(&got, short_of_need ? &unknown : &e->want);
	}
	check(!field, "%s-bit %s: truncated (%s%s%u bytes)", mode_names[e->mode], e->text,
	      field ? field : "", field ? " wrong at " : "every length under ",
	      field ? len - 1 : e->n);
}

/* More than 15 bytes are never read, whatever n says (SDM Vol. 2A 2.3.11). */
static void test_fifteen_byte_cap(void)
{
	uint8_t *buf = malloc(SOFT_MAX_LEN);
	struct soft_insn got;
	bool ret;

	memset(buf, 0x66, SOFT_MAX_LEN);
	ret = soft_classify(buf, 1000, SOFT_MODE_64, &got);
	free(buf);
	check(!ret && !got.known, "15 operand-size prefixes, n = 1000: unknown, byte 16 not read");
}

int main(void)
{
	size_t i;

	for (i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		test_full(&encs[i]);
		test_truncated(&encs[i]);
	}
	test_fifteen_byte_cap();
	return unit_summary();
}
