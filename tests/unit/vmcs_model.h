/* A VMCS in memory for host unit tests of hv/ exit handlers: include before the handler's .c file. */
#ifndef PERFVISOR_TESTS_UNIT_VMCS_MODEL_H
#define PERFVISOR_TESTS_UNIT_VMCS_MODEL_H

#include <stdint.h>

#include "hv/vmx_defs.h"

/* VMREAD and VMWRITE become array accesses: hv/vmx_ops.h stays out. */
#define PERFVISOR_HV_VMX_OPS_H
static uint64_t vmcs[0x7000];	/* indexed by field encoding (all below 0x7000) */

static uint64_t vmread(enum vmcs_field f)
{
	return vmcs[f];
}

static void vmwrite(enum vmcs_field f, uint64_t v)
{
	vmcs[f] = v;
}

#endif
