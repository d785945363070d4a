/* Bringing up the other CPUs (INIT-SIPI-SIPI) and starting VMX on each. */
#ifndef PERFVISOR_HV_SMP_H
#define PERFVISOR_HV_SMP_H

/* Starts every enabled CPU the firmware lists, up to max_cpus in all; num_pcpus counts the ones that came up. */
void smp_start_aps(unsigned max_cpus, void (*cpu_init)(struct pcpu *p));
/* Lets the APs into their scheduling loops once the domains exist. */
void smp_release_aps(void);

#endif
