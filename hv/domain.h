/* A domain: one guest image with its RAM (mapped by EPT), its VCPUs, its devices and its fate. */
#ifndef PERFVISOR_HV_DOMAIN_H
#define PERFVISOR_HV_DOMAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "lib/spinlock.h"
#include "hv/domcfg.h"
#include "hv/fwcfg.h"
#include "hv/testdev.h"
#include "hv/vcpu.h"
#include "hv/vioapic.h"
#include "hv/vuart.h"

#define MAX_DOMAINS	32

enum dom_state {
	DOM_RUNNING,
	DOM_EXITED,		/* the guest ended itself: port 0xF4, "Shutdown", or the exit hypercall */
	DOM_KILLED,		/* the hypervisor ended it: fault, triple fault, illegal access */
	DOM_NOT_STARTED,	/* bad image or module string */
};

struct domain {
	unsigned id;
	struct dom_config cfg;
	uint64_t ram_hpa;		/* guest physical 0 is here; RAM is host-contiguous */
	uint64_t ram_size;
	uint64_t eptp;
	volatile uint64_t ept_gen;	/* bumped when mappings change: PCPUs must INVEPT */
	struct spinlock ept_lock;	/* serializes EPT changes once the domain runs */
	uint64_t ro_start, ro_end;	/* guest-physical range mapped read-only (the PMU pages) */
	struct vcpu *vcpus[DOM_VCPUS_MAX];
	unsigned nvcpus;
	struct vuart uart;
	struct spinlock uart_lock;	/* VCPUs of one domain may print from several PCPUs */
	bool uart_irq;			/* its IRQ pin as last told to the I/O APIC (under uart_lock) */
	struct fwcfg fwcfg;
	struct vioapic ioapic;
	struct spinlock ioapic_lock;
	struct testdev testdev;		/* its register; used when cfg.testdev */
	uint64_t testdev_hpa;		/* the test RAM at TESTDEV_IOMEM_BASE; 0: none */
	struct pmu_domain pmu;
	struct spinlock lock;
	volatile enum dom_state state;
	int exit_code;
	char fate[160];			/* the reason, in words, when killed or not started */
	unsigned shutdown_match;	/* progress through the "Shutdown" string on port 0x8900 */
	uint64_t start_tsc, end_tsc;
	/* What the summary reports of each VCPU, kept when the VCPUs are freed. */
	struct dom_vcpu_stats {
		uint64_t exits, steps, retired, hv_ticks, hv_counted, hv_counted_branches;
		uint64_t guest_tsc, hv_tsc;
		uint64_t ring0_runs;
		uint64_t cache_hits, cache_fills, cache_drops;	/* the soft PMU's block cache */
		unsigned migrations;
	} stats[DOM_VCPUS_MAX];
	unsigned vcpus_gone;		/* VCPUs released after the domain ended */
	volatile bool released;		/* RAM, EPT, VMCSs and VCPUs are back in the allocator */
};

extern struct domain *domains;		/* MAX_DOMAINS of them, from dom_table_init() */
extern unsigned num_domains;

/* Allocates the domain table; false when the frame allocator cannot give it. */
bool dom_table_init(void);

/*
 * Host pointer for guest-physical [gpa, gpa+len), or NULL if not all inside the domain's RAM
 * (or all inside its test device's RAM, which is memory like the rest).
 */
static inline void *dom_gpa_to_hva(struct domain *d, uint64_t gpa, uint64_t len)
{
	uint64_t off = gpa - TESTDEV_IOMEM_BASE;

	if (d->testdev_hpa && gpa >= TESTDEV_IOMEM_BASE && off < TESTDEV_IOMEM_LEN &&
	    len <= TESTDEV_IOMEM_LEN - off)
		return (void *)(d->testdev_hpa + off);
	if (gpa >= d->ram_size || len > d->ram_size - gpa)
		return (void *)0;
	return (void *)(d->ram_hpa + gpa);
}

/* Module `name` ("data=NAME") is a file for domains (their initrd=NAME), not a domain. */
void dom_add_data(const char *name, const void *start, uint64_t len);
/* Builds domain `index` from a module; on failure the domain is DOM_NOT_STARTED with a fate. */
void dom_create(unsigned index, const void *image, uint64_t image_len, const char *modstr);
/* Domain `index` (named by its default name) is DOM_NOT_STARTED, for the reason given. */
void dom_refuse(unsigned index, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The guest ended itself with a code. */
void dom_exit(struct domain *d, int code);
/* The hypervisor ends the domain; why is printed with a dump of the offending VCPU. */
void dom_kill(struct domain *d, struct vcpu *v, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* COM1 of the domain, shared by its VCPUs. */
/* A guest access to COM1 by v; a change of its IRQ pin goes to the domain's I/O APIC. */
void dom_uart_io(struct vcpu *v, unsigned off, bool write, unsigned size, uint32_t *val);
/*
 * Bytes for COM1's output from elsewhere than its THR (port 0xE9, the console hypercall), all
 * at once: a kill on another PCPU flushes the line before or after them, never inside.
 */
void dom_uart_write(struct domain *d, const char *buf, uint64_t len);
void dom_uart_flush(struct domain *d);
/* An ended domain's VCPU left its last PCPU: keep its statistics, release the domain with the last. */
void dom_vcpu_gone(struct vcpu *v);
/* Frames free before the first domain was built, to compare with at the end (leak check). */
extern uint64_t dom_frames_free_at_start;
/* True once every domain's frames are back in the allocator. */
bool dom_all_released(void);
/* True once no domain is running. */
bool dom_all_ended(void);
/* The end-of-run table; returns the overall exit code. */
int dom_summary(void);

#endif
