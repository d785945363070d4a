/* Builds a page-walk context from the current VMCS and copies through it, never outside the domain's RAM. */
#include "lib/string.h"
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/guest_regs.h"
#include "hv/step_cache.h"
#include "hv/vmx_ops.h"

static bool read_gpa(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	void *p = dom_gpa_to_hva(ctx, gpa, len);

	if (p)
		memcpy(buf, p, len);
	return p;
}

/* Writes on the guest's behalf obey what the guest itself may write: never its read-only PMU pages. */
static bool write_gpa(void *ctx, uint64_t gpa, const void *buf, size_t len)
{
	struct domain *d = ctx;
	void *p = dom_gpa_to_hva(d, gpa, len);

	if (gpa < d->ro_end && gpa + len > d->ro_start)
		return false;
	if (p) {
		memcpy(p, buf, len);
		/* No EPT violation told the block cache of this write: say it, after it. */
		step_cache_hv_write(d, gpa, len);
	}
	return p;
}

/* What a remembered walk's hit reads of the context: control registers, CPL, RAM window. */
static inline __attribute__((always_inline)) void walk_regs(struct vcpu *v, struct gpt_cpu *c)
{
	c->cr0 = guest_regs_cr0();
	c->cr4 = guest_regs_cr4();
	c->cr3 = vmread(VMCS_GUEST_CR3);
	c->efer = vmread(VMCS_GUEST_EFER);
	c->cpl = guest_regs_cpl();
	/* Paging structures in RAM are read straight from it (RAM is host-contiguous). */
	c->ram = (const uint8_t *)v->dom->ram_hpa;
	c->ram_size = v->dom->ram_size;
}

/* The rest, for a walk. */
static inline __attribute__((always_inline)) void
walk_access(struct vcpu *v, struct gpt_cpu *c, uint64_t pdptes[4])
{
	/* With EPT, PAE paging uses the PDPTE registers in the VMCS (SDM Vol. 3C 26.3.2.4). */
	for (unsigned i = 0; i < 4 && (c->cr4 & CR4_PAE) && !(c->efer & EFER_LMA); i++)
		pdptes[i] = vmread(VMCS_GUEST_PDPTE0 + 2 * i);
	c->pdptes = pdptes;
	c->read_gpa = read_gpa;
	c->write_gpa = write_gpa;
	c->ctx = v->dom;
}

static inline __attribute__((always_inline)) void
walk_context(struct vcpu *v, struct gpt_cpu *c, uint64_t pdptes[4])
{
	walk_regs(v, c);
	walk_access(v, c, pdptes);
}

enum gpt_status guest_read(struct vcpu *v, void *dst, uint64_t la, size_t len,
			   enum gpt_access acc, struct gpt_result *res)
{
	struct gpt_cpu c;
	uint64_t pdptes[4];

	walk_context(v, &c, pdptes);
	return gpt_copy_from_guest(&c, dst, la, len, acc, res);
}

enum gpt_status guest_write(struct vcpu *v, uint64_t la, const void *src, size_t len,
			    struct gpt_result *res)
{
	struct gpt_cpu c;
	uint64_t pdptes[4];

	walk_context(v, &c, pdptes);
	return gpt_copy_to_guest(&c, la, src, len, res);
}

enum gpt_status guest_translate(struct vcpu *v, uint64_t la, enum gpt_access acc,
				struct gpt_memo *memo, struct gpt_result *res)
{
	struct gpt_cpu c;
	uint64_t pdptes[4];

	walk_context(v, &c, pdptes);
	return gpt_translate_memo(&c, la, acc, memo, res);
}

/* guest_map() past a remembered walk's hit: the whole context, out of line. */
static __attribute__((noinline)) const void *map_walk(struct vcpu *v, uint64_t la, size_t len,
						      enum gpt_access acc, struct gpt_memo *memo)
{
	struct gpt_cpu c;
	uint64_t pdptes[4];

	walk_context(v, &c, pdptes);
	return gpt_map_memo(&c, la, len, acc, memo);
}

/* The hit's context stays in registers: only a walk needs it whole, in memory. */
const void *guest_map(struct vcpu *v, uint64_t la, size_t len, enum gpt_access acc,
		      struct gpt_memo *memo)
{
	struct gpt_cpu c;
	const void *p;

	walk_regs(v, &c);
	p = gpt_map_hit(&c, la, len, acc, memo);
	return p ? p : map_walk(v, la, len, acc, memo);
}

enum insn_mode guest_code_mode(void)
{
	uint32_t cs_ar = vmread(VMCS_GUEST_CS_AR);

	if ((vmread(VMCS_GUEST_EFER) & (1ull << 10)) && (cs_ar & (1u << 13)))
		return INSN_MODE_64;
	return (cs_ar & (1u << 14)) ? INSN_MODE_32 : INSN_MODE_16;
}

unsigned guest_fetch_insn(struct vcpu *v, uint8_t bytes[INSN_MAX_LEN])
{
	uint64_t rip = vmread(VMCS_GUEST_RIP) + vmread(VMCS_GUEST_CS_BASE);
	struct gpt_result res;
	struct gpt_cpu c;
	uint64_t pdptes[4];
	unsigned n;

	walk_context(v, &c, pdptes);
	if (gpt_copy_from_guest(&c, bytes, rip, INSN_MAX_LEN, GPT_FETCH, &res) == GPT_OK)
		return INSN_MAX_LEN;
	/* The instruction may end just before an unmapped page: take what is there. */
	for (n = 0; n < INSN_MAX_LEN; n++)
		if (gpt_copy_from_guest(&c, &bytes[n], rip + n, 1, GPT_FETCH, &res) != GPT_OK)
			break;
	return n;
}
