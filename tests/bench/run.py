#!/usr/bin/env python3
"""Boots the bench stanzas of tests/system/bench.cfg, prints the figures, writes build/bench/results.json."""

import argparse
import glob
import importlib.util
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

SYSTEM_DIR = "tests/system"
BENCH_GROUP = "bench"
STANZA_PREFIX = "bench-"
OUT_DIR = "build/bench"
VALIDATE_RESULTS = "build/validate/results.jsonl"
VALIDATE_JOBS = 2
RESULTS = os.path.join(OUT_DIR, "results.json")
TABLE = os.path.join(OUT_DIR, "results.md")
KERNEL = "build/perfvisor.elf"
IMAGE_LIMIT = 128 * 1024
TEXT_LIMIT = 64 * 1024
SWITCH_COUNTERS = (0, 1, 4, 7)
SHARE_DOMAINS = (1, 4, 16)
VERDICTS = ("met", "missed", "-", "n/a")

GUEST_LINE = re.compile(r"^\[([a-z0-9_-]+)\] (\{.*\})\s*$")
DOMAIN_LINE = re.compile(r"^perfvisor:   domain (\d+) \(([^)]*)\): (.*)$")
DOMAIN_EXITED = re.compile(r"exit code (-?\d+), \d+ vcpus, (\d+) exits, \d+ migrations, "
                           r"ran (\d+) host TSC ticks")
TIME_LINE = re.compile(r"^perfvisor:     time: (\d+) ticks in the guest, (\d+) in the hypervisor")
VCPU_PMU_LINE = re.compile(r"^perfvisor:     vcpu \d+: pmu (\d+) stepped instructions, (\d+) retired")
PCPU_LINE = re.compile(r"^perfvisor:   pcpu (\d+): (\d+) vcpu switches \((\d+) ticks each, "
                       r"PMU (\d+)\)")
BOOT_LINE = re.compile(r"^perfvisor:   boot: (\d+) TSC ticks")
EXITED_LINE = re.compile(r"^perfvisor: domain \d+ \(([^)]*)\) exited with code")


class NotAvailable(Exception):
    """A figure that cannot be measured; the message says why."""


class Value:
    """One figure's numbers, what they are and, if it depends on other figures, its target."""

    def __init__(self, lo, mid, hi, note, target=None):
        self.min, self.median, self.max, self.note, self.target = lo, mid, hi, note, target


class Run:
    """What one scenario's serial log says: the guests' JSON lines and the hypervisor's summary."""

    def __init__(self, name, status, log):
        self.name, self.status, self.log = name, status, log
        self.guest, self.na, self.errors = {}, {}, []
        self.domains, self.pcpus, self.exit_order = [], [], []
        self.boot = None
        try:
            with open(log, errors="replace") as f:
                lines = f.read().splitlines()
        except OSError:
            lines = []
        for line in lines:
            self.parse(line)
        # What went wrong is said just before the verdict line.
        self.last_line = next((ln for ln in reversed(lines)
                               if ln.strip() and not ln.startswith("perfvisor: EXIT")), "")

    def parse(self, line):
        m = GUEST_LINE.match(line)
        if m:
            try:
                fig = json.loads(m.group(2))
            except json.JSONDecodeError:
                return
            if "error" in fig:
                self.errors.append(f"{fig.get('figure')}: {fig['error']}")
            elif "na" in fig:
                self.na[fig.get("figure")] = fig["na"]
            elif "figure" in fig:
                self.guest[fig["figure"]] = fig
            return
        m = DOMAIN_LINE.match(line)
        if m:
            done = DOMAIN_EXITED.match(m.group(3))
            self.domains.append({"name": m.group(2), "exited": bool(done),
                                 "exits": int(done.group(2)) if done else 0,
                                 "ran": int(done.group(3)) if done else 0, "guest": 0, "hv": 0})
            return
        m = VCPU_PMU_LINE.match(line)
        if m and self.domains:
            self.domains[-1]["retired"] = self.domains[-1].get("retired", 0) + int(m.group(2))
            return
        m = TIME_LINE.match(line)
        if m and self.domains:
            self.domains[-1]["guest"], self.domains[-1]["hv"] = int(m.group(1)), int(m.group(2))
            return
        m = PCPU_LINE.match(line)
        if m:
            self.pcpus.append({"switches": int(m.group(2)), "ticks": int(m.group(3)),
                               "pmu": int(m.group(4))})
            return
        m = BOOT_LINE.match(line)
        if m:
            self.boot = int(m.group(1))
            return
        m = EXITED_LINE.match(line)
        if m:
            self.exit_order.append(m.group(1))


