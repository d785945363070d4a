/* Fuzz target for pmu/pv.c on fake VCPUs over a real hv/ept.c EPT: hypercalls, stores, switches, counting. */
#include <limits.h>

#include "pmu/pv.c"
#include "pmu/vpmu.c"
#include "tests/fuzz/fakes.h"
#include "hv/vmx_caps.h"

/*
 * EPT tables come from the heap (their "host-physical" addresses are pointers), at most
 * frames_left more of them: a SETUP may run out of memory half way.
 */
static long frames_out, frames_left;

uint64_t frame_alloc(void)
{
	void *p;

	if (!frames_left)
		return 0;
	p = aligned_alloc(4096, 4096);
	if (!p)
		abort();
	frames_left--;
	frames_out++;
	return (uint64_t)(uintptr_t)p;
}

int frame_free(uint64_t pa)
{
	frames_out--;
	free((void *)(uintptr_t)pa);
	return 0;
}

#include "hv/ept.c"

struct vmx_caps vmx_caps;

#define RAM_SIZE	0x10000u	/* 64 KiB of guest RAM the fuzzer fills, linear = physical */
#define DOM_RAM		(4ull << 20)	/* the domain's RAM in its EPT: two 2 MiB leaves */
/* Where those 64 KiB lie: 36 KiB below the leaves' boundary, so that areas straddle it. */
#define RAM_BASE	(0x200000ull - 0x9000)
#define RAM_HPA		(1ull << 30)	/* the EPT maps gpa to RAM_HPA + gpa */
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
static uint64_t hw[PCPUS][PV_PMU_COUNTERS];	/* the arch backend's GP counters, per PCPU */
/* The domain's EPT, and what hv/vcpu_pmu.c records of the area it made read-only. */
static uint64_t eptp, ro_start, ro_end;
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

/* The EPT leaf for gpa (hv/ept.c's layout): its entry, and the bytes it maps in *size (0: none). */
static uint64_t ept_leaf(uint64_t gpa, uint64_t *size)
{
	const uint64_t *t = table(eptp);

	for (int l = 3; l >= 0; l--) {
		uint64_t e = t[(gpa >> (12 + 9 * l)) & 511];

		if (!(e & EPT_RWX))
			break;
		if (l == 0 || (e & EPT_LARGE)) {
			*size = 1ull << (12 + 9 * l);
			return e;
		}
		t = table(e);
	}
	*size = 0;
	return 0;
}

/* The page at gpa: mapped at RAM_HPA + gpa, write-back, and its rights (0: not mapped). */
static uint64_t ept_rights(uint64_t gpa)
{
	uint64_t size, e = ept_leaf(gpa, &size);

	if (!size)
		return 0;
	FZ_CHECK((e & ADDR_MASK) + (gpa & (size - 1) & ~0xfffull) == RAM_HPA + (gpa & ~0xfffull) &&
		 (e & (7ull << 3)) == EPT_MT_WB, "page 0x%llx maps 0x%llx", (unsigned long long)gpa,
		 (unsigned long long)(e & ADDR_MASK));
	return e & EPT_RWX;
}

/* The page at gpa is read-only in the EPT exactly when the recorded area holds it. */
static uint64_t checked_rights(uint64_t gpa)
{
	uint64_t rights = ept_rights(gpa);
	bool ro = gpa < ro_end && gpa >= ro_start;

	FZ_CHECK(gpa >= DOM_RAM ? !rights : rights == (ro ? EPT_R : EPT_RWX),
		 "page 0x%llx: rights %llu, %s the area [0x%llx, 0x%llx)", (unsigned long long)gpa,
		 (unsigned long long)rights, ro ? "in" : "outside", (unsigned long long)ro_start,
		 (unsigned long long)ro_end);
	return rights;
}

/* [gpa, gpa + len) is in the fuzzed RAM, and every page of it has the rights `need` in the EPT. */
static bool ept_allows(uint64_t gpa, uint64_t len, uint64_t need)
{
	if (gpa < RAM_BASE || !fake_ram_has(&ram, gpa - RAM_BASE, len))
		return false;
	for (uint64_t p = gpa & ~0xfffull; p < gpa + len; p += 4096)
		if ((checked_rights(p) & need) != need)
			return false;
	return true;
}

/* Where the EPT maps the byte at gpa (in the fuzzed RAM). */
static uint8_t *ept_byte(uint64_t gpa)
{
	uint64_t size, e = ept_leaf(gpa, &size);

	return mem + ((e & ADDR_MASK) + (gpa & (size - 1)) - RAM_HPA - RAM_BASE);
}

/* hv/guest_mem.c: guest memory for the hypervisor; writes refused in the area (ro_start, ro_end). */
bool vcpu_pmu_read_guest(struct vcpu *v, void *dst, uint64_t la, uint64_t len)
{
	(void)v;
	if (!ept_allows(la, len, EPT_R))
		return false;
	for (uint64_t i = 0; i < len; i++)
		((uint8_t *)dst)[i] = *ept_byte(la + i);
	return true;
}

