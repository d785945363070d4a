/* Fuzz target for pmu/pv.c: PV PMU hypercalls, guest stores, switches, counting on fake VCPUs. */
#include "pmu/pv.c"
#include "pmu/vpmu.c"
#include "tests/fuzz/fakes.h"

#define RAM_SIZE	0x10000u	/* 64 KiB of guest RAM, linear = physical */
#define VCPUS_MAX	4
#define PCPUS		8		/* hv/pcpu.h MAX_PCPUS */
#define RECORDS_MAX	16		/* RAM records: control blocks, values, page contents */

/* What pv.c knows of a VCPU is its PMU state and the seam functions below. */
struct vcpu {
	struct pmu_vcpu pmu;
	unsigned pcpu;
	uint64_t tsc;
};

static uint8_t mem[RAM_SIZE];
static struct fake_ram ram = { mem, RAM_SIZE };
static struct pmu_domain pd;
static struct vcpu vcpus[VCPUS_MAX];
static unsigned nvcpus;
static uint64_t area_gpa;	/* where HC_PMU_SETUP mapped the area; RAM_SIZE: not yet */
static uint64_t hw[PCPUS][PV_PMU_COUNTERS];	/* the arch backend's GP counters, per PCPU */

enum pmu_backend_kind pmu_backend;

/* backend_arch.c's arch_pv_phys(): the PCPU's counter, as wide as the hardware's. */
static uint64_t hw_counter(struct vcpu *v, unsigned i)
{
	return pv_wrap(hw[v->pcpu][i], phys_width);
}

static const struct pmu_backend_ops arch_ops = { .name = "arch", .pv_phys = hw_counter };

/* The soft backend asks which events the paravirtual counters count (backend_soft.c). */
void pmu_reprogrammed(struct vcpu *v)
{
	FZ_CHECK(!(pv_active(v) >> VPMU_EV_COUNT), "active events");
}

/* The counts are always current here: nothing to gather. */
void pmu_sync(struct vcpu *v)
{
	(void)v;
}

/* Whether [gpa, gpa + len) touches the area's pages. */
static bool in_area(uint64_t gpa, uint64_t len)
{
	return area_gpa < RAM_SIZE && gpa < area_gpa + nvcpus * 4096ull && gpa + len > area_gpa;
}

/* hv/guest_mem.c: guest memory for the hypervisor, never a write to the read-only area. */
bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len)
{
	(void)v;
	return fake_ram_read(&ram, la, dst, len);
}

bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len)
{
	(void)v;
	return !in_area(la, len) && fake_ram_write(&ram, la, src, len);
}

/* hv/vcpu_pmu.c's rules: page-aligned, one page per VCPU of the domain, inside its RAM. */
void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned n, const char **why)
{
	(void)v;
	if (gpa & 0xfff || n != nvcpus || !fake_ram_has(&ram, gpa, (uint64_t)n * 4096)) {
		*why = "bad area";
		return NULL;
	}
	area_gpa = gpa;
	return mem + gpa;
}

uint64_t vcpu_pmu_guest_tsc(struct vcpu *v)
{
	return v->tsc;
}

void vcpu_pmu_raise_vector(struct vcpu *v, uint8_t vector)
{
	(void)v;
	FZ_CHECK(vector >= 32, "vector %u", vector);
}

struct pmu_vcpu *vcpu_pmu_state(struct vcpu *v)
{
	return &v->pmu;
}

/* The guest writes its RAM, except the area's pages, which the EPT maps read-only for it. */
static void guest_store(uint64_t gpa, uint64_t val)
{
	if (!in_area(gpa, 8))
		fake_ram_write(&ram, gpa, &val, 8);
}

/* A hypercall argument: mostly an address in guest RAM, sometimes any number. */
static uint64_t take_arg(struct fz *in)
{
	uint16_t a = fz_u16(in);

	return a & 1 ? fz_u64(in) : a >> 1 << 2;
}

static void check_result(uint64_t nr, int64_t r)
{
	if (r < 0) {
		FZ_CHECK(r == -PV_EINVAL || r == -PV_EFAULT || r == -PV_ENOSYS, "error %lld",
			 (long long)r);
		return;
	}
	if (nr == HC_PMU_ISUSPEND || nr == HC_PMU_IACK)
		FZ_CHECK(r < 1 << PV_PMU_COUNTERS, "overflow bits 0x%llx", (long long)r);
	else if (nr == HC_PMU_READ)
		FZ_CHECK((uint64_t)r == pv_wrap(r, phys_width), "counter 0x%llx", (long long)r);
	else
		FZ_CHECK(r == 0, "result %lld", (long long)r);
}

/* A control as control_valid() takes them, for the VCPUs' counters. */
static bool valid(const struct pv_control *c)
{
	if (c->ncounters > pd.cfg.num_gp || c->imode_mask >> c->ncounters)
		return false;
	for (unsigned i = 0; i < c->ncounters; i++)
		if (c->evtsel[i] >> 32 || !(c->evtsel[i] & EVTSEL_EN) || c->ireset[i] > WIDTH_MASK)
			return false;
	return true;
}

