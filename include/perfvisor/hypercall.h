/* The guest ABI for perfvisor's base hypercalls: numbers, registers and error codes (shared with guest-stub). */
#ifndef PERFVISOR_HYPERCALL_H
#define PERFVISOR_HYPERCALL_H

/*
 * VMCALL with the number in RAX and arguments in RDI, RSI, RDX, R10, R8, R9; the result comes
 * back in RAX: >= 0 on success, a negative PV_E* code on failure. Only CPL 0 may call.
 * Pointers are guest linear addresses, translated through the caller's own page tables.
 */
#define HC_CONSOLE_WRITE	0	/* (const char *buf, size_t len) -> bytes written */
#define HC_YIELD		1	/* () -> 0; gives up the rest of the slice */
#define HC_VCPU_ID		2	/* () -> this VCPU's index in its domain */
#define HC_DOMAIN_EXIT		3	/* (int code) -> does not return */
#define HC_VCPU_EXITS		4	/* () -> this VCPU's VM exits so far, this one included,
					 * not counting the soft PMU's single-step exits */
#define HC_BASE_COUNT		5	/* the first number that is not a base hypercall */

/* Hypercalls of the paravirtual PMU start here (include/perfvisor/pmu.h). */
#define HC_PMU_BASE		0x100

#define PV_EPERM	1	/* not allowed from this CPL */
#define PV_EFAULT	14	/* a pointer outside the caller's memory */
#define PV_EINVAL	22	/* a bad length, alignment or value */
#define PV_ENOSYS	38	/* no such hypercall */

#define HC_CONSOLE_MAX		4096	/* longest console write in one call */

#endif
