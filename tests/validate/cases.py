"""The validation matrix: every case as a scenario file, after seed 003 section 5 and Metis."""

from dataclasses import dataclass

# The counter modes (guest-stub/workloads/meter.h): the library's three, and raw MSRs.
COUNTERS = ("pv-a", "pv-i", "hvm", "raw-msr")
ACCTS = ("guest", "vcpu", "hybrid")
# Seed 003 5.1.1, with two domains of two threads each.
SCENARIOS = {
    "1": "each domain on 2 dedicated PCPUs, each thread on its own VCPU",
    "2": "each domain on its own PCPU, its threads sharing one VCPU",
    "3": "both domains on one PCPU, threads sharing one VCPU",
    "4": "as 1, threads migrating between VCPUs and VCPUs between PCPUs at random",
    # The baselines for time: the same domain alone, its threads placed as in 1 and 4, or 2 and 3.
    "ref1": "one domain alone, each thread on its own VCPU and PCPU (baseline of 1 and 4)",
    "ref2": "one domain alone, its threads sharing one VCPU (baseline of 2 and 3)",
}
# Seed 003 5.1.2: the overflow test's placements.
OVF_PLACEMENTS = {
    "ref": "one domain alone (the baseline)",
    "sep": "the domains on separate PCPUs",
    "shared": "the domains sharing one PCPU",
}
# Hypervisor slice and guest quantum, in TSC time. A stepped instruction costs ~3,000 ticks in
# Bochs (the hypervisor's exit handling), so a slice of 100 ms holds ~1,500 guest instructions
# and a quantum of 4M ticks ~1,300: a window of ~10,000 sees several switches of each kind.
# Not much shorter: a direct read of three counters takes ~270 stepped instructions, ~1M ticks,
# and retries whenever a slice ends inside it, even with no other VCPU to run (report.md).
SLICE_US = 100000
QUANTUM = 4000000
# With vcpu accounting the guest makes no progress at that quantum when two threads share a
# VCPU (report.md): five times longer.
QUANTUM_VCPU = 20000000
SEED = 7


@dataclass
class Domain:
    name: str
    guest: str
    vcpus: int
    pin: str  # "" for unpinned
    args: list
    acct: str = "guest"
    mem: str = ""


@dataclass
class Case:
    name: str
    kind: str  # count, ovf, profile, scale, native, canary
    scenario: str
    counters: str
    acct: str
    cpus: int
    domains: list
    ref: str = ""  # the case whose TSC and cycles are this one's baseline
    migrate: bool = False
    emu: str = "bochs"  # qemu: the guest boots natively, by QEMU's multiboot loader
    timeout: int = 600
    mem_mb: int = 256
    # A canary: run with this fault injected, the case passes only if its counts come out
    # wrong (the suite proves it can see the fault it exists to catch).
    inject: str = ""
    # A guest kernel's fault (guest-stub/kernel/pmu.c: inject=early-start), for its canary.
    guest_inject: str = ""

    def scenario_text(self, inject):
        """The GRUB scenario (scripts/scenario.sh) of this case."""
        hv = [f"loglevel=4 pmu=soft slice={SLICE_US}"]
        if self.migrate:
            hv.append(f"migrate=random seed={SEED}")
        if inject:
            hv.append(f"inject={inject}")
        lines = [f"# validation case {self.name}: {SCENARIOS.get(self.scenario, self.kind)}",
                 "multiboot perfvisor.elf " + " ".join(hv)]
        for d in self.domains:
            opts = [f"name={d.name}", f"vcpus={d.vcpus}", f"acct={d.acct}"]
            if d.pin:
                opts.append(f"pin={d.pin}")
            if d.mem:
                opts.append(f"mem={d.mem}")
            args = d.args + ([f"inject={self.guest_inject}"] if self.guest_inject else [])
            lines.append(f"module guest/{d.guest}.elf {' '.join(opts)} -- {' '.join(args)}")
        return "\n".join(lines) + "\n"


