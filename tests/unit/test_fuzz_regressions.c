/* Regression checks for what tests/fuzz/ found: the smallest input that broke each subject. */
#include <stddef.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "pmu/vpmu.c"
#include "pmu/pv.c"

/*
 * pmu/pv.c with two VCPUs whose guest maps its RAM 1:1. The shared area is read-only to the
 * guest (EPT); this vcpu_pmu_write_guest() writes anywhere in RAM, as the hypervisor's did
 * before 834f1ea, so that pv.c's own guard is what the ISUSPEND checks test (since 834f1ea
 * hv/guest_mem.c also refuses writes to the area on a guest's behalf).
 */
#define RAM_SIZE	(16 * 4096)
#define AREA_GPA	0x8000
#define CTL_GPA		0x1000
#define VALUES_GPA	0x1100
#define NVCPUS		2

struct vcpu {
	struct pmu_vcpu pmu;
};

static uint8_t ram[RAM_SIZE];
static struct pmu_domain pd;
static struct vcpu vcpus[NVCPUS];

enum pmu_backend_kind pmu_backend = PMU_BACKEND_SOFT;

bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len)
{
	(void)v;
	if (la > RAM_SIZE || len > RAM_SIZE - la)
		return false;
	memcpy(dst, ram + la, len);
	return true;
}

/* Never in place here: pv.c copies every control (its other way, which the copy above serves). */
const void *vcpu_pmu_guest_bytes(struct vcpu *v, uint64_t la, uint64_t len)
{
	(void)v;
	(void)la;
	(void)len;
	return NULL;
}

bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len)
{
	(void)v;
	if (la > RAM_SIZE || len > RAM_SIZE - la)
		return false;
	memcpy(ram + la, src, len);
	return true;
}

void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned nvcpus, const char **why)
{
	(void)v;
	if (gpa & 0xFFF || nvcpus != NVCPUS || gpa > RAM_SIZE - NVCPUS * 4096) {
		*why = "bad area";
		return NULL;
	}
	return ram + gpa;
}

uint64_t vcpu_pmu_guest_tsc(struct vcpu *v)
{
	(void)v;
	return 0;
}

void vcpu_pmu_raise_vector(struct vcpu *v, uint8_t vector)
{
	(void)v;
	(void)vector;
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}

void pmu_reprogrammed(struct vcpu *v)
{
	(void)v;
}

void pmu_sync(struct vcpu *v)
{
	(void)v;
}

static int64_t hypercall(unsigned vcpu, uint64_t nr, uint64_t a0, uint64_t a1)
{
	const uint64_t args[3] = { a0, a1, 0 };

	return pv_hypercall(&vcpus[vcpu], nr, args);
}

/* A fresh domain with the area set up; returns VCPU 0's page. */
static struct pv_vcpu_area *set_up(void)
{
	memset(ram, 0, sizeof(ram));
	pd = (struct pmu_domain){
		.cfg = { .enabled = true, .version = 2, .num_gp = 4, .num_fixed = 3, .width = 48 },
	};
	for (unsigned k = 0; k < NVCPUS; k++) {
		vcpus[k] = (struct vcpu){ .pmu = { .pd = &pd, .id = k } };
		vpmu_reset(&vcpus[k].pmu.vpmu, &pd.cfg);
	}
	hypercall(0, HC_PMU_SETUP, AREA_GPA, NVCPUS);
	return (struct pv_vcpu_area *)(ram + AREA_GPA);
}

static bool header_intact(const struct pv_vcpu_area *a, unsigned k)
{
	return a->version == PV_PMU_VERSION && a->size == sizeof(*a) && a->vcpu_id == k &&
	       a->flags == PV_FLAG_SOFT_PHYS && a->width == 48;
}

/*
 * fuzz_pv: HC_PMU_ISUSPEND's save pointer may point into the shared area, which the guest may
 * not write: the counter values land on the hypervisor's fields. Input (fuzz_pv.c layout):
 * 01 00 | 00 00 00 00 00 00 01 00 01 00 00 00 00 00 00 00 00 00 | 00 00 00 02 00 00 00 00 00 00
 * = SETUP(area 0, 1 VCPU), ISUSPEND(save 0): version, size, vcpu_id, flags become 0.
 * Fixed in 834f1ea: pv.c restores the caller's page, hv/guest_mem.c refuses the whole area.
 */
static void test_isuspend_into_own_page(void)
{
	struct pv_vcpu_area *a = set_up();
	int64_t r = hypercall(0, HC_PMU_ISUSPEND, AREA_GPA, 0);

	check(header_intact(a, 0), "ISUSPEND into the caller's read-only page leaves it alone "
	      "(returned %lld, version %u, size %u)", (long long)r, a->version, a->size);
}

