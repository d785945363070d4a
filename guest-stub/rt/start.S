/* Guest entry: multiboot header, 32-bit entry into long mode, 64-bit entry, exception stubs. */
#include "include/x86/cr.h"
#include "include/x86/msr.h"

#define MB_HEADER_MAGIC	0x1BADB002
/* Page-aligned modules, memory fields wanted, address fields present (bit 16). */
#define MB_HEADER_FLAGS	0x00010003
#define MB_BOOT_MAGIC	0x2BADB002

#define SEL_CODE64	0x08
#define SEL_DATA	0x10

#define STACK_SIZE	0x10000

#define PTE_PRESENT	0x001
#define PTE_WRITE	0x002
#define PTE_PWT		0x008
#define PTE_PCD		0x010
#define PTE_LARGE	0x080


/* Vectors 8, 10-14, 17, 21, 29 and 30 push an error code (SDM vol. 3A, table 6-1). */
#define ERROR_CODE_VECTORS	0x60227D00

/* Multiboot spec 0.6.96, 3.1.1 and 3.1.3: QEMU -kernel needs the address fields for ELF64. */
	.section .multiboot, "a"
	.balign 4
mb_header:
	.long	MB_HEADER_MAGIC
	.long	MB_HEADER_FLAGS
	.long	-(MB_HEADER_MAGIC + MB_HEADER_FLAGS)
	.long	mb_header		/* header_addr */
	.long	__image_start		/* load_addr */
	.long	__data_end		/* load_end_addr */
	.long	__image_end		/* bss_end_addr: loaders keep their data above it */
	.long	_start32		/* entry_addr */

	.section .noinit, "aw", @nobits
	.balign 4096
boot_pml4:
	.skip	4096
boot_pdpt:
	.skip	4096
/* Four page directories of 2 MiB pages: the first 4 GiB, local APIC included. */
boot_pd:
	.skip	4 * 4096
	.balign	16
stack_bottom:
	.skip	STACK_SIZE
stack_top:

	.data
	.balign	16
gdt:
	.quad	0
	.quad	0x00af9b000000ffff	/* SEL_CODE64: long mode, DPL 0, accessed */
	.quad	0x00cf93000000ffff	/* SEL_DATA: flat, writable, accessed */
gdt_end:
/* A 32-bit LGDT reads the low 4 bytes of the base: enough, the GDT is below 4 GiB. */
gdt_ptr:
	.word	gdt_end - gdt - 1
	.quad	gdt

	.section .rodata
	.balign	4
mxcsr_default:
	.long	0x1f80			/* all SSE exceptions masked, as after reset */

/*
 * Multiboot entry: 32-bit protected mode, paging off, EAX = magic, EBX = multiboot info.
 * No stack is set up or used before _start64.
 */
	.section .text.boot, "ax"
	.code32
	.globl	_start32
_start32:
	cli
	cld
	cmpl	$MB_BOOT_MAGIC, %eax
	je	1f
	xorl	%ebx, %ebx		/* not started by multiboot: no info to trust */
1:
	/* PML4 and PDPT start empty; every PD entry is written below. */
	movl	$boot_pml4, %edi
	xorl	%eax, %eax
	movl	$(2 * 4096 / 4), %ecx
	rep stosl
	movl	$(boot_pdpt + PTE_PRESENT + PTE_WRITE), boot_pml4

	movl	$boot_pdpt, %edi
	movl	$(boot_pd + PTE_PRESENT + PTE_WRITE), %eax
	movl	$4, %ecx
2:	movl	%eax, (%edi)
	addl	$4096, %eax
	addl	$8, %edi
	loop	2b

	movl	$boot_pd, %edi
	movl	$(PTE_PRESENT + PTE_WRITE + PTE_LARGE), %eax
	movl	$(4 * 512), %ecx
3:	movl	%eax, (%edi)
	movl	$0, 4(%edi)
	addl	$0x200000, %eax
	addl	$8, %edi
	loop	3b

	/* The top 32 MiB hold the I/O APIC, HPET and local APIC: device memory, uncached. */
	movl	$(boot_pd + 8 * (4 * 512 - 16)), %edi
	movl	$16, %ecx
4:	orl	$(PTE_PWT + PTE_PCD), (%edi)
	addl	$8, %edi
	loop	4b

	/* SDM vol. 3A, "Initializing IA-32e Mode": PAE, CR3, EFER.LME, then CR0.PG. */
	movl	%cr4, %eax
	orl	$CR4_PAE, %eax
	movl	%eax, %cr4
	movl	$boot_pml4, %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	rdmsr
	orl	$EFER_LME, %eax
	wrmsr
	/* Some BIOSes leave the caches off (CD/NW set); guests measure, so turn them on. */
	movl	%cr0, %eax
	andl	$~(CR0_CD + CR0_NW), %eax
	orl	$(CR0_PG + CR0_PE), %eax
	movl	%eax, %cr0

	lgdt	gdt_ptr
	ljmp	$SEL_CODE64, $start32_long

	.code64
start32_long:
	movl	%ebx, %edi		/* zero-extends: RDI = multiboot info for _start64 */
	jmp	_start64

/*
 * ELF entry: long mode with identity paging on, RDI = multiboot info physical address
 * (0 for none). Everything else is set up here: the loader's GDT, stack and FPU state
 * may be anything.
 */
	.globl	_start64
_start64:
	cli
	cld
	lgdt	gdt_ptr(%rip)
	movl	$SEL_DATA, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	%eax, %fs
	movl	%eax, %gs
	leaq	stack_top(%rip), %rsp
	pushq	$SEL_CODE64
	leaq	1f(%rip), %rax
	pushq	%rax
	lretq
1:
	movq	%rdi, %rbx		/* REP STOSB needs RDI */
	leaq	__bss_start(%rip), %rdi
	leaq	__bss_end(%rip), %rcx
	subq	%rdi, %rcx
	xorl	%eax, %eax
	rep stosb

	call	rt_fpu_init
	movq	%rbx, %rdi
	call	rt_start		/* does not return */

/* void rt_fpu_init(void): clobbers RAX only. */
	.globl	rt_fpu_init
rt_fpu_init:
	/* SDM vol. 3A, "Initialization of the SSE Extensions": EM=0, MP=1, OSFXSR, OSXMMEXCPT. */
	movq	%cr0, %rax
	andq	$~(CR0_EM + CR0_TS), %rax
	orq	$CR0_MP, %rax
	movq	%rax, %cr0
	movq	%cr4, %rax
	orq	$(CR4_OSFXSR + CR4_OSXMMEXCPT), %rax
	movq	%rax, %cr4
	fninit
	ldmxcsr	mxcsr_default(%rip)
	ret

/*
 * One stub per exception vector: pushes a 0 where the CPU pushes no error code, then the
 * vector, so rt_trap always sees the same frame. rt_trap_stubs lists their addresses.
 */
	.section .rodata
	.balign	8
	.globl	rt_trap_stubs
rt_trap_stubs:
	.text
	.set	vector, 0
	.rept	32
	.balign	16
0:
	.if	!((ERROR_CODE_VECTORS >> vector) & 1)
	pushq	$0
	.endif
	pushq	$vector
	jmp	trap_common
	.pushsection .rodata
	.quad	0b
	.popsection
	.set	vector, vector + 1
	.endr

trap_common:
	movq	%rsp, %rdi		/* struct rt_trap_frame */
	andq	$-16, %rsp		/* the ABI's call alignment */
	call	rt_trap			/* does not return */