/* hv/vcpu_pmu.c: the same bytes in place, when they lie in one page. */
const void *vcpu_pmu_guest_bytes(struct vcpu *v, uint64_t la, uint64_t len)
{
	(void)v;
	if (!len || (la & 0xFFF) + len > 4096 || !ept_allows(la, len, EPT_R))
		return NULL;
	return ept_byte(la);
}

/* Through the EPT, all or nothing: a page without W (the area's) refuses the whole write. */
static bool ept_write(uint64_t gpa, const void *src, uint64_t len)
{
	if (!ept_allows(gpa, len, EPT_W))
		return false;
	for (uint64_t i = 0; i < len; i++)
		*ept_byte(gpa + i) = ((const uint8_t *)src)[i];
	return true;
}

bool vcpu_pmu_write_guest(struct vcpu *v, uint64_t la, const void *src, uint64_t len)
{
	(void)v;
	if (la < ro_end && la + len > ro_start)
		return false;
	/* Outside the area the EPT agrees (checked_rights()): every page is writable. */
	return ept_write(la, src, len);
}

/* hv/vcpu_pmu.c: page-aligned, one page per VCPU of the domain, in its RAM; then read-only. */
void *vcpu_pmu_map_area(struct vcpu *v, uint64_t gpa, unsigned n, const char **why)
{
	uint64_t len = (uint64_t)n * 4096;

	(void)v;
	if (gpa & 0xfff || n != nvcpus || gpa < RAM_BASE || !fake_ram_has(&ram, gpa - RAM_BASE, len)) {
		*why = "bad area";
		return NULL;
	}
	if (!ept_map(eptp, gpa, RAM_HPA + gpa, len, EPT_R)) {
		*why = "out of memory for EPT tables";
		return NULL;
	}
	ro_start = gpa;
	ro_end = gpa + len;
	return mem + (gpa - RAM_BASE);
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

/* The guest's own store: through the EPT, an EPT violation on a page without W (the area's). */
static void guest_store(uint64_t gpa, uint64_t val)
{
	if (!ept_write(gpa, &val, 8))
		FZ_CHECK(gpa < RAM_BASE || !fake_ram_has(&ram, gpa - RAM_BASE, 8) ||
			 (gpa < ro_end && gpa + 8 > ro_start), "store at 0x%llx refused",
			 (unsigned long long)gpa);
}

/* A hypercall argument: mostly an address in the fuzzed RAM, sometimes any number. */
static uint64_t take_arg(struct fz *in)
{
	uint16_t a = fz_u16(in);

	return a & 1 ? fz_u64(in) : RAM_BASE + (a >> 1 << 2);
}

static void check_result(uint64_t nr, int64_t r)
{
	if (r < 0) {
		FZ_CHECK(r == -PV_EINVAL || r == -PV_EFAULT || r == -PV_ENOSYS, "error %lld",
			 (long long)r);
		return;
	}
	if (nr == HC_PMU_ISUSPEND || nr == HC_PMU_IACK)
		FZ_CHECK((uint64_t)r < 1ull << PV_PMU_COUNTERS * PV_PENDING_BITS,
			 "overflow counts 0x%llx", (long long)r);
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
	uint64_t pending;

	FZ_CHECK(a->version == PV_PMU_VERSION && a->size == sizeof(*a) && a->vcpu_id == k &&
		 a->flags == (hw_phys ? 0 : PV_FLAG_SOFT_PHYS) && a->width == phys_width &&
		 a->wrap == pv_wrap(~0ull, phys_width),
		 "VCPU %u page header", k);
	FZ_CHECK(valid(&pd.pv.ctl[k]) && !memcmp(&a->active, &pd.pv.ctl[k], sizeof(a->active)),
		 "VCPU %u control: %u counters, i-mode 0x%x", k, a->active.ncounters,
		 a->active.imode_mask);
	pending = 0;
	for (unsigned i = 0; i < PV_PMU_COUNTERS; i++)
		pending += pv_pending_count(a->overflow_pending, i);
	FZ_CHECK(pending <= a->overflows, "VCPU %u pending 0x%x, %llu overflows in all", k,
		 a->overflow_pending, (unsigned long long)a->overflows);
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
 * pmu_domain_init() would set them up; the EPT as dom_create() builds it (bits 7:6). pmu_init() takes 64 too, where HC_PMU_READ's values
 * look like errors from 2^63 on (tests/unit/test_fuzz_regressions.c).
 */
static void reset(struct fz *in)
{
	uint8_t b = fz_u8(in);

	memset(hw, 0, sizeof(hw));
	pmu_backend = (b & 3) % 3;
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
	/* Bit 6: a CPU without 2 MiB EPT pages; bit 7: 0 to 2 frames for SETUP's tables. */
	vmx_caps.ept_vpid = b & 0x40 ? 0 : 1ull << 16;
	frames_left = LONG_MAX;
	eptp = ept_create();
	FZ_CHECK(eptp && ept_map(eptp, 0, RAM_HPA, DOM_RAM, EPT_RWX), "the domain's EPT");
	if (b & 0x80)
		frames_left = fz_u8(in) % 3;
	ro_start = ro_end = 0;
	nvcpus = 1 + (b >> 2 & 3);
	for (unsigned k = 0; k < nvcpus; k++) {
		vcpus[k] = (struct vcpu){ .pmu = { .pd = &pd, .id = k }, .pcpu = k };
		vpmu_reset(&vcpus[k].pmu.vpmu, &pd.cfg);
	}
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

/* Every page of the domain's RAM: read-only exactly in the area, RWX elsewhere, at its address. */
static void check_ept(void)
{
	uint64_t size;

	for (uint64_t gpa = 0; gpa < DOM_RAM; gpa += size) {
		checked_rights(gpa);
		ept_leaf(gpa, &size);
		/* A 2 MiB leaf gives all its pages one right: none of them may be the area's. */
		FZ_CHECK(size == 4096 || (size == 0x200000 && (gpa >= ro_end || gpa + size <= ro_start)),
			 "a %llu-byte leaf at 0x%llx", (unsigned long long)size,
			 (unsigned long long)gpa);
	}
}

/* How many of the leaves [gpa, gpa + len) of the domain's RAM touches are 2 MiB ones. */
static long large_leaves(uint64_t gpa, uint64_t len)
{
	long n = 0;
	uint64_t size;

	for (uint64_t a = gpa & ~0x1fffffull; a < gpa + len && a < DOM_RAM; a += 0x200000) {
		ept_leaf(a, &size);
		n += size == 0x200000;
	}
	return n;
}

/*
 * After HC_PMU_SETUP: the first that succeeds maps the area read-only, splitting the 2 MiB
 * leaves it touches (`splits`, one table each: a failed SETUP may have split some already); any
 * later one is refused and changes nothing; a failed one keeps no claim and leaves every page's
 * rights as they were.
 */
static void check_setup(bool was_mapped, long frames, long splits, int64_t r,
			const uint64_t args[3])
{
	uint64_t gpa = args[0], end = gpa + nvcpus * 4096ull;

	if (was_mapped) {
		FZ_CHECK(r == -PV_EINVAL && frames_out == frames, "a second SETUP: %lld, %ld tables",
			 (long long)r, frames_out - frames);
		return;
	}
	check_ept();
	if (r)
		return;
	FZ_CHECK(ro_start == gpa && ro_end == end && (uint8_t *)pd.pv.area == mem + (gpa - RAM_BASE),
		 "the area at 0x%llx", (unsigned long long)gpa);
	FZ_CHECK(frames_out == frames + splits, "SETUP at 0x%llx: %ld new tables, expected %ld",
		 (unsigned long long)gpa, frames_out - frames, splits);
}

/*
 * Input: the configuration (reset()), a RAM record count (mod RECORDS_MAX + 1) and records
 * (fake_ram_fill()), then operations (an opcode byte, a VCPU byte, an event byte, operands)
 * until the input ends.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fz in = fz_sequence(data, size);
	long frames;

	reset(&in);
	fake_ram_fill(&ram, &in, fz_u8(&in) % (RECORDS_MAX + 1));
	while (in.n) {
		uint8_t op = fz_u8(&in);
		struct vcpu *v = &vcpus[fz_u8(&in) % nvcpus];
		unsigned cpl = op >> 6;
		int ev = (int8_t)fz_u8(&in) % 6;
		uint64_t nr, args[3];

		switch (op % 6) {
		case 0: {
			bool was_mapped = pd.pv.area;
			long frames = frames_out, splits;
			int64_t r;

			nr = op & 8 ? fz_u64(&in) : HC_PMU_BASE + fz_u8(&in) % 8;
			for (unsigned i = 0; i < 3; i++)
				args[i] = take_arg(&in);
			splits = large_leaves(args[0], nvcpus * 4096ull);
			r = pv_hypercall(v, nr, args);
			check_result(nr, r);
			if (nr == HC_PMU_SETUP && pmu_backend != PMU_BACKEND_OFF)
				check_setup(was_mapped, frames, splits, r, args);
			break;
		}
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
		FZ_CHECK(pd.pv.claimed == (pd.pv.area != NULL), "claimed %d, area %p",
			 pd.pv.claimed, (void *)pd.pv.area);
		for (unsigned k = 0; k < nvcpus && pd.pv.area; k++) {
			checked_rights(ro_start + k * 4096);
			check_area((const struct pv_vcpu_area *)(mem + (ro_start - RAM_BASE) +
								 k * 4096), k);
		}
		for (unsigned k = 0; k < nvcpus; k++)
			check_vcpu(&vcpus[k]);
	}
	check_ept();
	frames = frames_out;
	FZ_CHECK((long)ept_destroy(eptp) == frames && frames_out == 0,
		 "EPT tables: %ld in use, %ld after destroy", frames, frames_out);
	return 0;
}
