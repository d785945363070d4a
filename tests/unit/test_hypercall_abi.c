/* Unit tests for include/perfvisor/hypercall.h: numbers clear of other hypervisors'. */
#include <stdbool.h>
#include <stdint.h>

#include "tests/unit/unit.h"
#include "include/perfvisor/hypercall.h"
#include "include/perfvisor/pmu.h"

static const uint64_t numbers[] = {
	HC_CONSOLE_WRITE, HC_YIELD, HC_VCPU_ID, HC_DOMAIN_EXIT, HC_VCPU_EXITS, HC_PMU_SETUP,
	HC_PMU_RESUME, HC_PMU_ISUSPEND, HC_PMU_IRESUME, HC_PMU_SET_VECTOR, HC_PMU_READ, HC_PMU_IACK,
};

int main(void)
{
	bool clear = true, small = true;

	for (unsigned i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++) {
		/* KVM's hypercalls are 1-12 (Linux include/uapi/linux/kvm_para.h), Xen's below 64. */
		clear &= numbers[i] >= 64;
		/* VMware's VMCALL backdoor takes its magic 0x564D5868 in EAX. */
		clear &= numbers[i] != 0x564D5868;
		/* A 32-bit MOV (guests in 32-bit mode, MOV r32, imm32) must give the whole number. */
		small &= numbers[i] < (1ull << 31);
	}
	check(clear, "no hypercall number is KVM's, Xen's or VMware's");
	check(small, "every hypercall number fits a 32-bit register");
	check(HC_BASE_COUNT - HC_CONSOLE_WRITE == 5 && HC_PMU_BASE >= HC_BASE_COUNT,
	      "the base hypercalls and the PMU's do not overlap");
	check(PV_ENOSYS == 1000, "an unknown hypercall returns -1000, KVM's -KVM_ENOSYS");
	/* KVM: features at 0x40000001; Hyper-V: 0x40000001-0x4000000A; Xen: 0x40000001-5. */
	check(HV_CPUID_SIGNATURE == 0x40000000 && HV_CPUID_NAME > 0x4000000A &&
	      HV_CPUID_NAME <= 0x400000FF, "perfvisor's name leaf is none of KVM's, Hyper-V's or Xen's");
	return unit_summary();
}
