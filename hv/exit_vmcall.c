/* VMCALL exits: hypercall dispatch by number, with every argument checked against the caller's memory. */
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/guest_regs.h"
#include "include/perfvisor/hypercall.h"
#include "hv/sched.h"
#include "hv/vmexit.h"

static int64_t hc_console_write(struct vcpu *v, uint64_t buf, uint64_t len)
{
	char chunk[128];
	struct gpt_result res;

	if (len > HC_CONSOLE_MAX)
		return -PV_EINVAL;
	for (uint64_t done = 0; done < len;) {
		uint64_t n = len - done < sizeof(chunk) ? len - done : sizeof(chunk);

		if (guest_read(v, chunk, buf + done, n, GPT_READ, &res) != GPT_OK)
			return -PV_EFAULT;
		dom_uart_write(v->dom, chunk, n);
		done += n;
	}
	return (int64_t)len;
}

/* The hypercalls that only read the VCPU's state: the fast path answers them too. */
static bool hc_read_only(struct vcpu *v, uint64_t nr, int64_t *ret)
{
	switch (nr) {
	case HC_VCPU_ID:
		*ret = v->id;
		return true;
	case HC_VCPU_EXITS:
		*ret = (int64_t)(v->total_exits - v->step.exits);
		return true;
	default:
		return false;
	}
}

/* The paravirtual PMU's hypercall nr, its arguments in RDI, RSI and RDX. */
static __attribute__((noinline)) int64_t hc_pmu(struct vcpu *v, uint64_t nr)
{
	const uint64_t args[3] = { v->gpr[GPR_RDI], v->gpr[GPR_RSI], v->gpr[GPR_RDX] };

	return pmu_hypercall(v, nr, args);
}

bool exit_vmcall_fast(struct vcpu *v)
{
	uint64_t nr = v->gpr[GPR_RAX];
	int64_t ret;

	if (guest_regs_cpl() != 0)
		return false;
	if (nr == HC_PMU_RESUME) {
		/* A thread switch's, the PMU's common case: straight to it (as exit_vmcall()). */
		vcpu_advance_rip_light(v);
		ret = pmu_resume(v, v->gpr[GPR_RDI]);
	} else if (hc_read_only(v, nr, &ret)) {
		vcpu_advance_rip_light(v);
	} else if (pmu_hypercall_fast(nr)) {
		/* As exit_vmcall(): the VMCALL retires under the counters it found. */
		vcpu_advance_rip_light(v);
		ret = hc_pmu(v, nr);
	} else {
		return false;
	}
	v->gpr[GPR_RAX] = (uint64_t)ret;
	return true;
}

void exit_vmcall(struct vcpu *v, uint64_t qual)
{
	uint64_t nr = v->gpr[GPR_RAX];
	int64_t ret;

	(void)qual;
	vcpu_advance_rip(v);
	if (vcpu_cpl() != 0) {
		v->gpr[GPR_RAX] = (uint64_t)-PV_EPERM;
		return;
	}
	switch (nr) {
	case HC_CONSOLE_WRITE:
		ret = hc_console_write(v, v->gpr[GPR_RDI], v->gpr[GPR_RSI]);
		break;
	case HC_YIELD:
		v->resched = true;
		ret = 0;
		break;
	case HC_VCPU_ID:
	case HC_VCPU_EXITS:
		hc_read_only(v, nr, &ret);
		break;
	case HC_DOMAIN_EXIT:
		dom_exit(v->dom, (int)v->gpr[GPR_RDI]);
		return;
	default:
		ret = nr >= HC_PMU_BASE ? hc_pmu(v, nr) : -PV_ENOSYS;
		break;
	}
	v->gpr[GPR_RAX] = (uint64_t)ret;
}
