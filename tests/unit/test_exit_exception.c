/* Unit tests for hv/exit_exception.c against a modelled VMCS: #MC stays with the host, guest exceptions are reflected. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "tests/unit/vmcs_model.h"
#include "hv/exit_exception.c"

static unsigned killed;
static char why[160];

bool step_handle_db(struct vcpu *v, uint64_t qual)
{
	(void)v;
	(void)qual;
	return false;
}

/* Whether the stepper claims a #UD (its EFER.SCE cleared for a ring-0 run: hv/step.c). */
static bool stepper_ud;

bool step_handle_ud(struct vcpu *v)
{
	(void)v;
	return stepper_ud;
}

void dr_reflect_db(struct vcpu *v, uint64_t qual, unsigned stepper_slots)
{
	(void)v;
	(void)qual;
	(void)stepper_slots;
}

void dom_kill(struct domain *d, struct vcpu *v, const char *fmt, ...)
{
	(void)d;
	(void)v;
	killed++;
	snprintf(why, sizeof(why), "%s", fmt);
}

static struct domain dom;
static struct vcpu vcpu = { .dom = &dom };

/* An exit for a hardware exception with `vector` (SDM Vol. 3C 25.9.2 interruption information). */
static void exit_for(uint32_t type, unsigned vector, bool error)
{
	memset(vmcs, 0, sizeof(vmcs));
	killed = 0;
	vmcs[VMCS_EXIT_INTR_INFO] = INTR_INFO_VALID | type | vector |
				    (error ? INTR_INFO_DELIVER_ERROR : 0);
	vmcs[VMCS_EXIT_INTR_ERROR] = 0x18;
	vmcs[VMCS_EXIT_INSN_LEN] = 2;
	exit_exception(&vcpu, 0);
}

int main(void)
{
	exit_for(INTR_TYPE_HW_EXCEPTION, EXC_MC, false);
	check(killed == 1 && !vmcs[VMCS_ENTRY_INTR_INFO] && strstr(why, "machine check"),
	      "#MC while the guest ran: the domain is stopped by name, nothing reaches its IDT");
	exit_for(INTR_TYPE_HW_EXCEPTION, 13, true);
	check(!killed && vmcs[VMCS_ENTRY_INTR_INFO] == (INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION |
							 INTR_INFO_DELIVER_ERROR | 13) &&
	      vmcs[VMCS_ENTRY_EXC_ERROR] == 0x18, "a guest #GP is reflected with its error code");
	exit_for(INTR_TYPE_NMI, 2, false);
	check(!killed && !vmcs[VMCS_ENTRY_INTR_INFO], "a host NMI is not the guest's");
	exit_for(INTR_TYPE_HW_EXCEPTION, EXC_UD, false);
	check(vmcs[VMCS_ENTRY_INTR_INFO] == (INTR_INFO_VALID | INTR_TYPE_HW_EXCEPTION | EXC_UD),
	      "a guest #UD is reflected");
	stepper_ud = true;
	exit_for(INTR_TYPE_HW_EXCEPTION, EXC_UD, false);
	check(!vmcs[VMCS_ENTRY_INTR_INFO], "a #UD the stepper caused (SYSRET with its SCE "
	      "cleared) is not reflected: the instruction runs again");
	return unit_summary();
}