def need(runs, name):
    """The run of scenario name, or why its figures are not available."""
    run = runs.get(name)
    if run is None:
        raise NotAvailable(f"scenario {name} was not run")
    if run.status != 0:
        raise NotAvailable(f"scenario {name} failed (run-emu status {run.status}, last line "
                           f"'{run.last_line[:100]}'; see {run.log})")
    if run.errors:
        raise NotAvailable(f"scenario {name}: " + "; ".join(run.errors))
    return run


def guest_figure(scenario, name, how):
    """A figure a bench guest measured itself: BENCH_REPS RDTSC spans."""
    def compute(runs):
        run = need(runs, scenario)
        if name in run.na:
            raise NotAvailable(f"scenario {scenario}: {run.na[name]}")
        fig = run.guest.get(name)
        if fig is None:
            raise NotAvailable(f"scenario {scenario} printed no '{name}' line")
        return Value(fig["min"], fig["median"], fig["max"], f"{fig['reps']} reps, {how}")
    return compute


def ratio(slow, fast):
    """How many times the median of slow is the median of fast."""
    def compute(runs):
        a, b = slow(runs).median, fast(runs).median
        if b <= 0:
            raise NotAvailable("the cheaper figure's median is 0")
        r = round(a / b, 1)
        return Value(r, r, r, "median over median")
    return compute


def switch_pmu(mode, counters):
    """The PMU's part of a VCPU switch, from the summary of two domains yielding to each other."""
    def compute(runs):
        run = need(runs, f"switch-{mode}-{counters}")
        if not run.pcpus:
            raise NotAvailable(f"switch-{mode}-{counters}: no pcpu line in the summary")
        p = run.pcpus[0]
        target = None
        if mode == "amode" and counters:
            try:
                limit = switch_pmu(mode, 0)(runs).median + 20 * counters
                target = ("<=", limit, f"<= {limit} (0 ctr +20 each)")
            except NotAvailable:
                pass  # no baseline to add 20 per counter to: no target
        return Value(p["pmu"], p["pmu"], p["pmu"],
                     f"summary mean of {p['switches']} switches ({p['ticks']} per whole switch)",
                     target)
    return compute


def switch_marginal(runs):
    """What each a-mode counter past the first adds to a switch: 4 counters against 1."""
    one, four = switch_pmu("amode", 1)(runs).median, switch_pmu("amode", 4)(runs).median
    per = round((four - one) / 3, 1)
    return Value(per, per, per, "(switch-amode-4 - switch-amode-1) / 3, summary means")


def soft_exits(runs):
    """VM exits per guest instruction the soft PMU counted, from the hypervisor's summary:
    every exit of the domains (single steps and all others) over the instructions it saw
    retire while a counter counted them. Seed 003's scenario 3 as make validate runs it."""
    run = need(runs, "soft-seed")
    if not run.domains or not all(d["exited"] for d in run.domains):
        raise NotAvailable("soft-seed: not every domain ran and exited")
    exits = sum(d["exits"] for d in run.domains)
    retired = sum(d.get("retired", 0) for d in run.domains)
    if not retired:
        raise NotAvailable("soft-seed: the soft PMU counted no instruction (not the soft "
                           "backend?)")
    r = round(exits / retired, 3)
    return Value(r, r, r, f"{exits} exits / {retired} counted instructions, "
                 f"{len(run.domains)} domains")


