/* Where entry.S leaves each kernel entry's and exit's TSC: offsets in struct kcpu (GS base). */
#ifndef GUEST_STUB_KERNEL_STAMP_H
#define GUEST_STUB_KERNEL_STAMP_H

#define KCPU_ENTRY_TSC	8
#define KCPU_EXIT_TSC	16

/*
 * The instructions of an entry and an exit that the stamps leave out: the CPU's delivery of the
 * vector, the stub's two pushes and JMP and intr_common's four pushes before the stamp; the four
 * pops, ADD and IRETQ after it. The validation suite charges every entry for that many
 * (tests/validate/run.py reads this line).
 */
#define KSTAMP_UNSTAMPED	14

#endif
