/* The guest ABI for perfvisor's base hypercalls: numbers, registers and error codes (shared with guest-stub). */
#ifndef PERFVISOR_HYPERCALL_H
#define PERFVISOR_HYPERCALL_H

/*
 * VMCALL with the number in RAX and arguments in RDI, RSI, RDX, R10, R8, R9; the result comes
 * back in RAX: >= 0 on success, a negative PV_E* code on failure. Only CPL 0 may call.
 * Pointers are guest linear addresses, translated through the caller's own page tables.
 *
 * The numbers start at "pv" << 16, far from every other hypervisor's (KVM's are 1-12, Xen's
 * below 64, VMware's VMCALL takes 0x564D5868): a guest written for another hypervisor gets
 * -PV_ENOSYS, never a console write or its own end. Below 2^31, so a 32-bit MOV sets them.
 */
#define HC_BASE			0x70760000
#define HC_CONSOLE_WRITE	(HC_BASE + 0)	/* (const char *buf, size_t len) -> bytes written */
#define HC_YIELD		(HC_BASE + 1)	/* () -> 0; gives up the rest of the slice */
#define HC_VCPU_ID		(HC_BASE + 2)	/* () -> this VCPU's index in its domain */
#define HC_DOMAIN_EXIT		(HC_BASE + 3)	/* (int code) -> does not return */
#define HC_VCPU_EXITS		(HC_BASE + 4)	/* () -> this VCPU's VM exits so far, this one
						 * included, not counting the soft PMU's own:
						 * single steps, block ends, reads of a PV
						 * page shut while a block runs */
#define HC_BASE_COUNT		(HC_BASE + 5)	/* the first number after the base hypercalls */

/* Hypercalls of the paravirtual PMU start here (include/perfvisor/pmu.h). */
#define HC_PMU_BASE		(HC_BASE + 0x100)

/*
 * CPUID: 0x40000000 gives "perfvisor" in EBX ECX EDX and the last leaf in EAX, as KVM and Xen
 * publish theirs. perfvisor's own leaves are above the ones KVM (0x40000001 features),
 * Hyper-V (0x40000001-0x4000000A) and Xen (0x40000001-0x40000005, or 0x40000100 up) use.
 */
#define HV_CPUID_SIGNATURE	0x40000000
#define HV_CPUID_NAME		0x40000070	/* the domain's name, NUL-padded, in EAX EBX ECX EDX */

#define PV_EPERM	1	/* not allowed from this CPL */
#define PV_EFAULT	14	/* a pointer outside the caller's memory */
#define PV_EINVAL	22	/* a bad length, alignment or value */
#define PV_ENOSYS	1000	/* no such hypercall: KVM's -KVM_ENOSYS, what KVM guests expect */

#define HC_CONSOLE_MAX		4096	/* longest console write in one call */

#endif
