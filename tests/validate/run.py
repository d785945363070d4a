#!/usr/bin/env python3
"""Runs the validation matrix (cases.py) under Bochs, judges each case, writes results, report."""

import argparse
import json
import math
import os
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import cases as matrix
import report

# What scripts/run-emu.sh returns without a verdict line.
NO_VERDICT = {124: "timeout", 125: "no verdict line (emulator ended)", 130: "interrupted"}
DOMAIN_LINE = re.compile(r"^\[([a-z0-9_-]+)\] (.*)$")
TSC_KHZ = re.compile(r"^perfvisor: TSC runs at (\d+) kHz")
SUMMARY = re.compile(r"^perfvisor:   domain \d+ \(([^)]+)\): (?:exit code (-?\d+), \d+ vcpus, "
                     r"(\d+) exits, (\d+) migrations, ran (\d+) host TSC ticks|(.*))$")
TIME = re.compile(r"^perfvisor:     time: (\d+) ticks in the guest, (\d+) in the hypervisor")
# The branches' tally is printed when the hypervisor's work counts as branches too.
VCPU = re.compile(r"^perfvisor:     vcpu \d+: pmu (\d+) stepped instructions, (\d+) retired, "
                  r"(\d+) hypervisor ticks (?:\((\d+) counted as vcpu-mode branches\) )?"
                  r"\((\d+) counted as vcpu-mode instructions")
SWITCHES = re.compile(r"^perfvisor:   pcpu \d+: (\d+) vcpu switches \((\d+) ticks each")
EXACT_EVENTS = ("instructions", "branches", "notifications")
CHASED = ("wl_chase_x4", "wl_chase_x3", "wl_chase_x2", "wl_chase_x1")


def domain_lines(lines):
    """(domain, text) of the guests' lines; a JSON object longer than the hypervisor's line
    buffer (160 characters) arrives in pieces, put together again here."""
    pending = {}
    for line in lines:
        m = DOMAIN_LINE.match(line)
        if not m:
            continue
        dom, text = m.groups()
        if dom in pending:
            text = pending.pop(dom) + text
        if text.startswith("{") and not text.rstrip().endswith("}"):
            pending[dom] = text
            continue
        yield dom, text


def parse(case, lines):
    """The values the guests printed, the summary's costs, and the domains' fates."""
    values, fates, costs = [], {}, {"exits": 0, "steps": 0, "guest_ticks": 0,
                                    "hv_ticks": 0, "migrations": 0, "switches": 0,
                                    "switch_ticks": 0, "domains": {}}
    for dom, text in domain_lines(lines):
        if text.startswith("{"):
            try:
                v = json.loads(text)
            except ValueError:
                continue
            v["domain"] = dom
            values.append(v)
    dom = None  # the domain whose summary lines follow
    for line in lines:
        m = TSC_KHZ.match(line)
        if m:
            costs["tsc_khz"] = int(m.group(1))
        m = SUMMARY.match(line)
        if m:
            dom, code, exits, migrations, _, fate = m.groups()
            fates[dom] = f"exit code {code}" if code is not None else fate
            costs["domains"][dom] = {"hv_ticks": 0, "guest_ticks": 0, "vcpu_hv_ticks": 0,
                                     "exits": int(exits or 0), "retired": 0, "tally": {}}
            if code is not None:
                costs["exits"] += int(exits)
                costs["migrations"] += int(migrations)
        m = TIME.match(line)
        if m:
            costs["guest_ticks"] += int(m.group(1))
            costs["hv_ticks"] += int(m.group(2))
            if dom in costs["domains"]:
                costs["domains"][dom]["guest_ticks"] = int(m.group(1))
                costs["domains"][dom]["hv_ticks"] = int(m.group(2))
        m = VCPU.match(line)
        if m:
            costs["steps"] += int(m.group(1))
            if dom in costs["domains"]:
                d = costs["domains"][dom]
                d["retired"] += int(m.group(2))
                d["vcpu_hv_ticks"] += int(m.group(3))
                for ev, n in (("instructions", m.group(5)), ("branches", m.group(4))):
                    if n is not None:
                        d["tally"][ev] = d["tally"].get(ev, 0) + int(n)
        m = SWITCHES.match(line)
        if m:
            costs["switches"] += int(m.group(1))
            costs["switch_ticks"] += int(m.group(1)) * int(m.group(2))
    return values, fates, costs