def guest_args(counters, acct, extra, migrate=False):
    args = [f"counters={counters}",
            f"quantum={QUANTUM_VCPU if acct == 'vcpu' else QUANTUM}"] + extra
    if migrate:
        args += ["migrate=random", f"seed={SEED}"]
    if acct == "vcpu":
        args.append("expect=more")  # the hypervisor's own work is counted too
    return args


# With vcpu accounting each overflow's notification is counted too: its handler's stepped
# instructions cost the hypervisor ~3,000 ticks each, which count as instructions, so a period
# shorter than that work overflows again before the handler returns, for ever (seen: a period
# of 999 never finishes). 2^22: above a notification's ~1M ticks (a few hundred stepped
# instructions), below the ~10M a full pv-i window counts (each guest instruction ~900 ticks).
IMODE_PERIOD_VCPU = 1 << 22


def imode_period(n, acct):
    """pv-i counts cross overflows: the loop of n iterations runs 2n branches and 10.5n
    instructions (wl_mbench_expect), so a period of n - 1 overflows each of those counters at
    least twice in the window, and, being no divisor of either, leaves a remainder in the
    counter. (The guest's cycles counter keeps its 2^47: under hybrid accounting it takes the
    hypervisor's ticks, and a short period would overflow again inside each notification.)"""
    return IMODE_PERIOD_VCPU if acct == "vcpu" else n - 1


def count_case(scenario, counters, acct, n):
    """Seed 003 5.1.1: two domains (one for ref) of two microbenchmark threads."""
    work = [f"n={n}", "threads=2"]
    if counters == "pv-i":
        work.append(f"iperiod={imode_period(n, acct)}")
    layout = {  # scenario: (Bochs CPUs, [(vcpus, pin)] per domain)
        "1": (4, [(2, "0,1"), (2, "2,3")]),
        "2": (2, [(1, "0"), (1, "1")]),
        "3": (1, [(1, "0"), (1, "0")]),
        "4": (4, [(2, ""), (2, "")]),
        "ref1": (2, [(2, "0,1")]),
        "ref2": (1, [(1, "0")]),
    }
    cpus, doms = layout[scenario]
    migrate = scenario == "4"
    domains = [Domain(f"d{i}", "microbench", vcpus, pin,
                      guest_args(counters, acct, work, migrate), acct)
               for i, (vcpus, pin) in enumerate(doms)]
    prefix = scenario if scenario.startswith("ref") else f"s{scenario}"
    ref = {"1": "ref1", "4": "ref1", "2": "ref2", "3": "ref2"}.get(scenario)
    return Case(f"{prefix}-{counters}-{acct}", "count", scenario, counters, acct, cpus, domains,
                ref=f"{ref}-{counters}-{acct}" if ref else "", migrate=migrate)


def ovf_case(placement, counters, n, period):
    """Seed 003 5.1.2 (figures 8-9): four sampling threads per domain on random VCPUs."""
    work = [f"n={n}", f"period={period}", "threads=4"]
    pins = {"sep": ["0", "1"], "shared": ["0", "0"], "ref": ["0"]}[placement]
    cpus = {"sep": 2, "shared": 1, "ref": 1}[placement]
    domains = [Domain(f"d{i}", "ovf_threads", 2, pin,
                      guest_args(counters, "guest", work, migrate=True))
               for i, pin in enumerate(pins)]
    return Case(f"ovf-{placement}-{counters}", "ovf", placement, counters, "guest", cpus,
                domains, ref="" if placement == "ref" else f"ovf-ref-{counters}")