/* The page is what the hypervisor wrote: its header, and the control it took, as it took it. */
static void check_area(const struct pv_vcpu_area *a, unsigned k)
{
	FZ_CHECK(a->version == PV_PMU_VERSION && a->size == sizeof(*a) && a->vcpu_id == k &&
		 a->flags == (hw_phys ? 0 : PV_FLAG_SOFT_PHYS) && a->width == phys_width,
		 "VCPU %u page header", k);
	FZ_CHECK(valid(&pd.pv.ctl[k]) && !memcmp(&a->active, &pd.pv.ctl[k], sizeof(a->active)),
		 "VCPU %u control: %u counters, i-mode 0x%x", k, a->active.ncounters,
		 a->active.imode_mask);
	FZ_CHECK(!(a->overflow_pending >> PV_PMU_COUNTERS), "VCPU %u pending 0x%x", k,
		 a->overflow_pending);
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		FZ_CHECK(a->rdpmc_index[i] == i && a->soft_phys[i] <= WIDTH_MASK,
			 "VCPU %u counter %u", k, i);
}

static void check_vcpu(const struct vcpu *v)
{
	const struct vpmu *p = &v->pmu.vpmu;

	for (unsigned i = 0; i < VPMU_MAX_GP; i++)
		FZ_CHECK(p->pmc[i] <= WIDTH_MASK, "PMC%u 0x%llx", i, (unsigned long long)p->pmc[i]);
	FZ_CHECK(!(p->global_ctrl & ~(vpmu_gp_bits(p->cfg) | vpmu_fixed_bits(p->cfg))),
		 "GLOBAL_CTRL 0x%llx", (unsigned long long)p->global_ctrl);
}

/*
 * Backend (bits 1:0: off, soft, arch), VCPUs (bits 3:2), and for the arch backend its GP
 * counters (bits 5:4) and their width (32 + the next byte mod 32), as pmu_init() and
 * pmu_domain_init() would set them up. pmu_init() takes 64 too, where HC_PMU_READ's values
 * look like errors from 2^63 on (tests/unit/test_fuzz_regressions.c).
 */
static void reset(struct fz *in)
{
	uint8_t b = fz_u8(in);

	memset(hw, 0, sizeof(hw));
	pmu_backend = b % 3;
	pd = (struct pmu_domain){
		.cfg = { .enabled = pmu_backend != PMU_BACKEND_OFF, .version = 2, .num_gp = 4,
			 .num_fixed = 3, .width = 48 },
	};
	if (pmu_backend == PMU_BACKEND_ARCH) {
		pd.cfg.num_gp = 1 + (b >> 4 & 3);
		pv_init(&arch_ops, 32 + fz_u8(in) % 32);
	} else {
		pv_init(NULL, 0);
	}
	nvcpus = 1 + (b >> 2 & 3);
	for (unsigned k = 0; k < nvcpus; k++) {
		vcpus[k] = (struct vcpu){ .pmu = { .pd = &pd, .id = k }, .pcpu = k };
		vpmu_reset(&vcpus[k].pmu.vpmu, &pd.cfg);
	}
	area_gpa = RAM_SIZE;
}

/* The backend counts n events of ev at cpl: PV counters, hardware ones, the vPMU; overflows. */
static void count(struct vcpu *v, int ev, uint64_t n, unsigned cpl)
{
	uint64_t pmis;

	pv_count(v, ev, n, cpl);
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		hw[v->pcpu][i] += n;
	pmis = vpmu_count(&v->pmu.vpmu, ev, n, cpl);
	FZ_CHECK(!(pv_overflow(v, pmis) & ~pmis), "overflow bits made up");
}

/*
 * Input: the configuration (reset()), a RAM record count (mod RECORDS_MAX + 1) and records
 * (fake_ram_fill()), then operations (an opcode byte, a VCPU byte, an event byte, operands)
 * until the input ends.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_sequence(data, size);

	reset(&in);
	fake_ram_fill(&ram, &in, fz_u8(&in) % (RECORDS_MAX + 1));
	while (in.n) {
		uint8_t op = fz_u8(&in);
		struct vcpu *v = &vcpus[fz_u8(&in) % nvcpus];
		unsigned cpl = op >> 6;
		int ev = (int8_t)fz_u8(&in) % 6;
		uint64_t nr, args[3];

		switch (op % 6) {
		case 0:
			nr = op & 8 ? fz_u64(&in) : HC_PMU_BASE + fz_u8(&in) % 8;
			for (unsigned i = 0; i < 3; i++)
				args[i] = take_arg(&in);
			check_result(nr, pv_hypercall(v, nr, args));
			break;
		case 1: {
			uint16_t gpa = fz_u16(&in);

			guest_store(gpa, fz_u64(&in));
			break;
		}
		case 2:
			/* Descheduled, maybe moved to another PCPU, resumed later. */
			pv_switch_out(v);
			if (op & 8)
				v->pcpu = fz_u8(&in) % PCPUS;
			v->tsc += fz_u32(&in);
			pv_switch_in(v);
			break;
		case 3:
			count(v, ev, fz_u64(&in), cpl);
			break;
		case 4: {
			uint64_t sel[PV_PMU_COUNTERS];

			FZ_CHECK(!(pv_active(v) >> VPMU_EV_COUNT), "active events");
			FZ_CHECK(!(pv_amode(v, sel) >> PV_PMU_COUNTERS), "a-mode counters");
			break;
		}
		case 5:
			v->tsc += fz_u32(&in);
			break;
		}
		for (unsigned k = 0; k < nvcpus && area_gpa < RAM_SIZE; k++)
			check_area((const struct pv_vcpu_area *)(mem + area_gpa + k * 4096), k);
		for (unsigned k = 0; k < nvcpus; k++)
			check_vcpu(&vcpus[k]);
	}
	return 0;
}
