/* Guest memory as the running VCPU sees it: linear addresses through its own page tables, bounded by its RAM. */
#ifndef PERFVISOR_HV_GUEST_MEM_H
#define PERFVISOR_HV_GUEST_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "hv/gpt.h"
#include "hv/insn.h"

struct vcpu;

/* Copies between the hypervisor and the guest's linear address space, as the guest at its CPL would. */
enum gpt_status guest_read(struct vcpu *v, void *dst, uint64_t la, size_t len,
			   enum gpt_access acc, struct gpt_result *res);
enum gpt_status guest_write(struct vcpu *v, uint64_t la, const void *src, size_t len,
			    struct gpt_result *res);

/*
 * The guest-physical address of linear address la for an access of kind acc (in res->gpa);
 * memo, unless NULL, remembers the walk to take it again cheaply (gpt_translate_memo()).
 */
enum gpt_status guest_translate(struct vcpu *v, uint64_t la, enum gpt_access acc,
				struct gpt_memo *memo, struct gpt_result *res);
/* The len bytes at la in the domain's RAM, when they lie in one page there (gpt_map_memo()). */
const void *guest_map(struct vcpu *v, uint64_t la, size_t len, enum gpt_access acc,
		      struct gpt_memo *memo);

/* The default operand size of the code the VCPU is executing: 64-bit mode, or CS.D (SDM Vol. 3A 5.2.1). */
enum insn_mode guest_code_mode(void);
/* Fetches up to INSN_MAX_LEN instruction bytes at the guest's RIP; returns how many could be read. */
unsigned guest_fetch_insn(struct vcpu *v, uint8_t bytes[INSN_MAX_LEN]);

#endif