def validate_wall(runs):
    """make validate's time on 2 idle cores, as it prints it: its cases' CPU time over 2,
    from the last run's build/validate/results.jsonl. Reported, not judged."""
    try:
        with open(VALIDATE_RESULTS, encoding="utf-8") as f:
            cases = [r for r in map(json.loads, f) if r.get("kind") == "case"]
    except (OSError, ValueError) as err:
        raise NotAvailable(f"no make validate results ({err}); run make validate") from None
    if not cases:
        raise NotAvailable(f"{VALIDATE_RESULTS} holds no case")
    minutes = round(sum(r.get("cpu_seconds", 0) for r in cases) / 60 / VALIDATE_JOBS, 1)
    when = time.strftime("%Y-%m-%d %H:%M", time.gmtime(os.path.getmtime(VALIDATE_RESULTS)))
    return Value(minutes, minutes, minutes,
                 f"{len(cases)} cases of the run written {when} UTC; CPU time / {VALIDATE_JOBS}")


def amode_seven(runs):
    raise NotAvailable("a thread's control carries 4 counters (PV_PMU_COUNTERS in "
                       "include/perfvisor/pmu.h): no 7-counter a-mode switch exists")


def share_totals(run, n):
    """d0 runs first (first in the run queue) and, looping longest, ends last: its run holds all."""
    if len(run.domains) != n or not all(d["exited"] for d in run.domains):
        raise NotAvailable(f"{run.name}: not all {n} domains ran and exited")
    if run.exit_order[-1:] != ["d0"]:
        raise NotAvailable(f"{run.name}: d0 did not end last, so its run is not the whole run")
    return run.domains[0]["ran"], sum(d["guest"] for d in run.domains)


def share(n):
    """Hypervisor instructions per 100 of all, in the steady state: what 10 more slices cost."""
    def compute(runs):
        span1, guest1 = share_totals(need(runs, f"share-{n}-short"), n)
        span2, guest2 = share_totals(need(runs, f"share-{n}-long"), n)
        steady = round(100 * ((span2 - span1) - (guest2 - guest1)) / (span2 - span1), 3)
        whole = 100 * (span2 - guest2) / span2
        return Value(steady, steady, steady,
                     f"steady state: share-{n}-long minus -short; whole long run {whole:.3f}%")
    return compute


def boot(runs):
    b = need(runs, "exits").boot
    if b is None:
        raise NotAvailable("exits: no boot line in the summary")
    return Value(b, b, b, "scenario exits.cfg (it grows with the modules GRUB loaded)")


def image_size(part):
    """Sizes of the hypervisor's sections, from binutils' size."""
    def compute(runs):
        try:
            out = subprocess.run(["size", KERNEL], capture_output=True, text=True,
                                 check=True).stdout.splitlines()[1].split()
        except (OSError, subprocess.CalledProcessError, IndexError) as err:
            raise NotAvailable(f"size {KERNEL}: {err}") from None
        value = int(out[("text", "data", "bss", "total").index(part)])
        return Value(value, value, value, f"size {KERNEL}")
    return compute


