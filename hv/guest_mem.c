/* Builds a page-walk context from the current VMCS and copies through it, never outside the domain's RAM. */
#include "boot/string.h"
#include "hv/domain.h"
#include "hv/guest_mem.h"
#include "hv/vmx_ops.h"

static bool read_gpa(void *ctx, uint64_t gpa, void *buf, size_t len)
{
	void *p = dom_gpa_to_hva(ctx, gpa, len);

	if (p)
		memcpy(buf, p, len);
	return p;
}

static bool write_gpa(void *ctx, uint64_t gpa, const void *buf, size_t len)
{
	void *p = dom_gpa_to_hva(ctx, gpa, len);

	if (p)
		memcpy(p, buf, len);
	return p;
}

static void walk_context(struct vcpu *v, struct gpt_cpu *c, uint64_t pdptes[4])
{
	/* The guest's own view of CR0/CR4 is the read shadow for the bits the host owns. */
	uint64_t cr0_mask = vmread(VMCS_CR0_MASK), cr4_mask = vmread(VMCS_CR4_MASK);

	c->cr0 = (vmread(VMCS_GUEST_CR0) & ~cr0_mask) | (vmread(VMCS_CR0_SHADOW) & cr0_mask);
	c->cr4 = (vmread(VMCS_GUEST_CR4) & ~cr4_mask) | (vmread(VMCS_CR4_SHADOW) & cr4_mask);
	c->cr3 = vmread(VMCS_GUEST_CR3);
	c->efer = vmread(VMCS_GUEST_EFER);
	c->cpl = vcpu_cpl();
	/* With EPT, PAE paging uses the PDPTE registers in the VMCS (SDM Vol. 3C 26.3.2.4). */
	for (unsigned i = 0; i < 4; i++)
		pdptes[i] = vmread(VMCS_GUEST_PDPTE0 + 2 * i);
	c->pdptes = pdptes;
	c->read_gpa = read_gpa;
	c->write_gpa = write_gpa;
	c->ctx = v->dom;
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