def profile_case(placement, counters, rounds):
    """Seed 003 table 3 and Metis: domains sampling different events at the same time. Cycles
    are sampled every 40000 (pchase.c) and follow the instructions, about one a cycle under
    Bochs now that the soft PMU runs the chase loops whole: the cycles domain runs 100 times
    the rounds, so that its smallest function (149 instructions a round) gets about 11 samples
    and the four rank by cost (30 rounds gave 0 to 2 samples each)."""
    samples = ("ins", "br", "cyc")
    pins = {"same": ["0"] * 3, "diff": ["0", "1", "2"]}[placement]
    domains = [Domain(f"{s}", "pchase", 1, pin,
                      guest_args(counters, "guest",
                                 [f"sample={s}", f"rounds={rounds * (100 if s == 'cyc' else 1)}"]))
               for s, pin in zip(samples, pins)]
    scenario = {"same": "1: the domains on the same PCPU",
                "diff": "2: each domain on its own PCPU"}[placement]
    return Case(f"metis-{placement}-{counters}", "profile", scenario, counters, "guest",
                len(set(pins)), domains)


def scale_case(counters, domains, n):
    """Many domains of two VCPUs on two PCPUs, migrating: the counts must stay exact."""
    doms = [Domain(f"x{i:02d}", "microbench", 2, "",
                   guest_args(counters, "guest", [f"n={n}", "threads=2"], migrate=True),
                   mem="4M")
            for i in range(domains)]
    return Case(f"scale-{domains}x2-{counters}", "scale", f"{domains} domains x 2 VCPUs on 2 "
                "PCPUs, migrating", counters, "guest", 2, doms, migrate=True, timeout=900)


def native_case(n):
    """The microbenchmark booted without perfvisor under QEMU TCG: no PMU, so it must say so
    and still run."""
    return Case("native-qemu", "native", "natively under QEMU TCG, no hypervisor", "pv-a",
                "guest", 2, [Domain("native", "microbench", 2, "",
                                    guest_args("pv-a", "guest", [f"n={n}", "threads=2"]))],
                emu="qemu", timeout=60)


def canary(case, inject, guest=False):
    """The case again with a fault injected, in the hypervisor or (guest) the guest kernel:
    it passes only if the fault shows."""
    case.name, case.kind = f"canary-{inject}", "canary"
    if guest:
        case.guest_inject = inject
    else:
        case.inject = inject
    return case


def matrix(quick):
    """Every case of `make validate`, or the small set of `make validate-quick`."""
    if quick:
        # a-mode sums across domain switches, migration with trap-and-emulate, i-mode
        # overflows, i-mode counts across overflows, vcpu accounting against the hypervisor's
        # tally: one of each path, small; and two again with a fault each, which must show.
        # And every baseline of those, so that their TSC and cycles meet their bound.
        # The slowest (pv-i: a notification per overflow) first.
        return [count_case("ref2", "pv-i", "guest", 400), count_case("3", "pv-a", "guest", 400),
                count_case("ref2", "pv-a", "guest", 400), count_case("4", "hvm", "guest", 400),
                count_case("ref1", "hvm", "guest", 400),
                ovf_case("shared", "pv-a", 400, 300), ovf_case("ref", "pv-a", 400, 300),
                count_case("ref2", "hvm", "vcpu", 400),
                canary(count_case("3", "pv-a", "guest", 400), "pv-skip-sum"),
                canary(count_case("ref2", "hvm", "vcpu", 400), "acct-as-guest")]
    n = 1000
    cases = []
    for counters in COUNTERS:
        for acct in ACCTS:
            cases += [count_case(s, counters, acct, n)
                      for s in ("ref1", "ref2", "1", "2", "3", "4")]
    for counters in ("pv-a", "hvm"):
        cases += [ovf_case(p, counters, n, 400) for p in ("ref", "sep", "shared")]
    cases += [profile_case(p, "pv-a", 30) for p in ("same", "diff")]
    cases.append(scale_case("pv-a", 16, 200))
    cases.append(native_case(n))
    # The guest kernel's fault: Start* sampled before the resume, so each resume's own work
    # lands in the a-mode sums of threads sharing a VCPU.
    cases.append(canary(count_case("3", "pv-a", "guest", n), "early-start", guest=True))
    return cases