def figures():
    """(item number, id, title, unit, target, compute), in the order of the table."""
    exits = lambda name: guest_figure("exits", name, "ring 0")
    pv = lambda name, where: guest_figure("pv", name, where)
    direct = pv("read-direct", "ring 3, pvc_read() of guest-stub/lib (soft backend: Phys from "
                "the page, no RDPMC)")
    direct_one = pv("read-direct-one", "ring 3, pvc_read_one() of one counter, inline "
                    "(soft backend: Phys from the page)")
    rdpmc = pv("read-rdpmc", "ring 3, CR4.PCE")
    hcall = pv("read-hypercall", "ring 0 (hypercalls are CPL 0 only)")
    yields = "ring 3, 2 threads on one VCPU, sys_yield() round trip: 2 switches"
    rows = [
        (1, "null-hypercall", "null hypercall round trip", "tick", ("<=", 150),
         exits("null-hypercall")),
        (2, "wrmsr-perfevtsel0", "trapped WRMSR IA32_PERFEVTSEL0", "tick", ("<=", 400),
         exits("wrmsr-perfevtsel0")),
        (2, "rdmsr-pmc0", "trapped RDMSR IA32_PMC0", "tick", None, exits("rdmsr-pmc0")),
        (2, "cpuid", "trapped CPUID (no PMU work; reference)", "tick", None, exits("cpuid")),
        (3, "read-direct-one", "read: direct a-mode, ring 3, one counter", "tick", ("<=", 30),
         direct_one),
        (3, "read-direct", "read: direct a-mode, ring 3", "tick", ("<=", 60), direct),
        (3, "read-rdpmc", "read: trapped RDPMC, ring 3", "tick", None, rdpmc),
        (3, "read-hypercall", "read: HC_PMU_READ hypercall", "tick", None, hcall),
        (3, "ratio-rdpmc-direct", "read: trapped RDPMC / direct", "x", (">=", 20),
         ratio(rdpmc, direct)),
        (3, "ratio-hypercall-direct", "read: hypercall / direct", "x", None,
         ratio(hcall, direct)),
        # RDPMC reads one counter, as the one-counter read does: reported beside the judged
        # ratio above, whose denominator (the read of every value) the target names.
        (3, "ratio-rdpmc-direct-one", "read: trapped RDPMC / direct one counter", "x", None,
         ratio(rdpmc, direct_one)),
    ]
    for mode, title in (("amode", "a-mode"), ("trap", "save/restore vPMU")):
        for k in SWITCH_COUNTERS:
            compute = amode_seven if (mode, k) == ("amode", 7) else switch_pmu(mode, k)
            rows.append((4, f"switch-{mode}-{k}", f"switch PMU: {title}, {k} counters", "tick",
                         None, compute))
    rows.append((4, "switch-amode-marginal", "switch PMU: a-mode, per counter past 1st",
                 "tick", ("<=", 20), switch_marginal))
    rows += [
        (5, "resume-hypercall", "resume hypercall alone", "tick", ("<=", 500),
         pv("resume-hypercall", "ring 0, the control already loaded")),
        (5, "thread-switch-none", "2 thread switches, not counting", "tick", None,
         pv("thread-switch-none", yields)),
        (5, "thread-switch-resume", "2 thread switches, resume each", "tick", None,
         pv("thread-switch-resume", yields + ", skip=off")),
        (5, "thread-switch-skip", "2 thread switches, resume skipped", "tick", None,
         pv("thread-switch-skip", yields + ", same control: skipped")),
        (6, "soft-step", "soft PMU: hypervisor per step", "tick", ("<=", 150),
         guest_figure("exits", "soft-step", "ring 0; per counted instruction of a loop of 4 "
                      "(nop, nop, sub, jnz) run a turn a block: its exit at the breakpoint, "
                      "counting, the next block's decoding, entry")),
        (6, "soft-loop", "soft PMU: counted loop, 39992 insns", "tick", None,
         guest_figure("exits", "soft-loop", "ring 0; ticks of a loop of 4 (nop, nop, dec, "
                      "jnz) of 10000 turns less one of 2 turns, counted from RSI and run whole: "
                      "39992 instructions and the hypervisor's work on them (stepped: 40000 "
                      "times soft-step)")),
        (6, "soft-exits-per-insn", "soft PMU: exits per counted insn (seed)", "x",
         ("<=", 0.25), soft_exits),
    ]
    rows += [(7, f"share-{n}", f"hypervisor share, {n} domain{'s' * (n > 1)}", "%",
              ("<", 1), share(n)) for n in SHARE_DOMAINS]
    rows.append((8, "boot", "boot: entry to first guest entry", "tick", None, boot))
    limits = {"text": ("<", TEXT_LIMIT), "total": ("<", IMAGE_LIMIT)}
    rows += [(8, f"image-{part}", f"image: {part}", "bytes", limits.get(part), image_size(part))
             for part in ("text", "data", "bss", "total")]
    rows.append((9, "validate-wall", "make validate, 2 cores (reported only)", "min",
                 ("report", 8, "<= 8 (reported only)"), validate_wall))
    return rows


