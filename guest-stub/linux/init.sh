#!/bin/sh
# /init of perfvisor's Linux guest: mounts what perf needs, runs the known program bare and under
# perf stat and perf record, profiles the profile program, and leaves through the exit port.
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
# The initramfs has no /dev/console of its own, so the kernel gave init no output. The kernel's
# log is the way out here: its lines carry the kernel's timestamp, which the rows match.
exec </dev/console >/dev/kmsg 2>&1
echo "perfvisor-linux: init running on $(uname -r)"
# The serial tty itself: Linux finds COM1 and its IRQ 4 in the DSDT (hv/acpi.c); without them
# every write to it failed with EIO. This line reaches the log with no timestamp.
echo "perfvisor-linux: tty: ttyS0 writes" >/dev/ttyS0 || echo "perfvisor-linux: tty: failed"
dmesg | grep -E 'Performance Events|perf:' | sed 's/^/perfvisor-linux: dmesg: /'
/bin/known
echo "perfvisor-linux: known exited with $?"
perf --version 2>&1 | sed 's/^/perfvisor-linux: perf: /'
# known.S: instructions:u = 20004, branches:u = 10001 when a PMU counts them.
perf stat -x, -e instructions:u,branches:u /bin/known 2>&1 | sed 's/^/perfvisor-linux: perf: /'
# With the kernel's part too: at least those. Only where the scenario asks (perfvisor.kcount):
# the soft PMU steps the kernel then, which finishes where the guest's TSC stands still while it
# steps (tsc=vcpu), not under tsc=host, where the stepped tick handler never outruns its tick.
if grep -qw perfvisor.kcount /proc/cmdline; then
	perf stat -x, -e instructions,branches /bin/known 2>&1 | sed 's/^/perfvisor-linux: perf-k: /'
fi
# perf throttles sampling by how long its PMI handler takes on the guest's clock (at most 25% of
# the CPU): the longer, the fewer samples a tick it allows; at one it stops the counter in every
# PMI until the CPU's next tick, and what the program runs until then goes uncounted. Here that
# time is the hypervisor's (trapped MSR accesses) and, under tsc=host, any wait for a PCPU: one
# handler cut by a slice end took 10 ms. 0 turns the check off (Linux's sysctl/kernel.rst).
echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent
# Sampling: a PMI (an NMI: Linux programs LVTPC so) every 2000 user instructions of known.
# --per-thread: one event that follows the program from CPU to CPU. perf record's default is an
# event per CPU, each with its own period, so a program Linux moves between its CPUs would be
# sampled on two grids (docs/linux-guest.md, "Two VCPUs").
perf record -q --per-thread -e instructions:u -c 2000 -o /tmp/perf.data /bin/known 2>&1 |
	sed 's/^/perfvisor-linux: record: /'
echo "perfvisor-linux: record: samples $(perf script -i /tmp/perf.data -F ip 2>/dev/null | wc -l)"
perf script -i /tmp/perf.data -F ip,sym 2>&1 | sort | uniq -c | sed 's/^/perfvisor-linux: script: /'
# A profile: profile.S's four functions cost 10, 7, 4 and 1 times 2000 user instructions, so
# sampled every 2000 they get exactly 10, 7, 4 and 1 samples (22 in all).
perf record -q --per-thread -e instructions:u -c 2000 -o /tmp/profile.data /bin/profile 2>&1 |
	sed 's/^/perfvisor-linux: profile: /'
perf report -i /tmp/profile.data --stdio -F overhead,sample,sym 2>&1 | grep -v '^#*$' |
	sed 's/^/perfvisor-linux: profile: /'
perf script -i /tmp/profile.data -F ip,sym 2>&1 | sort | uniq -c |
	sed 's/^/perfvisor-linux: profile: script: /'
echo "perfvisor-linux: done"
/bin/pv-exit 0
poweroff -f
