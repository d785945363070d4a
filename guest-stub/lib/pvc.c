/* The user library's low level: SYS_PMU wrappers and the direct read. */
#include "guest-stub/kernel/user.h"
#include "guest-stub/lib/pvc.h"

static long pmu_call(enum kpmu_op op, const void *arg)
{
	return syscall3(SYS_PMU, op, (long)(uintptr_t)arg, 0);
}

const struct kpmu_thread *pvc_open(void)
{
	long ret = pmu_call(KPMU_OPEN, NULL);

	return ret > 0 ? (const struct kpmu_thread *)(uintptr_t)ret : NULL;
}

int pvc_control(const struct pv_control *c)
{
	return (int)pmu_call(KPMU_CONTROL, c);
}

int pvc_iresume(void)
{
	return (int)pmu_call(KPMU_IRESUME, NULL);
}

int pvc_iread(uint64_t values[PV_NVALUES])
{
	return (int)pmu_call(KPMU_IREAD, values);
}

int pvc_stop(void)
{
	return (int)pmu_call(KPMU_STOP, NULL);
}

int pvc_probe(struct kpmu_probe *p)
{
	return (int)pmu_call(KPMU_PROBE, p);
}

uint64_t pvc_ievents(const struct kpmu_thread *self, unsigned i)
{
	return kpmu_ievents(self, i);
}
