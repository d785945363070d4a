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

void pvc_read(const struct kpmu_thread *self, uint64_t values[PV_NVALUES])
{
	static const struct pv_read_ops ops = KPMU_READ_OPS;

	/* running changes only by the caller's own system calls: no race with this test. */
	if (self->running) {
		pv_read(&self->counts, self->areas, &ops, values);
		return;
	}
	for (unsigned i = 0; i < PV_NVALUES; i++)
		values[i] = self->counts.mask >> i & 1 ? self->counts.sum[i] : 0;
}

uint64_t pvc_ievents(const struct kpmu_thread *self, unsigned i)
{
	return kpmu_ievents(self, i);
}
