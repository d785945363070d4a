/* Per-CPU bookkeeping: the pcpu array (each CPU's descriptor tables are boot/'s: boot/cpu_init.c). */
#include "hv/pcpu.h"

struct pcpu pcpus[MAX_PCPUS];
unsigned num_pcpus = 1;