def value_row(case, v):
    """One results.jsonl row per value, with its relative error where it has an expectation."""
    row = {"case": case.name, "kind": case.kind, "scenario": case.scenario,
           "counters": case.counters, "acct": case.acct}
    row.update({k: v.get(k) for k in ("domain", "workload", "thread", "vcpu", "vcpus", "resumes",
                                      "sample_retry_tsc", "event", "function", "measured",
                                      "expected", "raw", "window_entries",
                                      "window_kernel_tsc")})
    if v.get("expected") is not None and row["function"] is None and v["expected"]:
        row["error"] = (v["measured"] - v["expected"]) / v["expected"]
    return row


# Counter modes whose counts the summary's "counted as vcpu-mode ..." tallies (the virtual
# PMU's counters); the paravirtual ones take the same work, bounded by the VCPU's hypervisor
# ticks instead.
SUMMARY_COUNTED = ("hvm", "raw-msr")
# The workload's own instructions and branches, after wl_mbench_expect(): 8 + 10.5n, 2 + 2n.
LOOP = {"instructions": lambda n: 8 + 10 * n + n // 2, "branches": lambda n: 2 + 2 * n}


def hv_events(costs):
    """The events the hypervisor's own work adds to under vcpu accounting: those the summary
    tallies (pmu/backend_soft.c: its ticks as instructions, and in some versions a share of them
    as branches); cycles take it too but are not exact anyway. The others stay exact."""
    return {ev for d in costs["domains"].values() for ev in d["tally"]} or {"instructions"}


def case_arg(case, key):
    """A guest argument key=N of the case's first domain, or None."""
    for a in case.domains[0].args if case.domains else []:
        if a.startswith(key + "="):
            return int(a.split("=", 1)[1], 0)
    return None


def judge_counts(case, rows, hv):
    """Exact events must be exact; with vcpu accounting the ones the hypervisor's work adds to
    may only be more, by a budget judge_vcpu() checks against the summary."""
    reasons = []
    for r in rows:
        if r.get("error") is None or r["function"]:
            continue
        base = r["event"].removesuffix("-direct")
        if base not in EXACT_EVENTS:
            continue
        if case.acct == "vcpu" and base in hv:
            # Direct reads: judge_direct() (their relative expectation holds the
            # hypervisor's variable work).
            r["judged"] = not r["event"].endswith("-direct")
            r["ok"] = r["measured"] >= r["expected"]
        else:
            r["judged"], r["ok"] = True, r["measured"] == r["expected"]
        if r["judged"] and not r["ok"]:
            reasons.append(f"{r['domain']} thread {r['thread']} {r['event']}: measured "
                           f"{r['measured']}, expected {r['expected']}")
    return reasons


def thread_events(rows):
    """{(domain, thread): {event: row}} of the microbenchmark's values."""
    out = {}
    for r in rows:
        if r.get("workload") == "mbench" and r.get("thread") is not None:
            out.setdefault((r["domain"], r["thread"]), {})[r["event"]] = r
    return out


def judge_vcpu(case, rows, costs):
    """vcpu accounting against an independent expectation: a window counts the guest's own
    events plus the hypervisor's work on its exits, which the summary tallies per VCPU
    separately. Per domain and event, the windows the guest prints (the empty and full exact
    windows, the full read window; the empty read window is not printed, and counts at most
    what the full one does: the same code with fewer iterations) bound that tally from both
    sides, give or take each window's two boundary exits (the enabling and disabling ones, whose
    handling the counter may or may not see): two average exits' ticks per window. Per thread,
    the excess is more than nothing and cannot pass the cycles, which take the same ticks plus
    the guest's. Returns the reasons and the budget rows for the report."""
    reasons, budget = [], []
    per_dom = {}
    n = case_arg(case, "n")
    for (dom, _), ev in thread_events(rows).items():
        for event in sorted(hv_events(costs)):
            got = ev.get(event)
            if not got or got.get("expected") is None:
                continue
            excess = got["measured"] - got["expected"]
            if excess <= 0:
                # Each window starts and stops counting through an exit (the WRMSR or the
                # hypercall) whose handling lands in it.
                reasons.append(f"{dom} thread {got['thread']}: {event} {got['measured']}, "
                               "not one of the hypervisor's counted")
            cyc = ev.get("cycles")
            if cyc and excess > cyc["measured"]:
                reasons.append(f"{dom} thread {got['thread']}: {event} exceed the loop by "
                               f"{excess}, more than its cycles ({cyc['measured']})")
            full, empty = got["raw"], got["raw"] - got["measured"]
            read_full = ev.get(f"{event}-direct", {}).get("raw", 0)
            windows = 4 if read_full else 2
            half = LOOP[event](n // 2) - LOOP[event](0) if read_full else 0
            d = per_dom.setdefault((dom, event), {"seen": 0, "most": 0, "guest": 0,
                                                  "windows": 0})
            d["seen"] += empty + full + read_full
            d["most"] += empty + full + 2 * read_full
            # The guest's own share of the printed windows: the loops and each window's path.
            d["guest"] += got["expected"] + half + windows * WINDOW_PATH_MAX
            d["windows"] += windows
    for (dom, event), d in sorted(per_dom.items()):
        s = costs["domains"].get(dom, {})
        edges = d["windows"] * 2 * s.get("hv_ticks", 0) // max(s.get("exits", 0), 1)
        low = d["seen"] - d["guest"] - edges
        if case.counters in SUMMARY_COUNTED:
            tally = s.get("tally", {}).get(event, 0)
            what = f"hypervisor work counted as {event}"
            high = d["most"] + edges
        else:
            tally, what, high = s.get("vcpu_hv_ticks", 0), "hypervisor ticks on its exits", None
        ok = 0 < tally and low <= tally and (high is None or tally <= high)
        budget.append([case.name, dom, case.counters, event, d["seen"], low,
                       high if high is not None else "-", tally, what,
                       "yes" if ok else "**no**"])
        if not ok:
            reasons.append(f"{dom}: the summary's {what} {tally}, outside [{low}, "
                           f"{high if high is not None else 'any'}] that the windows' "
                           f"{d['seen']} {event} allow")
    return reasons, budget


# A window's own path in user mode (the start's return, the empty loop, the stop's or read's
# path to its sample), retries of a direct read included: the guest-accounting cases measure it
# at 30 to 350 instructions (the empty window, the direct reads' excess over the loop).
WINDOW_PATH_MAX = 1000


def judge_direct(case, rows, hv):
    """Direct reads against an absolute expectation too: the count at the read holds the
    loop of n/2 iterations and no more than the window's own path on top (a constant bias of
    the read would cancel in the relative check, not here); and it never passes the stop's
    count that follows it."""
    reasons = []
    n = case_arg(case, "n")
    if n is None:
        return reasons
    for r in rows:
        base = str(r.get("event", "")).removesuffix("-direct")
        if not r["event"] or not r["event"].endswith("-direct") or base not in LOOP:
            continue
        loop = LOOP[base](n // 2) - LOOP[base](0)
        most = r["raw"] if case.acct == "vcpu" and base in hv \
            else min(r["raw"], loop + WINDOW_PATH_MAX)
        r["absolute"] = [loop, most]
        if not loop <= r["measured"] <= most:
            reasons.append(f"{r['domain']} thread {r['thread']} {r['event']}: read "
                           f"{r['measured']}, outside [{loop}, {most}]")
            r["ok"] = False
    return reasons


def judge_imode(case, rows):
    """pv-i count cases must cross overflows: a period above the count proves nothing. Under
    vcpu accounting only instructions (with the hypervisor's work) reach a period long enough
    for the notifications to finish (cases.py)."""
    period = case_arg(case, "iperiod")
    if case.counters != "pv-i" or case.kind not in ("count", "scale"):
        return []
    if period is None:
        return ["pv-i without iperiod=: its counters never overflow"]
    must = ("instructions",) if case.acct == "vcpu" else tuple(LOOP)
    return [f"{r['domain']} thread {r['thread']} {r['event']}: {r['measured']} events never "
            f"reach the period {period}" for r in rows
            if r.get("event") in must and r.get("expected") is not None
            and r["measured"] < period]


def cycles_line(rows):
    """Samples as a line in cost, a * cost + b, least squares over the chasing functions."""
    if not rows:
        return 0.0, 0.0
    mx = sum(r["expected"] for r in rows) / len(rows)
    my = sum(r["measured"] for r in rows) / len(rows)
    sxx = sum((r["expected"] - mx) ** 2 for r in rows)
    a = sum((r["expected"] - mx) * (r["measured"] - my) for r in rows) / sxx if sxx else 0.0
    return a, my - a * mx


def judge_profile(rows):
    """Per thread and sampled event (guest-stub/validate/pchase.c): a function's ratio is its share of
    the four chasing functions' samples over its share of their cost (seed 003 table 3).
    Instructions and branches are exact: each function gets exactly cost / period samples,
    ratio 1. Cycles are not: within three standard deviations of the line a * cost + b through
    the four (pchase.c's cycles_line(): each call's exits add the same to every function), the
    ratio shown. And the four ranked by cost."""
    reasons = []
    threads = {}
    for r in rows:
        if r["function"]:
            threads.setdefault((r["domain"], r["thread"], r["event"]), []).append(r)
    for (dom, thread, event), funcs in threads.items():
        chased = [r for r in funcs if r["function"] in CHASED]
        hits = sum(r["measured"] for r in chased)
        cost = sum(r["expected"] for r in chased)
        line = cycles_line(chased)
        for r in funcs:
            want = hits * r["expected"] / cost if cost else 0
            r["ratio"] = r["measured"] / want if want else 0.0
            r["judged"] = r["function"] in CHASED
            if event == "profile-cycles":
                on = line[0] * r["expected"] + line[1]
                r["ok"] = on > 0 and abs(r["measured"] - on) <= 3 * math.sqrt(on)
            else:
                r["ok"] = r["measured"] == r["expected"] // r["raw"]  # raw: the period
            if r["judged"] and not r["ok"]:
                reasons.append(f"{dom} {event} {r['function']}: {r['measured']} samples, "
                               f"ratio {r['ratio']:.3f}")
        ranked = [r["measured"] for f in CHASED for r in chased if r["function"] == f]
        if ranked != sorted(ranked, reverse=True) or len(set(ranked)) < len(ranked):
            reasons.append(f"{dom} {event}: functions not ranked by cost ({ranked})")
    return reasons


def run_timed(cmd, runlog, timeout):
    """Runs cmd; returns its status and the CPU seconds it and its children used (on a busy
    machine wall time says little: the CPU time is what 2 idle cores would need)."""
    proc = subprocess.Popen(cmd, stdout=runlog, stderr=subprocess.STDOUT)
    # run-emu.sh has its own timeout; this one only guards against a stuck script.
    guard = threading.Timer(timeout, proc.kill)
    guard.start()
    _, status, usage = os.wait4(proc.pid, 0)
    guard.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime


def boot(case, cdir, inject, runlog):
    """Runs the case's emulator; returns run-emu.sh's status (None if the ISO failed) and the
    CPU seconds it took."""
    emu = ["scripts/run-emu.sh", "--emu", case.emu, "--cpus", str(case.cpus), "--mem",
           str(case.mem_mb), "--timeout", str(case.timeout), "--log", cdir, "--quiet"]
    if case.emu == "qemu":
        d = case.domains[0]
        emu += ["--kernel", f"build/guest/{d.guest}.elf", "--append", " ".join(d.args)]
    else:
        cfg, iso = os.path.join(cdir, "scenario.cfg"), os.path.join(cdir, "case.iso")
        with open(cfg, "w", encoding="utf-8") as f:
            f.write(case.scenario_text(inject))
        if subprocess.run(["scripts/mkiso.sh", "-f", cfg, iso], stdout=runlog,
                          stderr=subprocess.STDOUT).returncode != 0:
            return None, 0.0
        emu += ["--iso", iso]
    return run_timed(emu, runlog, case.timeout + 120)


def judge_native(lines):
    """Natively there is no PMU: the guest must say so, and its workload must still run."""
    text = "\n".join(lines)
    reasons = []
    if "NO PMU" not in text:
        reasons.append("the guest did not say that there is no PMU")
    if not re.search(r"^\[[^]]*\] \d+ passed, 0 failed$", text, re.M):
        reasons.append("the microbenchmark did not finish")
    return reasons


def run_case(case, out, inject, log):
    """Boots one case; returns its rows, the case row first."""
    cdir = os.path.join(out, "cases", case.name)
    os.makedirs(cdir, exist_ok=True)
    start = time.monotonic()
    inject = case.inject or inject
    with open(os.path.join(cdir, "run.txt"), "w", encoding="utf-8") as runlog:
        status, cpu = boot(case, cdir, inject, runlog)
    seconds = time.monotonic() - start
    try:
        with open(os.path.join(cdir, "serial.txt"), encoding="utf-8", errors="replace") as f:
            lines = f.read().replace("\r", "").splitlines()
    except FileNotFoundError:
        lines = []
    if case.emu == "qemu":
        # No hypervisor prefixes the lines: they are the one guest's.
        lines = [f"[{case.domains[0].name}] {line}" for line in lines]
    values, fates, costs = parse(case, lines)
    rows = [value_row(case, v) for v in values]

    # What was measured wrong first: it says more than the exit codes it causes.
    if case.kind == "profile":
        wrong = judge_profile(rows)
    else:
        hv = hv_events(costs)
        wrong = judge_counts(case, rows, hv) + judge_direct(case, rows, hv) \
            + judge_imode(case, rows)
    budget = []
    if case.acct == "vcpu" and case.kind in ("count", "canary"):
        more, budget = judge_vcpu(case, rows, costs)
        wrong += more
    reasons = list(wrong)
    if status is None:
        reasons.append("the ISO could not be built")
    elif case.kind == "native":
        reasons += judge_native(lines)
    elif status in NO_VERDICT:
        reasons.append(NO_VERDICT[status])
    if case.kind != "native":
        for d in case.domains:
            fate = fates.get(d.name, "no summary line")
            if fate != "exit code 0":
                reasons.append(f"{d.name}: {fate}")
        if not rows:
            reasons.append("no values")
    seen = None
    if case.kind == "canary":
        # It passes when the injected fault shows as wrong counts, and only then.
        fault = case.guest_inject and f"guest inject={case.guest_inject}" or f"inject={inject}"
        reasons = [] if wrong else [f"{fault} went unseen: every count exact"]
        seen = f"{fault} seen, as it must be: {wrong[0]}" if wrong else None
    khz = costs.get("tsc_khz")
    vcpu_ticks = costs["guest_ticks"] + costs["hv_ticks"]
    row = {"case": case.name, "kind": "case", "case_kind": case.kind, "scenario": case.scenario,
           "counters": case.counters, "acct": case.acct, "inject": inject or None,
           "verdict": "FAIL" if reasons else "PASS", "reasons": reasons,
           "seconds": round(seconds, 1), "cpu_seconds": round(cpu, 1), "values": len(rows),
           "fates": fates, "seen": seen, "budget": budget, **costs}
    if khz and vcpu_ticks:
        row["vcpu_seconds"] = vcpu_ticks / (khz * 1000)
        row["exits_per_s"] = costs["exits"] / row["vcpu_seconds"]
        row["nonstep_exits_per_s"] = (costs["exits"] - costs["steps"]) / row["vcpu_seconds"]
        row["hv_fraction"] = costs["hv_ticks"] / vcpu_ticks
    log(case, row)
    return [row] + rows


def add_baselines(rows):
    """TSC and cycles have no exact expectation: their error is against the same thread's
    value in the case's reference run (one domain alone)."""
    by_case = {}
    for r in rows:
        by_case.setdefault(r["case"], []).append(r)
    refs = {c.name: c.ref for c in matrix.matrix(False) + matrix.matrix(True)}
    for r in rows:
        if r["kind"] == "case" or r.get("expected") is not None:
            continue
        for b in by_case.get(refs.get(r["case"], ""), []):
            if (b.get("workload"), b.get("thread"), b.get("event")) == \
               (r["workload"], r["thread"], r["event"]) and b.get("measured"):
                r["baseline"] = b["measured"]
                r["baseline_retry_tsc"] = b.get("sample_retry_tsc") or 0
                r["baseline_kernel"] = [b.get("window_entries") or 0,
                                        b.get("window_kernel_tsc") or 0]
                r["error"] = (r["measured"] - b["measured"]) / b["measured"]
                break


# Of each kernel entry and exit, the instructions entry.S's TSC stamps leave out (the CPU's
# delivery, seven stub instructions before the entry's stamp, six after the exit's), which the
# guest kernel's window_kernel_tsc misses: KSTAMP_UNSTAMPED, read from the kernel's header.
STAMP_H = "guest-stub/kernel/stamp.h"


def unstamped():
    """KSTAMP_UNSTAMPED of stamp.h (run from the top of the tree)."""
    with open(STAMP_H, encoding="utf-8") as f:
        return int(re.search(r"^#define KSTAMP_UNSTAMPED\s+(\d+)", f.read(), re.M).group(1))


def unstamped_cost(*domains):
    """A bound on what one kernel entry's unstamped instructions add to a window: each at most
    one VM exit and one guest instruction, at the runs' average costs (hypervisor ticks per exit,
    guest ticks per retired instruction; the larger of the domains given)."""
    return unstamped() * max((d.get("hv_ticks", 0) / max(d.get("exits", 0), 1)
                            + d.get("guest_ticks", 0) / max(d.get("retired", 0), 1))
                           for d in domains)


def time_budget(case_row, ref_row, dom, event, acct, retried=0, kernel=None):
    """How far a thread's TSC or cycles may move from its baseline, in ticks, and why. Its
    virtual TSC runs only in its VCPU's time (tsc=vcpu): its window runs the same user code in
    both runs, so it moves by what lands in it in one run and not the other: VCPU switches
    (both runs' count x ticks each, which land in the switched VCPU's time), sample retries and
    kernel paths (below). Cycles count user mode only; they may still move by what the domain's
    VCPU time grew over the baseline run (under guest accounting, stopped at every exit, the
    domain's guest ticks alone), a bound the windows' own terms do not yet replace.

    What moves between windows the domains' totals cannot see, in both runs:
    - retried: a VCPU switch in the middle of the guest kernel's sample of a thread's counts at
      its switch (pv_sample: the hypervisor resampled tsc.start_vcpu) makes it sample again,
      which moves that window's end (or start) by the passes taken again, ~250k ticks under the
      soft PMU. The guest kernel adds up how far each thread's samples moved (its rows'
      sample_retry_tsc), and a window's other values move by no more.
    - kernel (TSC only: the counters count user mode): the guest kernel's paths inside the
      thread's window, a timer tick that switches nothing (~144k ticks), a thread switch's
      two halves, an overflow interrupt. Whether one lands in the window or just outside it
      differs between the run and its baseline. The guest kernel measures, per window, how
      many entries came while the thread counted and the ticks their paths added (from
      entry.S's stamps and its samples); the window may move by the difference of those ticks
      between the two runs, plus the difference of the entries times their unstamped
      instructions' cost. kernel: [(entries, ticks) of the run, of the baseline].

    Returns the budget and, of it, the kernel paths' term."""
    mine, base = case_row["domains"].get(dom, {}), next(iter(ref_row["domains"].values()), {})
    keys = ("guest_ticks",) if acct == "guest" else ("guest_ticks", "hv_ticks")
    grew = 0 if event == "tsc" else \
        abs(sum(mine.get(k, 0) for k in keys) - sum(base.get(k, 0) for k in keys))
    moved = 0
    if event == "tsc" and kernel:
        (entries, ticks), (base_entries, base_ticks) = kernel
        moved = abs(ticks - base_ticks) + abs(entries - base_entries) * unstamped_cost(mine, base)
    moved = round(moved)
    return grew + case_row.get("switch_ticks", 0) + ref_row.get("switch_ticks", 0) + retried \
        + moved, moved


def judge_time(rows):
    """TSC and cycles: each thread within its case's derived budget (time_budget) of its
    baseline; the case fails when one is not. Marks the case rows; returns nothing."""
    cases = {r["case"]: r for r in rows if r["kind"] == "case"}
    refs = {c.name: c.ref for c in matrix.matrix(False) + matrix.matrix(True)}
    # A case whose times have no baseline would pass unjudged: its reference must have run.
    timed = {r["case"] for r in rows if r["kind"] != "case" and r["event"] in ("tsc", "cycles")}
    for name in sorted(timed):
        ref = refs.get(name, "")
        if ref and ref not in cases and name in cases:
            cases[name]["reasons"].append(f"TSC and cycles unjudged: its baseline case {ref} "
                                          "did not run")
            cases[name]["verdict"] = "FAIL"
    for r in rows:
        if r["kind"] == "case" or r.get("baseline") is None or r["event"] not in ("tsc", "cycles"):
            continue
        case, ref = cases.get(r["case"]), cases.get(refs.get(r["case"], ""))
        if not case or not ref or "domains" not in case or "domains" not in ref:
            continue
        kernel = [[r.get("window_entries") or 0, r.get("window_kernel_tsc") or 0],
                  r.get("baseline_kernel") or [0, 0]]
        budget, moved = time_budget(case, ref, r["domain"], r["event"], r["acct"],
                                    (r.get("sample_retry_tsc") or 0)
                                    + r.get("baseline_retry_tsc", 0), kernel)
        r["bound"] = budget / r["baseline"]
        r["bound_kernel"] = moved / r["baseline"]
        r["ok"] = abs(r["measured"] - r["baseline"]) <= budget
        why = (f"{r['domain']} thread {r['thread']} {r['event']}: {r['measured']} vs baseline "
               f"{r['baseline']}, more than the derived {budget} ticks "
               f"({100 * r['bound']:.1f}%)")
        # A canary's verdict is about its fault, which may well move its time.
        if not r["ok"] and why not in case["reasons"] and case.get("case_kind") != "canary":
            case["reasons"].append(why)
            case["verdict"] = "FAIL"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="the small set of validate-quick")
    parser.add_argument("--inject", default="", help="hypervisor inject= for every case")
    parser.add_argument("--only", default="", help="run only cases matching this regex")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="emulators at once")
    parser.add_argument("--out", default="build/validate", help="output directory")
    parser.add_argument("--report-only", action="store_true",
                        help="rewrite the report from the existing results.jsonl")
    args = parser.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    results = os.path.join(args.out, "results.jsonl")

    if args.report_only:
        with open(results, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        judge_time(rows)
        report.write(args.out, rows)
        return 0

    cases = [c for c in matrix.matrix(args.quick) if re.search(args.only, c.name)]
    os.makedirs(args.out, exist_ok=True)
    lock = threading.Lock()
    done = [0]
    started = time.monotonic()
    print(f"validate: {len(cases)} cases, {args.jobs} at a time"
          + (f", inject={args.inject}" if args.inject else ""), flush=True)

    def log(case, row):
        with lock:
            done[0] += 1
            why = row["reasons"]
            extra = ""
            if "exits_per_s" in row:
                extra = (f", {row['exits_per_s']:.0f} exits/s of VCPU time, "
                         f"{100 * row['hv_fraction']:.1f}% in the hypervisor")
            print(f"validate: [{done[0]}/{len(cases)}] {case.name}: {row['verdict']} in "
                  f"{row['seconds']:.0f} s ({row['cpu_seconds']:.0f} s CPU), "
                  f"{row['values']} values{extra}"
                  + (f": {why[0]}" + (f" (+{len(why) - 1} more)" if len(why) > 1 else "")
                     if why else f": {row['seen']}" if row["seen"] else ""), flush=True)

    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        per_case = list(pool.map(lambda c: run_case(c, args.out, args.inject, log), cases))
    rows = [r for case_rows in per_case for r in case_rows]
    if args.only and os.path.exists(results):
        # Some cases again: the others keep their last results.
        rerun = {c.name for c in cases}
        order = {c.name: i for i, c in enumerate(matrix.matrix(args.quick))}
        with open(results, encoding="utf-8") as f:
            rows = [r for r in map(json.loads, f) if r["case"] not in rerun] + rows
        rows.sort(key=lambda r: order.get(r["case"], len(order)))
    add_baselines(rows)
    judge_time(rows)
    with open(results, "w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, sort_keys=True) + "\n")
    report.write(args.out, rows)
    ran = [r for r in rows if r["kind"] == "case" and r["case"] in {c.name for c in cases}]
    failed = [r["case"] for r in ran if r["verdict"] != "PASS"]
    cpu = sum(r["cpu_seconds"] for r in ran)
    print(f"validate: {len(cases) - len(failed)} of {len(cases)} cases passed in "
          f"{time.monotonic() - started:.0f} s ({cpu:.0f} s of CPU: {cpu / 60 / args.jobs:.1f} "
          f"min on {args.jobs} idle cores); report in {args.out}/report.md"
          + (f"; FAILED: {' '.join(failed)}" if failed else ""), flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