def bench_stanzas():
    """The stanzas of group bench in the system tests' tables (tests/system/run.py reads them),
    by figure-scenario name: the stanza's name without its 'bench-' prefix."""
    sys.path.insert(0, SYSTEM_DIR)
    spec = importlib.util.spec_from_file_location("system_run", os.path.join(SYSTEM_DIR,
                                                                             "run.py"))
    system_run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(system_run)
    tests = system_run.read_tables(sorted(glob.glob(system_run.TABLES)))
    return {t.name[len(STANZA_PREFIX):]: t for t in tests
            if BENCH_GROUP in t.groups and t.name.startswith(STANZA_PREFIX)}


def scenario_names(stanzas):
    """Every bench scenario, the longest first so two at a time finish together."""
    return sorted(stanzas, key=lambda n: (not n.startswith("share-16"),
                                          not n.startswith("share"), n))


def boot_scenarios(names, stanzas, emu, jobs):
    """Runs each scenario under emu (the stanza's CPUs and timeout) and parses its serial log."""
    os.makedirs(OUT_DIR, exist_ok=True)
    if emu == "bochs":
        for name in names:
            done = subprocess.run(["bash", "scripts/mkiso.sh", stanzas[name].scenario,
                                   f"{OUT_DIR}/iso/{name}.iso"], capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"bench: mkiso {name}: {done.stderr.strip()}")

    def one(name):
        log = f"{OUT_DIR}/logs/{name}"
        boot_how = (["--iso", f"{OUT_DIR}/iso/{name}.iso"] if emu == "bochs" else
                    ["--scenario", stanzas[name].scenario])
        start = time.monotonic()
        status = subprocess.run(["bash", "scripts/run-emu.sh", "--emu", emu, "--cpus",
                                 str(stanzas[name].cpus), "--timeout",
                                 str(stanzas[name].timeout), "--log", log, "--quiet"] +
                                boot_how, capture_output=True).returncode
        print(f"bench: {name}: {'ok' if status == 0 else f'FAILED (status {status})'} "
              f"({time.monotonic() - start:.1f} s)", flush=True)
        return Run(name, status, f"{log}/serial.txt")

    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return {run.name: run for run in pool.map(one, names)}


def target_text(target):
    """How a target reads in the table: its own words, or operator and limit."""
    return target[2] if len(target) > 2 else f"{target[0]} {target[1]}"


def judge(value, target):
    op, limit = target[0], target[1]
    if op == "report":
        return "-"
    ok = {"<=": value <= limit, "<": value < limit, ">=": value >= limit}[op]
    return "met" if ok else "missed"


def evaluate(runs, tick):
    results = []
    for item, fid, title, unit, target, compute in figures():
        row = {"item": item, "id": fid, "title": title,
               "unit": tick if unit == "tick" else unit}
        try:
            v = compute(runs)
        except NotAvailable as why:
            row.update({"min": None, "median": None, "max": None,
                        "target": target_text(target) if target else "-",
                        "verdict": "n/a", "reason": str(why)})
            results.append(row)
            continue
        target = v.target or target
        row.update({"min": v.min, "median": v.median, "max": v.max, "note": v.note})
        if target:
            row["target"] = target_text(target)
            row["verdict"] = judge(v.median, target)
        else:
            row["target"], row["verdict"] = "-", "-"
        results.append(row)
    return results


COLUMNS = ("#", "figure", "min", "median", "max", "unit", "target", "verdict")


def cells(r):
    """A figure's row of the table, as text."""
    nums = ["n/a" if r[k] is None else str(r[k]) for k in ("min", "median", "max")]
    unit = {"instructions": "insn"}.get(r["unit"], r["unit"])
    return [str(r["item"]), r["title"], *nums, unit, r["target"], r["verdict"]]