/* The arch backend's counter i: what this test sets. */
static uint64_t hw_value;

static uint64_t hw_phys_fake(struct vcpu *v, unsigned i)
{
	(void)v;
	(void)i;
	return hw_value;
}

/*
 * fuzz_pv: on the arch backend with 64-bit counters (pmu_init() takes gp_width up to 64),
 * HC_PMU_READ returns Phys* modulo 2^64 as int64_t: from 2^63 on it reads as an error code.
 * fuzz_pv's input (86 bytes after libFuzzer's minimizing): arch backend, width 64, one a-mode
 * counter resumed, its hardware counter moved past 2^63, READ(0) = -8235394868399008272.
 */
static void test_read_64_bit_counter(void)
{
	static const struct pmu_backend_ops arch = { .name = "arch", .pv_phys = hw_phys_fake };
	struct pv_control c = { .ncounters = 1,
				.evtsel = { EVTSEL_EN | EVTSEL_OS | EVTSEL_USR | 0xc0 } };
	int64_t r;

	pv_init(&arch, 64);
	set_up();
	memcpy(ram + CTL_GPA, &c, sizeof(c));
	hw_value = 5;
	r = hypercall(0, HC_PMU_RESUME, CTL_GPA, 0);
	check(r == 0, "RESUME of one a-mode counter on 64-bit counters (%lld)", (long long)r);
	hw_value = 5 - PV_EINVAL;	/* 2^64 - 22 events later */
	r = hypercall(0, HC_PMU_READ, 0, 0);
	check(r >= 0, "HC_PMU_READ of a counter is never negative (got %lld)", (long long)r);
	pv_init(NULL, 0);
}

/*
 * The same write aimed at the active control: a guest i-mode value of 32 became
 * active.ncounters, and every later use of amode_mask() shifted by 32 and indexed ctr[],
 * evtsel[] and soft_phys[][] past their 4 entries (UBSan: pv.c pv_active() "index 4 out of
 * bounds for type 'uint64_t[4]'"; pv_count() wrote soft_phys[i] for i up to 31).
 * Fixed in 834f1ea.
 */
static void test_isuspend_into_control(void)
{
	struct pv_vcpu_area *a = set_up();
	struct pv_control c = { .ncounters = 1, .imode_mask = 1,
				.evtsel = { EVTSEL_EN | EVTSEL_OS | EVTSEL_USR | 0xc0 } };
	uint64_t values[PV_PMU_COUNTERS] = { 32 };
	int64_t r;

	memcpy(ram + CTL_GPA, &c, sizeof(c));
	memcpy(ram + VALUES_GPA, values, sizeof(values));
	r = hypercall(0, HC_PMU_IRESUME, CTL_GPA, VALUES_GPA);
	check(r == 0, "IRESUME of one i-mode counter at 32 (%lld)", (long long)r);
	r = hypercall(0, HC_PMU_ISUSPEND, AREA_GPA + offsetof(struct pv_vcpu_area, active), 0);
	check(a->active.ncounters <= PV_PMU_COUNTERS,
	      "ISUSPEND into the active control cannot make it invalid (returned %lld, "
	      "%u counters)", (long long)r, a->active.ncounters);
}

/*
 * fuzz_pv: the backend's count of an event no counter counts (VPMU_EV_NONE, or a number past
 * the events) indexed pv.c's per-event masks out of bounds once they replaced the decoding of
 * every event select (issue 15). Input: SETUP, RESUME of one a-mode instructions counter, then
 * counts of event -1. It counts nothing, as vpmu_count() does.
 */
static void test_count_no_event(void)
{
	struct pv_vcpu_area *a = set_up();
	struct pv_control c = { .ncounters = 1,
				.evtsel = { EVTSEL_EN | EVTSEL_OS | EVTSEL_USR | 0xc0 } };
	int64_t r;

	memcpy(ram + CTL_GPA, &c, sizeof(c));
	r = hypercall(0, HC_PMU_RESUME, CTL_GPA, 0);
	pv_count(&vcpus[0], VPMU_EV_NONE, 5, 3);
	pv_count(&vcpus[0], VPMU_EV_COUNT, 7, 0);
	check(r == 0 && a->soft_phys[0] == 0, "events of no kind count on no counter");
	pv_count(&vcpus[0], VPMU_EV_INSTRUCTIONS, 3, 3);
	check(a->soft_phys[0] == 3, "instructions count on the instructions counter");
}

int main(void)
{
	test_isuspend_into_own_page();
	test_isuspend_into_control();
	test_read_64_bit_counter();
	test_count_no_event();
	return unit_summary();
}
