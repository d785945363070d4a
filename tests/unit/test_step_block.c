/* Unit tests for hv/step_block.c: instruction lengths, blocks, where an exit leaves a block. */
#include <string.h>

#include "tests/unit/unit.h"
#include "hv/step_block.c"

/* One instruction from `as` and `objdump -d`: its length, and 0 where no block may hold it. */
struct enc {
	const char *text;
	enum insn_mode mode;
	uint8_t bytes[16];
	unsigned len;
	unsigned plain_len;
};

static const struct enc encs[] = {
	{ "add %eax,(%rbx)", INSN_MODE_64, { 0x01, 0x03 }, 2, 2 },
	{ "add (%rbx,%rcx,4),%eax", INSN_MODE_64, { 0x03, 0x04, 0x8b }, 3, 3 },
	{ "add $0x5,%al", INSN_MODE_64, { 0x04, 0x05 }, 2, 2 },
	{ "add $0x12345,%eax", INSN_MODE_64, { 0x05, 0x45, 0x23, 0x01, 0x00 }, 5, 5 },
	{ "adc %r8,0x10(%rsp)", INSN_MODE_64, { 0x4c, 0x11, 0x44, 0x24, 0x10 }, 5, 5 },
	{ "sbb 0x12345678(%rip),%rcx # 0x12345690", INSN_MODE_64, { 0x48, 0x1b, 0x0d, 0x78, 0x56, 0x34, 0x12 }, 7, 7 },
	{ "and %ax,%bx", INSN_MODE_64, { 0x66, 0x21, 0xc3 }, 3, 3 },
	{ "or $0x11,%bl", INSN_MODE_64, { 0x80, 0xcb, 0x11 }, 3, 3 },
	{ "sub $0x1,%rax", INSN_MODE_64, { 0x48, 0x83, 0xe8, 0x01 }, 4, 4 },
	{ "sub $0x1000,%rax", INSN_MODE_64, { 0x48, 0x2d, 0x00, 0x10, 0x00, 0x00 }, 6, 6 },
	{ "xor %eax,%eax", INSN_MODE_64, { 0x31, 0xc0 }, 2, 2 },
	{ "cmp %eax,(%rax)", INSN_MODE_64, { 0x39, 0x00 }, 2, 2 },
	{ "cmp $0x7,%al", INSN_MODE_64, { 0x3c, 0x07 }, 2, 2 },
	{ "cmpq $0x0,0x8(%rbp)", INSN_MODE_64, { 0x48, 0x83, 0x7d, 0x08, 0x00 }, 5, 5 },
	{ "cmpl $0x10000,-0x4(%rbp,%rax,8)", INSN_MODE_64, { 0x81, 0x7c, 0xc5, 0xfc, 0x00, 0x00, 0x01, 0x00 }, 8, 8 },
	{ "push %rbx", INSN_MODE_64, { 0x53 }, 1, 1 },
	{ "push %r12", INSN_MODE_64, { 0x41, 0x54 }, 2, 2 },
	{ "pop %rbp", INSN_MODE_64, { 0x5d }, 1, 1 },
	{ "pop %r15", INSN_MODE_64, { 0x41, 0x5f }, 2, 2 },
	{ "movslq %eax,%rdx", INSN_MODE_64, { 0x48, 0x63, 0xd0 }, 3, 3 },
	{ "push $0x12345", INSN_MODE_64, { 0x68, 0x45, 0x23, 0x01, 0x00 }, 5, 5 },
	{ "push $0x1", INSN_MODE_64, { 0x6a, 0x01 }, 2, 2 },
	{ "imul $0x1000,%eax,%ecx", INSN_MODE_64, { 0x69, 0xc8, 0x00, 0x10, 0x00, 0x00 }, 6, 6 },
	{ "imul $0x3,(%rdi),%eax", INSN_MODE_64, { 0x6b, 0x07, 0x03 }, 3, 3 },
	{ "addb $0x1,(%rax)", INSN_MODE_64, { 0x80, 0x00, 0x01 }, 3, 3 },
	{ "addl $0x100000,(%rax)", INSN_MODE_64, { 0x81, 0x00, 0x00, 0x00, 0x10, 0x00 }, 6, 6 },
	{ "andl $0xf,0x100(%rsp)", INSN_MODE_64, { 0x83, 0xa4, 0x24, 0x00, 0x01, 0x00, 0x00, 0x0f }, 8, 8 },
	{ "test %eax,%ecx", INSN_MODE_64, { 0x85, 0xc1 }, 2, 2 },
	{ "testb $0x1,(%rdi)", INSN_MODE_64, { 0xf6, 0x07, 0x01 }, 3, 3 },
	{ "xchg %rax,(%rdi)", INSN_MODE_64, { 0x48, 0x87, 0x07 }, 3, 3 },
	{ "mov %rax,(%rdi)", INSN_MODE_64, { 0x48, 0x89, 0x07 }, 3, 3 },
	{ "mov %eax,0x1234(%rdi,%rsi,2)", INSN_MODE_64, { 0x89, 0x84, 0x77, 0x34, 0x12, 0x00, 0x00 }, 7, 7 },
	{ "mov %al,(%rdi)", INSN_MODE_64, { 0x88, 0x07 }, 2, 2 },
	{ "mov (%rdi),%rax", INSN_MODE_64, { 0x48, 0x8b, 0x07 }, 3, 3 },
	{ "mov 0x8(%rsp),%r9", INSN_MODE_64, { 0x4c, 0x8b, 0x4c, 0x24, 0x08 }, 5, 5 },
	{ "lea 0x10(%rip),%rax # 0x98", INSN_MODE_64, { 0x48, 0x8d, 0x05, 0x10, 0x00, 0x00, 0x00 }, 7, 7 },
	{ "lea (%rax,%rbx,8),%rcx", INSN_MODE_64, { 0x48, 0x8d, 0x0c, 0xd8 }, 4, 4 },
	{ "lea 0x7fffffff(,%rbx,8),%rcx", INSN_MODE_64, { 0x48, 0x8d, 0x0c, 0xdd, 0xff, 0xff, 0xff, 0x7f }, 8, 8 },
	{ "nop", INSN_MODE_64, { 0x90 }, 1, 1 },
	{ "pause", INSN_MODE_64, { 0xf3, 0x90 }, 2, 2 },
	{ "xchg %rax,%rbx", INSN_MODE_64, { 0x48, 0x93 }, 2, 2 },
	{ "cltq", INSN_MODE_64, { 0x48, 0x98 }, 2, 2 },
	{ "cqto", INSN_MODE_64, { 0x48, 0x99 }, 2, 2 },
	{ "cwtl", INSN_MODE_64, { 0x98 }, 1, 1 },
	{ "movabs 0x1122334455667788,%al", INSN_MODE_64, { 0xa0, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 9, 9 },
	{ "movabs 0x1122334455667788,%rax", INSN_MODE_64, { 0x48, 0xa1, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 10, 10 },
	{ "movabs %eax,0x1122334455667788", INSN_MODE_64, { 0xa3, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 9, 9 },
	{ "movsb %ds:(%rsi),%es:(%rdi)", INSN_MODE_64, { 0xa4 }, 1, 1 },
	{ "rep movsb %ds:(%rsi),%es:(%rdi)", INSN_MODE_64, { 0xf3, 0xa4 }, 2, 2 },
	{ "rep movsq %ds:(%rsi),%es:(%rdi)", INSN_MODE_64, { 0xf3, 0x48, 0xa5 }, 3, 3 },
	{ "rep stos %al,%es:(%rdi)", INSN_MODE_64, { 0xf3, 0xaa }, 2, 2 },
	{ "stos %rax,%es:(%rdi)", INSN_MODE_64, { 0x48, 0xab }, 2, 2 },
	{ "cmpsb %es:(%rdi),%ds:(%rsi)", INSN_MODE_64, { 0xa6 }, 1, 1 },
	{ "repz cmpsb %es:(%rdi),%ds:(%rsi)", INSN_MODE_64, { 0xf3, 0xa6 }, 2, 2 },
	{ "lods %ds:(%rsi),%al", INSN_MODE_64, { 0xac }, 1, 1 },
	{ "scas %es:(%rdi),%al", INSN_MODE_64, { 0xae }, 1, 1 },
	{ "test $0x1,%al", INSN_MODE_64, { 0xa8, 0x01 }, 2, 2 },
	{ "test $0x1234,%eax", INSN_MODE_64, { 0xa9, 0x34, 0x12, 0x00, 0x00 }, 5, 5 },
	{ "mov $0x1,%bl", INSN_MODE_64, { 0xb3, 0x01 }, 2, 2 },
	{ "mov $0x12345678,%ecx", INSN_MODE_64, { 0xb9, 0x78, 0x56, 0x34, 0x12 }, 5, 5 },
	{ "movabs $0x1122334455667788,%rcx", INSN_MODE_64, { 0x48, 0xb9, 0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11 }, 10, 10 },
	{ "mov $0x1234,%r8d", INSN_MODE_64, { 0x41, 0xb8, 0x34, 0x12, 0x00, 0x00 }, 6, 6 },
	{ "shl $0x3,%eax", INSN_MODE_64, { 0xc1, 0xe0, 0x03 }, 3, 3 },
	{ "shrq $0x3,(%rax)", INSN_MODE_64, { 0x48, 0xc1, 0x28, 0x03 }, 4, 4 },
	{ "sar %cl,%rdx", INSN_MODE_64, { 0x48, 0xd3, 0xfa }, 3, 3 },
	{ "roll (%rdi)", INSN_MODE_64, { 0xd1, 0x07 }, 2, 2 },
	{ "movb $0x1,(%rax)", INSN_MODE_64, { 0xc6, 0x00, 0x01 }, 3, 3 },
	{ "movq $0x1,(%rax)", INSN_MODE_64, { 0x48, 0xc7, 0x00, 0x01, 0x00, 0x00, 0x00 }, 7, 7 },
	{ "movl $0x12345678,0x10(%rbp)", INSN_MODE_64, { 0xc7, 0x45, 0x10, 0x78, 0x56, 0x34, 0x12 }, 7, 7 },
	{ "movw $0x1234,(%rax)", INSN_MODE_64, { 0x66, 0xc7, 0x00, 0x34, 0x12 }, 5, 5 },
	{ "mov $0x1234,%ax", INSN_MODE_64, { 0x66, 0xb8, 0x34, 0x12 }, 4, 4 },
	{ "cmc", INSN_MODE_64, { 0xf5 }, 1, 1 },
	{ "clc", INSN_MODE_64, { 0xf8 }, 1, 1 },
	{ "stc", INSN_MODE_64, { 0xf9 }, 1, 1 },
	{ "cld", INSN_MODE_64, { 0xfc }, 1, 1 },
	{ "std", INSN_MODE_64, { 0xfd }, 1, 1 },
	{ "notl (%rax)", INSN_MODE_64, { 0xf7, 0x10 }, 2, 2 },
	{ "neg %rax", INSN_MODE_64, { 0x48, 0xf7, 0xd8 }, 3, 3 },
	{ "mul %rcx", INSN_MODE_64, { 0x48, 0xf7, 0xe1 }, 3, 3 },
	{ "imul %rcx", INSN_MODE_64, { 0x48, 0xf7, 0xe9 }, 3, 3 },
	{ "div %rcx", INSN_MODE_64, { 0x48, 0xf7, 0xf1 }, 3, 3 },
	{ "idivl (%rdi)", INSN_MODE_64, { 0xf7, 0x3f }, 2, 2 },
	{ "testl $0x12345678,(%rdi)", INSN_MODE_64, { 0xf7, 0x07, 0x78, 0x56, 0x34, 0x12 }, 6, 6 },
	{ "testw $0x1234,(%rdi)", INSN_MODE_64, { 0x66, 0xf7, 0x07, 0x34, 0x12 }, 5, 5 },
	{ "incl (%rax)", INSN_MODE_64, { 0xff, 0x00 }, 2, 2 },
	{ "dec %rcx", INSN_MODE_64, { 0x48, 0xff, 0xc9 }, 3, 3 },
	{ "incb (%rax)", INSN_MODE_64, { 0xfe, 0x00 }, 2, 2 },
	{ "push (%rax)", INSN_MODE_64, { 0xff, 0x30 }, 2, 2 },
	{ "push 0x10(%rsp)", INSN_MODE_64, { 0xff, 0x74, 0x24, 0x10 }, 4, 4 },
	{ "nopl (%rax)", INSN_MODE_64, { 0x0f, 0x1f, 0x00 }, 3, 3 },
	{ "nopw (%rax,%rax,1)", INSN_MODE_64, { 0x66, 0x0f, 0x1f, 0x04, 0x00 }, 5, 5 },
	{ "rdtsc", INSN_MODE_64, { 0x0f, 0x31 }, 2, 2 },
	{ "cmove %eax,%ebx", INSN_MODE_64, { 0x0f, 0x44, 0xd8 }, 3, 3 },
	{ "cmovne (%rdi),%rax", INSN_MODE_64, { 0x48, 0x0f, 0x45, 0x07 }, 4, 4 },
	{ "sete %al", INSN_MODE_64, { 0x0f, 0x94, 0xc0 }, 3, 3 },
	{ "setne (%rdi)", INSN_MODE_64, { 0x0f, 0x95, 0x07 }, 3, 3 },
	{ "bt %eax,%ebx", INSN_MODE_64, { 0x0f, 0xa3, 0xc3 }, 3, 3 },
	{ "bts %eax,(%rdi)", INSN_MODE_64, { 0x0f, 0xab, 0x07 }, 3, 3 },
	{ "btr %rax,%rbx", INSN_MODE_64, { 0x48, 0x0f, 0xb3, 0xc3 }, 4, 4 },
	{ "btc %eax,(%rdi)", INSN_MODE_64, { 0x0f, 0xbb, 0x07 }, 3, 3 },
	{ "shld $0x3,%eax,%ebx", INSN_MODE_64, { 0x0f, 0xa4, 0xc3, 0x03 }, 4, 4 },
	{ "shld %cl,%eax,(%rdi)", INSN_MODE_64, { 0x0f, 0xa5, 0x07 }, 3, 3 },
	{ "shrd $0x3,%eax,(%rdi)", INSN_MODE_64, { 0x0f, 0xac, 0x07, 0x03 }, 4, 4 },
	{ "imul %eax,%ebx", INSN_MODE_64, { 0x0f, 0xaf, 0xd8 }, 3, 3 },
	{ "cmpxchg %eax,(%rdi)", INSN_MODE_64, { 0x0f, 0xb1, 0x07 }, 3, 3 },
	{ "lock cmpxchg %eax,(%rdi)", INSN_MODE_64, { 0xf0, 0x0f, 0xb1, 0x07 }, 4, 0 },
	{ "movzbl (%rdi),%eax", INSN_MODE_64, { 0x0f, 0xb6, 0x07 }, 3, 3 },
	{ "movzwl %ax,%eax", INSN_MODE_64, { 0x0f, 0xb7, 0xc0 }, 3, 3 },
	{ "movsbq %al,%rax", INSN_MODE_64, { 0x48, 0x0f, 0xbe, 0xc0 }, 4, 4 },
	{ "movswl (%rax),%eax", INSN_MODE_64, { 0x0f, 0xbf, 0x00 }, 3, 3 },
	{ "bt $0x3,%eax", INSN_MODE_64, { 0x0f, 0xba, 0xe0, 0x03 }, 4, 4 },
	{ "btsl $0x3,(%rdi)", INSN_MODE_64, { 0x0f, 0xba, 0x2f, 0x03 }, 4, 4 },
	{ "bsf %eax,%ebx", INSN_MODE_64, { 0x0f, 0xbc, 0xd8 }, 3, 3 },
	{ "bsr (%rdi),%rax", INSN_MODE_64, { 0x48, 0x0f, 0xbd, 0x07 }, 4, 4 },
	{ "xadd %eax,(%rdi)", INSN_MODE_64, { 0x0f, 0xc1, 0x07 }, 3, 3 },
	{ "bswap %eax", INSN_MODE_64, { 0x0f, 0xc8 }, 2, 2 },
	{ "bswap %r9", INSN_MODE_64, { 0x49, 0x0f, 0xc9 }, 3, 3 },
	{ "mov %fs:0x28,%rax", INSN_MODE_64, { 0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0x00, 0x00, 0x00 }, 9, 9 },
	{ "mov %gs:(%rax),%eax", INSN_MODE_64, { 0x65, 0x8b, 0x00 }, 3, 3 },
	{ "mov (%eax),%eax", INSN_MODE_64, { 0x67, 0x8b, 0x00 }, 3, 3 },
	{ "mov 0x10(%r13),%eax", INSN_MODE_64, { 0x41, 0x8b, 0x45, 0x10 }, 4, 4 },
	{ "mov (%r12),%eax", INSN_MODE_64, { 0x41, 0x8b, 0x04, 0x24 }, 4, 4 },
	{ "mov 0x0(%rbp),%eax", INSN_MODE_64, { 0x8b, 0x45, 0x00 }, 3, 3 },
	{ "lea 0x0(%r13),%rax", INSN_MODE_64, { 0x49, 0x8d, 0x45, 0x00 }, 4, 4 },
	{ "mov 0x1234,%eax", INSN_MODE_64, { 0x8b, 0x04, 0x25, 0x34, 0x12, 0x00, 0x00 }, 7, 7 },
	{ "pushf", INSN_MODE_64, { 0x9c }, 1, 0 },
	{ "popf", INSN_MODE_64, { 0x9d }, 1, 0 },
	{ "sti", INSN_MODE_64, { 0xfb }, 1, 0 },
	{ "cli", INSN_MODE_64, { 0xfa }, 1, 0 },
	{ "int3", INSN_MODE_64, { 0xcc }, 1, 0 },
	{ "int $0x80", INSN_MODE_64, { 0xcd, 0x80 }, 2, 0 },
	{ "syscall", INSN_MODE_64, { 0x0f, 0x05 }, 2, 0 },
	{ "iretq", INSN_MODE_64, { 0x48, 0xcf }, 2, 0 },
	{ "mov %eax,%ss", INSN_MODE_64, { 0x8e, 0xd0 }, 2, 0 },
	{ "hlt", INSN_MODE_64, { 0xf4 }, 1, 0 },
	{ "cpuid", INSN_MODE_64, { 0x0f, 0xa2 }, 2, 0 },
	{ "in $0x60,%al", INSN_MODE_64, { 0xe4, 0x60 }, 2, 0 },
	{ "out %al,$0x80", INSN_MODE_64, { 0xe6, 0x80 }, 2, 0 },
	{ "popcnt %eax,%ebx", INSN_MODE_64, { 0xf3, 0x0f, 0xb8, 0xd8 }, 4, 4 },
	{ "tzcnt %eax,%ebx", INSN_MODE_64, { 0xf3, 0x0f, 0xbc, 0xd8 }, 4, 4 },
	{ "ud2", INSN_MODE_64, { 0x0f, 0x0b }, 2, 0 },
	{ "call *%rax", INSN_MODE_64, { 0xff, 0xd0 }, 2, 0 },
	{ "ret", INSN_MODE_64, { 0xc3 }, 1, 0 },
	{ "jmp *%rax", INSN_MODE_64, { 0xff, 0xe0 }, 2, 0 },
	{ "movaps %xmm0,%xmm1", INSN_MODE_64, { 0x0f, 0x28, 0xc8 }, 3, 3 },
	{ "vmcall", INSN_MODE_64, { 0x0f, 0x01, 0xc1 }, 3, 0 },
	{ "mov %cr0,%rax", INSN_MODE_64, { 0x0f, 0x20, 0xc0 }, 3, 0 },
	{ "wrmsr", INSN_MODE_64, { 0x0f, 0x30 }, 2, 0 },
	{ "rdmsr", INSN_MODE_64, { 0x0f, 0x32 }, 2, 0 },
	{ "rdpmc", INSN_MODE_64, { 0x0f, 0x33 }, 2, 0 },
	{ "lock incl (%rax)", INSN_MODE_64, { 0xf0, 0xff, 0x00 }, 3, 0 },
	{ "mov %ds,%eax", INSN_MODE_64, { 0x8c, 0xd8 }, 2, 0 },
	{ "inc %eax", INSN_MODE_32, { 0x40 }, 1, 1 },
	{ "dec %ecx", INSN_MODE_32, { 0x49 }, 1, 1 },
	{ "add $0x12345,%eax", INSN_MODE_32, { 0x05, 0x45, 0x23, 0x01, 0x00 }, 5, 5 },
	{ "mov 0x12345678,%eax", INSN_MODE_32, { 0xa1, 0x78, 0x56, 0x34, 0x12 }, 5, 5 },
	{ "mov %eax,(%ebx,%ecx,4)", INSN_MODE_32, { 0x89, 0x04, 0x8b }, 3, 3 },
	{ "mov $0x12345678,%eax", INSN_MODE_32, { 0xb8, 0x78, 0x56, 0x34, 0x12 }, 5, 5 },
	{ "push $0x12345678", INSN_MODE_32, { 0x68, 0x78, 0x56, 0x34, 0x12 }, 5, 5 },
	{ "mov (%bp,%si),%ax", INSN_MODE_32, { 0x67, 0x66, 0x8b, 0x02 }, 4, 4 },
	{ "addr16 mov 0x1234,%eax", INSN_MODE_32, { 0x67, 0xa1, 0x34, 0x12 }, 4, 4 },
	{ "movw $0x1234,(%eax)", INSN_MODE_32, { 0x66, 0xc7, 0x00, 0x34, 0x12 }, 5, 5 },
	{ "lea 0x10(%esp),%eax", INSN_MODE_32, { 0x8d, 0x44, 0x24, 0x10 }, 4, 4 },
	{ "rep stos %eax,%es:(%edi)", INSN_MODE_32, { 0xf3, 0xab }, 2, 2 },
	{ "inc %ax", INSN_MODE_16, { 0x40 }, 1, 1 },
	{ "mov (%bx,%si),%ax", INSN_MODE_16, { 0x8b, 0x00 }, 2, 2 },
	{ "mov 0x1234,%ax", INSN_MODE_16, { 0xa1, 0x34, 0x12 }, 3, 3 },
	{ "mov $0x1234,%ax", INSN_MODE_16, { 0xb8, 0x34, 0x12 }, 3, 3 },
	{ "mov $0x12345678,%eax", INSN_MODE_16, { 0x66, 0xb8, 0x78, 0x56, 0x34, 0x12 }, 6, 6 },
	{ "movw $0x1234,0x10(%bp)", INSN_MODE_16, { 0xc7, 0x46, 0x10, 0x34, 0x12 }, 5, 5 },
	{ "add $0x1234,%ax", INSN_MODE_16, { 0x05, 0x34, 0x12 }, 3, 3 },
	{ "mov (%eax),%eax", INSN_MODE_16, { 0x67, 0x66, 0x8b, 0x00 }, 4, 4 },
	{ "push $0x1234", INSN_MODE_16, { 0x68, 0x34, 0x12 }, 3, 3 },
	{ "rep movsb %ds:(%si),%es:(%di)", INSN_MODE_16, { 0xf3, 0xa4 }, 2, 2 },
	/* SSE/SSE2 (legacy encoding), fences; not VEX, MASKMOVDQU, FXSAVE... */
	{ "addsd %xmm1,%xmm0", INSN_MODE_64, { 0xf2, 0x0f, 0x58, 0xc1 }, 4, 4 },
	{ "mulsd 0x8(%rsp),%xmm2", INSN_MODE_64, { 0xf2, 0x0f, 0x59, 0x54, 0x24, 0x08 }, 6, 6 },
	{ "movsd (%rax),%xmm0", INSN_MODE_64, { 0xf2, 0x0f, 0x10, 0x00 }, 4, 4 },
	{ "movsd %xmm0,(%rax)", INSN_MODE_64, { 0xf2, 0x0f, 0x11, 0x00 }, 4, 4 },
	{ "movups %xmm1,0x10(%rdi)", INSN_MODE_64, { 0x0f, 0x11, 0x4f, 0x10 }, 4, 4 },
	{ "movaps (%rsi),%xmm3", INSN_MODE_64, { 0x0f, 0x28, 0x1e }, 3, 3 },
	{ "pxor %xmm0,%xmm0", INSN_MODE_64, { 0x66, 0x0f, 0xef, 0xc0 }, 4, 4 },
	{ "lfence", INSN_MODE_64, { 0x0f, 0xae, 0xe8 }, 3, 3 },
	{ "mfence", INSN_MODE_64, { 0x0f, 0xae, 0xf0 }, 3, 3 },
	{ "sfence", INSN_MODE_64, { 0x0f, 0xae, 0xf8 }, 3, 3 },
	{ "cvtsi2sd %rax,%xmm0", INSN_MODE_64, { 0xf2, 0x48, 0x0f, 0x2a, 0xc0 }, 5, 5 },
	{ "cvttsd2si %xmm0,%rax", INSN_MODE_64, { 0xf2, 0x48, 0x0f, 0x2c, 0xc0 }, 5, 5 },
	{ "ucomisd %xmm1,%xmm0", INSN_MODE_64, { 0x66, 0x0f, 0x2e, 0xc1 }, 4, 4 },
	{ "pshufd $0x1b,%xmm0,%xmm1", INSN_MODE_64, { 0x66, 0x0f, 0x70, 0xc8, 0x1b }, 5, 5 },
	{ "movq %xmm0,(%rax)", INSN_MODE_64, { 0x66, 0x0f, 0xd6, 0x00 }, 4, 4 },
	{ "movd %xmm0,%eax", INSN_MODE_64, { 0x66, 0x0f, 0x7e, 0xc0 }, 4, 4 },
	{ "movq %rax,%xmm0", INSN_MODE_64, { 0x66, 0x48, 0x0f, 0x6e, 0xc0 }, 5, 5 },
	{ "psrlq $0x3,%xmm0", INSN_MODE_64, { 0x66, 0x0f, 0x73, 0xd0, 0x03 }, 5, 5 },
	{ "cmpltsd %xmm1,%xmm0", INSN_MODE_64, { 0xf2, 0x0f, 0xc2, 0xc1, 0x01 }, 5, 5 },
	{ "shufps $0x44,%xmm1,%xmm0", INSN_MODE_64, { 0x0f, 0xc6, 0xc1, 0x44 }, 4, 4 },
	{ "movdqa %xmm0,(%rax)", INSN_MODE_64, { 0x66, 0x0f, 0x7f, 0x00 }, 4, 4 },
	{ "movdqu (%rax),%xmm8", INSN_MODE_64, { 0xf3, 0x44, 0x0f, 0x6f, 0x00 }, 5, 5 },
	{ "lzcnt %rax,%rbx", INSN_MODE_64, { 0xf3, 0x48, 0x0f, 0xbd, 0xd8 }, 5, 5 },
	{ "maskmovdqu %xmm1,%xmm0", INSN_MODE_64, { 0x66, 0x0f, 0xf7, 0xc1 }, 4, 0 },
	{ "fxsave (%rax)", INSN_MODE_64, { 0x0f, 0xae, 0x00 }, 3, 0 },
	{ "ldmxcsr (%rax)", INSN_MODE_64, { 0x0f, 0xae, 0x10 }, 3, 0 },
	{ "clflush (%rax)", INSN_MODE_64, { 0x0f, 0xae, 0x38 }, 3, 0 },
	{ "vaddps %xmm1,%xmm2,%xmm3", INSN_MODE_64, { 0xc5, 0xe8, 0x58, 0xd9 }, 4, 0 },
	{ "emms", INSN_MODE_64, { 0x0f, 0x77 }, 2, 0 },
};

/* Every encoding: a block takes exactly its length, or leaves it to the stepper. */
static void test_lengths(void)
{
	for (unsigned i = 0; i < sizeof(encs) / sizeof(encs[0]); i++) {
		const struct enc *e = &encs[i];
		bool writes;
		int stack;
		uint32_t regs;
		unsigned got = plain_len(e->bytes, e->len, e->mode, &writes, &stack, &regs);

		check(got == e->plain_len, "%s (mode %d): length %u (want %u)", e->text, e->mode,
		      got, e->plain_len);
		/* One byte short: never a length past what was fetched. */
		if (e->plain_len)
			check(!plain_len(e->bytes, e->len - 1, e->mode, &writes, &stack, &regs),
			      "%s: truncated, not plain", e->text);
	}
}

/* Which plain instructions may write memory, so that the block ends after them. */
static void test_writes(void)
{
	static const struct {
		const char *text;
		uint8_t bytes[8];
		unsigned n;
		bool writes;
	} w[] = {
		{ "add %eax,(%rbx)", { 0x01, 0x03 }, 2, true },
		{ "add (%rbx),%eax", { 0x03, 0x03 }, 2, false },
		{ "add %eax,%ebx", { 0x01, 0xc3 }, 2, false },
		{ "cmp %eax,(%rax)", { 0x39, 0x00 }, 2, false },
		{ "cmpq $0,0x8(%rbp)", { 0x48, 0x83, 0x7d, 0x08, 0x00 }, 5, false },
		{ "addq $0,0x8(%rbp)", { 0x48, 0x83, 0x45, 0x08, 0x00 }, 5, true },
		{ "push %rbx", { 0x53 }, 1, true },
		{ "pushq (%rax)", { 0xff, 0x30 }, 2, true },
		{ "push via FF /6 of a register", { 0xff, 0xf0 }, 2, true },
		{ "pop %rbp", { 0x5d }, 1, false },
		{ "rep stosb", { 0xf3, 0xaa }, 2, true },
		{ "lodsb", { 0xac }, 1, false },
		{ "testb $1,(%rdi)", { 0xf6, 0x07, 0x01 }, 3, false },
		{ "notl (%rax)", { 0xf7, 0x10 }, 2, true },
		{ "lea (%rax),%rax", { 0x48, 0x8d, 0x00 }, 3, false },
		{ "setne (%rdi)", { 0x0f, 0x95, 0x07 }, 3, true },
		{ "bt $3,(%rdi)", { 0x0f, 0xba, 0x27, 0x03 }, 4, false },
		{ "bts $3,(%rdi)", { 0x0f, 0xba, 0x2f, 0x03 }, 4, true },
		{ "movsd %xmm0,(%rax)", { 0xf2, 0x0f, 0x11, 0x00 }, 4, true },
		{ "movsd (%rax),%xmm0", { 0xf2, 0x0f, 0x10, 0x00 }, 4, false },
		{ "movq %xmm0,(%rax)", { 0x66, 0x0f, 0xd6, 0x00 }, 4, true },
		{ "addsd (%rax),%xmm0", { 0xf2, 0x0f, 0x58, 0x00 }, 4, false },
		{ "movabs %eax,moffs", { 0xa3, 1, 2, 3, 4, 5, 6, 7 }, 8, false },
	};

	for (unsigned i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		bool writes = !w[i].writes;
		uint8_t b[16] = { 0 };

		memcpy(b, w[i].bytes, w[i].n);
		int stack;
		uint32_t regs;

		plain_len(b, sizeof(b), INSN_MODE_64, &writes, &stack, &regs);
		/* A3 with its 8-byte address is 9 bytes: the row above is cut to say it is plain. */
		if (w[i].bytes[0] == 0xa3)
			continue;
		check(writes == w[i].writes, "%s: %s memory", w[i].text,
		      w[i].writes ? "writes" : "does not write");
	}
	{
		static const uint8_t mov_moffs[] = { 0xa3, 1, 2, 3, 4, 5, 6, 7, 8 };
		bool writes = false;
		int stack;
		uint32_t regs;

		check(plain_len(mov_moffs, sizeof(mov_moffs), INSN_MODE_64, &writes, &stack,
				&regs) == 9 && writes,
		      "movabs %%eax,moffs64: 9 bytes, writes memory");
	}
}

#define RIP	0x401000ull

/* A block of code whose pages are not write-protected: stores end it. */
static unsigned decode(const uint8_t *bytes, unsigned len, uint64_t rip, enum insn_mode mode,
		       unsigned max, struct step_block *b)
{
	return step_block_decode(bytes, len, rip, mode, max, false, b);
}

/* xor %eax,%eax; add $1,%ecx; dec %edx; jne back to the start: a loop of 4. */
static const uint8_t loop4[] = { 0x31, 0xc0, 0x83, 0xc1, 0x01, 0xff, 0xca, 0x75, 0xf7 };

static void test_loop_block(void)
{
	struct step_block b;
	uint64_t insns, br;

	check(decode(loop4, sizeof(loop4), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 4 &&
	      b.branch && b.loops && b.ntargets == 2 && b.target[0] == RIP + 9 &&
	      b.target[1] == RIP && b.off[1] == 2 && b.off[2] == 5 && b.off[3] == 7 &&
	      b.off[4] == 9, "a loop of 4: one block, branch to its start and past it");
	check(step_block_retired(&b, RIP, false, 0, &insns, &br) && insns == 4 && br == 1,
	      "back at the start with RF clear: a whole turn (4, 1 branch)");
	check(step_block_retired(&b, RIP, true, 0, &insns, &br) && insns == 0 && br == 0,
	      "at the start with RF still set: nothing completed");
	check(step_block_retired(&b, RIP + 9, false, 0, &insns, &br) && insns == 4 && br == 1,
	      "out of the loop: 4, 1 branch");
	/* An interrupt in the middle of the block (an exit at an instruction boundary). */
	check(step_block_retired(&b, RIP + 5, false, 0, &insns, &br) && insns == 2 && br == 0,
	      "an interrupt before the DEC: 2 retired");
	check(step_block_retired(&b, RIP + 7, false, 0, &insns, &br) && insns == 3 && br == 0,
	      "an interrupt before the JNE: 3 retired, no branch");
	check(!step_block_retired(&b, RIP + 6, false, 0, &insns, &br) && insns == 3,
	      "inside an instruction: not a place a block stops at");
	check(decode(loop4, sizeof(loop4), RIP, INSN_MODE_64, 2, &b) == 2 && !b.branch &&
	      b.off[2] == 5, "a counter 2 from overflowing cuts the block after 2");
}

static void test_branch_first(void)
{
	static const uint8_t jmp_fwd[] = { 0xeb, 0x10 };
	static const uint8_t ret[] = { 0xc3 };
	static const uint8_t jmp_self[] = { 0xeb, 0xfe };
	static const uint8_t call[] = { 0xe8, 0x00, 0x01, 0x00, 0x00 };
	struct step_block b;
	uint64_t insns, br;

	check(decode(jmp_fwd, sizeof(jmp_fwd), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 1 &&
	      b.branch && b.ntargets == 1 && b.target[0] == RIP + 0x12,
	      "a JMP as the first instruction: a block of that one branch");
	check(step_block_retired(&b, RIP + 0x12, false, 0, &insns, &br) && insns == 1 && br == 1,
	      "at its target: 1 retired, a branch");
	check(step_block_retired(&b, RIP, false, 0, &insns, &br) && insns == 0,
	      "still at it: nothing retired");
	check(decode(ret, sizeof(ret), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 1 &&
	      b.ret && b.ret_pop == 0, "RET first: a block of one, its target at RSP");
	check(decode(jmp_self, sizeof(jmp_self), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 1 &&
	      b.loops && b.target[0] == RIP, "JMP to itself: a looping block of 1");
	check(decode(call, sizeof(call), RIP, INSN_MODE_32, BLOCK_MAX, &b) == 1 &&
	      b.target[0] == RIP + 0x105, "CALL rel32 in 32-bit mode");
	check(!decode(jmp_fwd, sizeof(jmp_fwd), RIP, INSN_MODE_16, BLOCK_MAX, &b),
	      "16-bit code: branches are stepped (IP wraps at 64 KiB)");
}

/* A target inside the block but not at its start: that branch is left to the stepper. */
static void test_inner_target(void)
{
	/* nop; nop; jne -3 (to the second NOP) */
	static const uint8_t inner[] = { 0x90, 0x90, 0x75, 0xfd };
	struct step_block b;

	check(decode(inner, sizeof(inner), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 2 &&
	      !b.branch && b.off[2] == 2, "a branch into the block's middle ends it before");
}

/* Blocks end after a store (what it writes may be the code that follows), and at odd code. */
/* A block that may read the TSC says so (its time is not charged by its instructions). */
static void test_reads_tsc(void)
{
	static const uint8_t rdtsc[] = { 0x90, 0x0f, 0x31, 0x48, 0x01, 0xd0, 0xeb, 0xf8 };
	static const uint8_t imm[] = { 0x05, 0x00, 0x00, 0x0f, 0x31, 0xeb, 0xf9 };
	static const uint8_t none[] = { 0x90, 0x48, 0x01, 0xd0, 0xeb, 0xfa };
	struct step_block b;

	check(decode(rdtsc, sizeof(rdtsc), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 4 && b.reads_tsc,
	      "NOP; RDTSC; ADD; JMP: it may read the TSC");
	check(decode(imm, sizeof(imm), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 2 && b.reads_tsc,
	      "ADD $0x310f0000, %%eax ends in 0F 31: taken for an RDTSC (the safe side)");
	check(decode(none, sizeof(none), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 3 && !b.reads_tsc,
	      "NOP; ADD; JMP: it reads no TSC");
	b.reads_tsc = true;
	check(decode(none, sizeof(none), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 3 && !b.reads_tsc,
	      "and the flag of the block decoded before is not kept");
}

static void test_block_ends(void)
{
	/* mov %eax,(%rdi); mov %eax,%ebx */
	static const uint8_t store[] = { 0x89, 0x07, 0x89, 0xc3 };
	/* mov %eax,%ebx; pushf */
	static const uint8_t pushf[] = { 0x89, 0xc3, 0x9c };
	/* 40 NOPs */
	uint8_t nops[40];
	struct step_block b;

	check(decode(store, sizeof(store), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 1 &&
	      b.off[1] == 2, "a store ends its block");
	check(decode(pushf, sizeof(pushf), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 1 &&
	      b.off[1] == 2, "PUSHF is stepped (the flags image hides TF)");
	memset(nops, 0x90, sizeof(nops));
	check(decode(nops, sizeof(nops), RIP, INSN_MODE_64, 1000, &b) == BLOCK_MAX,
	      "at most BLOCK_MAX instructions");
	check(decode(nops, 5, RIP, INSN_MODE_64, BLOCK_MAX, &b) == 5,
	      "as far as the bytes fetched go (a page that is not there)");
}

/* Code pages write-protected (hv/step_cache.c): stores stay inside, RETs after them do not. */
static void test_stores_inside(void)
{
	/* mov %eax,(%rdi); push %rax; mov %eax,%ebx; jne .+0x10 */
	static const uint8_t stores[] = { 0x89, 0x07, 0x50, 0x89, 0xc3, 0x75, 0x10 };
	/* pop %rbx; mov %eax,(%rdi); ret */
	static const uint8_t store_ret[] = { 0x5b, 0x89, 0x07, 0xc3 };
	/* mov %ecx,(%rdi); dec %ecx; jnz back */
	static const uint8_t store_loop[] = { 0x89, 0x0f, 0xff, 0xc9, 0x75, 0xfa };
	struct step_block b;

	check(step_block_decode(stores, sizeof(stores), RIP, INSN_MODE_64, BLOCK_MAX, true, &b) ==
	      4 && b.store_end == 1 && b.branch && b.target[1] == RIP + 0x17,
	      "stores inside: MOV to memory, PUSH, MOV, JNE in one block; the first store is 1st");
	check(step_block_cut(&b, b.store_end) == 1 && !b.branch && b.off[1] == 2,
	      "cut at its first store it is the block decoding without stores gives");
	check(step_block_decode(stores + 3, 4, RIP, INSN_MODE_64, BLOCK_MAX, true, &b) == 2 &&
	      !b.store_end, "no store: store_end 0");
	check(step_block_decode(store_ret, sizeof(store_ret), RIP, INSN_MODE_64, BLOCK_MAX, true,
				&b) == 2 && !b.ret && b.store_end == 2,
	      "a RET after a store is left out: the store may have written its return address");
	check(step_block_decode(store_loop, sizeof(store_loop), RIP, INSN_MODE_64, BLOCK_MAX, true,
				&b) == 3 && b.counted && b.ctr == 1,
	      "a DEC; JNZ loop with a store to memory is still counted (no register written)");
}

/* Code across a page boundary decodes as one: the fetch gives the bytes of both pages. */
static void test_across_pages(void)
{
	/* mov $0x12345678,%ecx at 0xffd..0x1001, then nop; jmp back to the start */
	static const uint8_t code[] = { 0xb9, 0x78, 0x56, 0x34, 0x12, 0x90, 0xeb, 0xf8 };
	struct step_block b;
	uint64_t insns, br;

	check(decode(code, sizeof(code), 0x400ffd, INSN_MODE_64, BLOCK_MAX, &b) == 3 &&
	      b.loops && b.off[1] == 5 && b.off[2] == 6, "a block over a page boundary");
	check(step_block_retired(&b, 0x401002, false, 0, &insns, &br) && insns == 1,
	      "an exit on the second page: 1 retired");
}

/* RET ends a block with its target from the stack, when nothing before it moved RSP but POPs. */
static void test_ret(void)
{
	/* pop %rbx; pop %r12; ret */
	static const uint8_t pops_ret[] = { 0x5b, 0x41, 0x5c, 0xc3 };
	/* add $8,%rsp; ret */
	static const uint8_t add_rsp_ret[] = { 0x48, 0x83, 0xc4, 0x08, 0xc3 };
	/* mov %rax,%rsp; ret */
	static const uint8_t mov_rsp_ret[] = { 0x48, 0x89, 0xc4, 0xc3 };
	/* pop %rsp; ret */
	static const uint8_t pop_rsp_ret[] = { 0x5c, 0xc3 };
	/* xor %eax,%eax; repz ret */
	static const uint8_t repz_ret[] = { 0x31, 0xc0, 0xf3, 0xc3 };
	struct step_block b;
	uint64_t insns, br;

	check(decode(pops_ret, sizeof(pops_ret), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 3 &&
	      b.ret && b.ret_pop == 16 && b.branch && b.ntargets == 1 && b.off[3] == 4,
	      "POP, POP r12, RET: the return address 16 bytes up the stack");
	check(step_block_ret_target(&b, 0x500000) && b.target[0] == 0x500000 && !b.loops &&
	      step_block_retired(&b, 0x500000, false, 0, &insns, &br) && insns == 3 && br == 1,
	      "at the return address: 3 retired, 1 branch");
	check(!step_block_ret_target(&b, RIP + 1) && b.n == 2 && !b.branch,
	      "a return into the block: the RET is left to the stepper");
	check(decode(add_rsp_ret, sizeof(add_rsp_ret), RIP, INSN_MODE_64, BLOCK_MAX,
				&b) == 1 && !b.ret, "ADD to RSP before RET: RET stepped");
	check(decode(mov_rsp_ret, sizeof(mov_rsp_ret), RIP, INSN_MODE_64, BLOCK_MAX,
				&b) == 1 && !b.ret, "MOV to RSP before RET: RET stepped");
	check(decode(pop_rsp_ret, sizeof(pop_rsp_ret), RIP, INSN_MODE_64, BLOCK_MAX,
				&b) == 1 && !b.ret, "POP RSP before RET: RET stepped");
	check(decode(repz_ret, sizeof(repz_ret), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 2 &&
	      b.ret && b.ret_pop == 0 && b.off[2] == 4, "REPZ RET");
	check(!decode(repz_ret + 2, 2, RIP, INSN_MODE_32, BLOCK_MAX, &b),
	      "32-bit code: RET stepped");
}

/*
 * kvm-unit-tests' pmu.c loop: mov (%rax),%rdx; add $64,%rax; 7 NOPs; loop back. LOOP counts
 * RCX down, which nothing else writes: 10 instructions a turn, RCX turns (SDM Vol. 2A LOOP).
 */
static const uint8_t loop_pmu[] = { 0x48, 0x8b, 0x10, 0x48, 0x83, 0xc0, 0x40, 0x90, 0x90, 0x90,
				    0x90, 0x90, 0x90, 0x90, 0xe2, 0xf0 };

static void test_counted_loop(void)
{
	struct step_block b;
	uint64_t insns, br;

	check(decode(loop_pmu, sizeof(loop_pmu), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 10 &&
	      b.counted && !b.dec_jnz && b.ctr == 1 && b.ctr_bits == 64 && b.target[1] == RIP,
	      "LOOP with RCX untouched: a counted loop of 10 on RCX");
	check(!step_block_whole(&b, 1, ~0ull, ~0ull), "one turn: not run whole");
	check(!step_block_whole(&b, 1000, 9999, ~0ull),
	      "1000 turns of 10 past an instructions counter's overflow in 9999: not whole");
	check(!step_block_whole(&b, 1000, ~0ull, 999),
	      "1000 turns past a branches counter's overflow in 999: not whole");
	check(step_block_whole(&b, 1000, 10000, 1000) && b.whole && b.ctr_entry == 1000,
	      "1000 turns, overflows exactly at the end: whole");
	check(step_block_retired(&b, RIP + 16, false, 0, &insns, &br) && insns == 10000 &&
	      br == 1000, "left at the fall-through with RCX 0: 10000, 1000 branches");
	check(!step_block_retired(&b, RIP + 16, false, 5, &insns, &br),
	      "at the fall-through with RCX not 0: no place it can stop");
	check(step_block_retired(&b, RIP, true, 600, &insns, &br) && insns == 4000 && br == 400,
	      "an interrupt at the start with RCX 600: 400 turns, whatever RF says");
	check(step_block_retired(&b, RIP + 7, false, 600, &insns, &br) && insns == 4002 &&
	      br == 400, "an interrupt at the first NOP with RCX 600: 400 turns and 2");
	check(step_block_retired(&b, RIP + 14, false, 1, &insns, &br) && insns == 9999 &&
	      br == 999, "at the last LOOP, RCX 1: 999 turns and 9");
	check(!step_block_retired(&b, RIP + 15, false, 1, &insns, &br),
	      "inside the LOOP: no place it can stop");
	check(step_block_whole(&b, 0x100000003ull, ~0ull, ~0ull) && b.ctr_entry == 0x100000003ull,
	      "LOOP in 64-bit mode counts all of RCX");
	check(step_block_whole(&b, 0x100000003ull, ~0ull, ~0ull) &&
	      step_block_retired(&b, RIP + 16, false, 0, &insns, &br) &&
	      insns == 42949672990ull && br == 0x100000003ull, "2^32 + 3 turns: 10 times that");
}

/* a loop of 4 (loop4) is DEC %EDX; JNZ: counted on EDX, 32 bits. */
static void test_dec_jnz(void)
{
	/* mov (%rsi),%eax; dec %rdx; jne back: DEC of 64 bits; in 32-bit code dec %ecx is 49. */
	static const uint8_t dec64[] = { 0x8b, 0x06, 0x48, 0xff, 0xca, 0x75, 0xf9 };
	static const uint8_t dec32[] = { 0x8b, 0x06, 0x49, 0x75, 0xfb };
	static const uint8_t dec16[] = { 0x66, 0xff, 0xc9, 0x75, 0xfb };
	struct step_block b;
	uint64_t insns, br;

	check(decode(loop4, sizeof(loop4), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 4 &&
	      b.counted && b.dec_jnz && b.ctr == 2 && b.ctr_bits == 32,
	      "XOR; ADD; DEC %%EDX; JNZ: counted on EDX");
	check(step_block_whole(&b, 0xFFFFFFFF00000005ull, ~0ull, ~0ull) && b.ctr_entry == 5,
	      "DEC of 32 bits: the turns are the low 32 bits (5)");
	check(step_block_retired(&b, RIP + 7, false, 2, &insns, &br) && insns == 11 && br == 2,
	      "at the JNZ with EDX 2: this turn's DEC retired: 2 turns and 3");
	check(step_block_retired(&b, RIP + 5, false, 2, &insns, &br) && insns == 14 && br == 3,
	      "at the DEC with EDX 2: 3 turns and 2");
	check(step_block_retired(&b, RIP + 9, false, 0, &insns, &br) && insns == 20 && br == 5,
	      "out: 5 turns");
	check(!step_block_retired(&b, RIP + 7, false, 5, &insns, &br),
	      "at the JNZ with EDX as it entered: impossible");
	check(decode(dec64, sizeof(dec64), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 3 &&
	      b.counted && b.ctr == 2 && b.ctr_bits == 64, "DEC %%RDX: 64 bits");
	check(decode(dec32, sizeof(dec32), RIP, INSN_MODE_32, BLOCK_MAX, &b) == 3 &&
	      b.counted && b.ctr == 1 && b.ctr_bits == 32, "32-bit code, DEC %%ECX (49)");
	check(decode(dec16, sizeof(dec16), RIP, INSN_MODE_64, BLOCK_MAX, &b) == 2 &&
	      b.counted && b.ctr == 1 && b.ctr_bits == 16 &&
	      step_block_whole(&b, 0x30002, ~0ull, ~0ull) && b.ctr_entry == 2,
	      "DEC %%CX: 16 bits");
}

/* Loops that are not counted: their turns are not what the register says, or it is not known. */
static void test_not_counted(void)
{
	static const struct {
		const char *text;
		uint8_t bytes[16];
		unsigned len;
	} no[] = {
		{ "mov %rax,%rcx; loop", { 0x48, 0x89, 0xc1, 0xe2, 0xfb }, 5 },
		{ "mov $0,%cl; loop (CL is RCX's)", { 0xb1, 0x00, 0xe2, 0xfc }, 4 },
		{ "mov $0,%ch; loop (CH without REX)", { 0xb5, 0x00, 0xe2, 0xfc }, 4 },
		{ "lea 1(%rax),%rcx; loop", { 0x48, 0x8d, 0x48, 0x01, 0xe2, 0xfa }, 6 },
		{ "lodsb; loop (a string instruction)", { 0xac, 0xe2, 0xfd }, 3 },
		{ "rdtsc; loop", { 0x0f, 0x31, 0xe2, 0xfc }, 4 },
		{ "nop; loope (ZF decides too)", { 0x90, 0xe1, 0xfd }, 3 },
		{ "dec %edx; nop; jnz (flags of NOP's neighbour)", { 0xff, 0xca, 0x90, 0x75, 0xfb }, 5 },
		{ "add %ebx,%edx; dec %edx; jnz", { 0x01, 0xda, 0xff, 0xca, 0x75, 0xfa }, 6 },
		{ "dec %edx; jz (leaves at non-zero)", { 0xff, 0xca, 0x74, 0xfc }, 4 },
		{ "sub $1,%edx; jnz (not DEC)", { 0x83, 0xea, 0x01, 0x75, 0xfb }, 5 },
		{ "xchg %ecx,%eax; loop", { 0x91, 0xe2, 0xfd }, 3 },
		{ "dec %rsp; jnz", { 0x48, 0xff, 0xcc, 0x75, 0xfb }, 5 },
		{ "movd %xmm0,%ecx; loop (SSE: not known)", { 0x66, 0x0f, 0x7e, 0xc1, 0xe2, 0xfa }, 6 },
	};
	static const uint8_t ch_rex[] = { 0x40, 0xb5, 0x00, 0xe2, 0xfb };	/* mov $0,%bpl */
	struct step_block b;

	for (unsigned i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		check(decode(no[i].bytes, no[i].len, RIP, INSN_MODE_64, BLOCK_MAX, &b) &&
		      b.branch && !b.counted && !step_block_whole(&b, 100, ~0ull, ~0ull),
		      "%s: a block, not counted", no[i].text);
	check(decode(ch_rex, sizeof(ch_rex), RIP, INSN_MODE_64, BLOCK_MAX, &b) &&
	      b.counted, "mov $0,%%bpl (REX: register 5 is BPL, not CH); loop: counted");
}

int main(void)
{
	test_lengths();
	test_writes();
	test_loop_block();
	test_branch_first();
	test_inner_target();
	test_block_ends();
	test_reads_tsc();
	test_stores_inside();
	test_across_pages();
	test_ret();
	test_counted_loop();
	test_dec_jnz();
	test_not_counted();
	return unit_summary();
}