def print_table(doc):
    widths = (2, 42, 9, 9, 9, 6, 24, 7)

    def line(row):
        return " ".join(c.rjust(w) if 2 <= i <= 4 else c.ljust(w)
                        for i, (c, w) in enumerate(zip(row, widths))).rstrip()

    print(f"\nperfvisor benchmarks: {doc['emulator']}, 1 CPU; a tick is {doc['tick']}")
    print(line(COLUMNS))
    print("-" * len(line(COLUMNS)))
    for r in doc["figures"]:
        print(line(cells(r)))
    for r in doc["figures"]:
        if r["verdict"] == "n/a":
            print(f"n/a {r['id']}: {r['reason']}")


def write_markdown(doc, path):
    """The same table for the README."""
    with open(path, "w") as f:
        f.write(f"| {' | '.join(COLUMNS)} |\n|{'---|' * len(COLUMNS)}\n")
        for r in doc["figures"]:
            f.write(f"| {' | '.join(c.replace('|', '/') for c in cells(r))} |\n")


def check(path):
    """Well-formed: each figure once, min <= median <= max or an n/a reason; never the numbers."""
    problems = []
    try:
        with open(path) as f:
            doc = json.load(f)
        rows = {r["id"]: r for r in doc["figures"]}
        if len(rows) != len(doc["figures"]):
            problems.append("a figure appears twice")
    except (OSError, ValueError, KeyError, TypeError) as err:
        return [f"{path}: {err}"]
    for fid in [f[1] for f in figures()]:
        r = rows.get(fid)
        if r is None:
            problems.append(f"{fid}: missing")
            continue
        nums = [r.get(k) for k in ("min", "median", "max")]
        if r.get("verdict") not in VERDICTS:
            problems.append(f"{fid}: verdict {r.get('verdict')!r}")
        elif r["verdict"] == "n/a":
            if not isinstance(r.get("reason"), str) or not r["reason"] or any(
                    n is not None for n in nums):
                problems.append(f"{fid}: n/a without a reason, or with numbers")
        elif not all(isinstance(n, (int, float)) and not isinstance(n, bool) for n in nums):
            problems.append(f"{fid}: min/median/max are not all numbers: {nums}")
        elif not nums[0] <= nums[1] <= nums[2]:
            problems.append(f"{fid}: not min <= median <= max: {nums}")
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--emu", default="bochs", choices=("bochs", "kvm"),
                    help="bochs (instructions) or kvm: QEMU+KVM with nested VT-x (cycles)")
    ap.add_argument("--jobs", type=int, default=2, help="emulators at once (default 2)")
    ap.add_argument("--check", action="store_true",
                    help="then check that results.json is well-formed (make bench-check)")
    ap.add_argument("only", nargs="?", default="",
                    help="run only the scenarios whose names match this regex")
    args = ap.parse_args()
    os.chdir(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

    stanzas = bench_stanzas()
    names = [n for n in scenario_names(stanzas) if re.search(args.only, n)]
    runs = boot_scenarios(names, stanzas, args.emu, args.jobs)
    tick = "instructions" if args.emu == "bochs" else "cycles"
    doc = {"emulator": args.emu, "cpus": 1,
           "tick": tick + (" (Bochs, one CPU: the TSC counts instructions)"
                           if args.emu == "bochs" else " (TSC ticks)"),
           "figures": evaluate(runs, tick),
           "runs": {n: {"status": r.status, "log": r.log} for n, r in sorted(runs.items())}}
    with open(RESULTS + ".tmp", "w") as f:
        json.dump(doc, f, indent=1)
        f.write("\n")
    os.replace(RESULTS + ".tmp", RESULTS)
    print_table(doc)
    write_markdown(doc, TABLE)
    print(f"\nbench: wrote {RESULTS} and {TABLE} (the table for the README)")
    failed = sorted(n for n, r in runs.items() if r.status != 0)
    if failed:
        print(f"bench: FAILED runs: {' '.join(failed)}")
    problems = check(RESULTS) if args.check else []
    for p in problems:
        print(f"bench-check: {p}")
    if args.check and not problems and not failed:
        print(f"bench-check: {RESULTS} is well-formed ({len(doc['figures'])} figures)")
    return 1 if failed or problems else 0


if __name__ == "__main__":
    sys.exit(main())
