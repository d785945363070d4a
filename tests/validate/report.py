"""Writes report.md and the SVG charts (gnuplot) of build/validate/ from results.jsonl's rows."""

import os
import subprocess
import time

import cases as matrix

EVENTS = (("tsc", "TSC"), ("instructions", "IR"), ("branches", "BIR"), ("cycles", "CYC"))
CHASED = ("wl_pchase", "wl_chase_x4", "wl_chase_x3", "wl_chase_x2", "wl_chase_x1")

HOW_TO_READ = """\
## How to read this

Every workload here is written so that its instruction and branch counts are known exactly
from its code (guest-stub/workloads/workloads.h gives the formulas). Each thread measures its
own counts through the counters under test while the hypervisor and the guest kernel switch
it around, and the report compares what it measured with what it must be.

- **Relative error** = (measured - expected) / expected. For instructions (IR) and branches
  (BIR) the expectation is exact, so with `guest` accounting the only right answer is `0`:
  anything else is a bug, however small. Under `vcpu` accounting the hypervisor's own work on
  the thread's VM exits is counted too (seed 004), so the counts may only be larger: `x12` means
  twelve times the workload's own instructions, nearly all of them the hypervisor's; how much
  larger is judged against the hypervisor's own tally of that work (section "vcpu accounting").
- **pv-i** count cases give instructions and branches a period the counts cross (n - 1 events,
  2^22 under `vcpu` accounting), so their exact totals prove the overflows are folded in.
- **TSC and cycles** have no exact expectation. They are compared with the same thread in a
  reference run (its domain alone, its threads placed as in the scenario), the way seed 003
  compares with native runs. Their errors have causes, listed below; each thread's must stay
  within a bound derived from the run's own summary (section "TSC and cycles against a derived
  bound"), or the case fails.
- **N:Dx-Ty** names a value as seed 003 figure 7 does: scenario N, domain x, thread y.
- **Profile ratio** (seed 003 table 3) = a function's share of the samples divided by its
  share of the events it executes; 1.000 is a perfect profile. Sampling instructions or
  branches, the calls are whole numbers of sampling periods, so the ratio must be exactly
  1.000; cycles are only roughly proportional to instructions and are judged within three
  standard deviations of the expected number of samples.
- **exits/s** are VM exits per second of VCPU time (the time the guest sees on its own TSC);
  nearly all are single steps, which is how the soft PMU counts exactly. **hv %** is the share
  of that time the hypervisor spent handling the domain's exits.
- One line per case below says PASS or FAIL and why. Everything here is computed from
  `results.jsonl`; the serial logs are in `cases/NAME/serial.txt`.
"""

CAUSES = """\
## Why TSC and cycles are not exact

- **Single-stepping is most of the time.** The soft PMU counts exactly by stepping the guest
  while a counter counts instructions or branches: one VM exit per instruction. Domains use
  `tsc=vcpu`: a VCPU's TSC stops while it waits for a PCPU (seed 003 4.2.5), but it runs while
  the hypervisor handles the VCPU's own exits, so ~97% of a thread's TSC is the hypervisor's
  (the hv % column), and every extra guest instruction costs ~3,000 ticks.
- **A thread's TSC includes the guest kernel's work while it is switched in.** A thread's
  virtual TSC runs from its switch-in sample to its switch-out sample: timer interrupts,
  the scheduler and the PMU driver's hooks land in it, stepped like everything else. That
  is why raw-msr (interrupts off in the window: no kernel in it) stays within 0.3%, and why
  scenarios with more switches per window (threads sharing a VCPU, migration) show more.
- **Domain switches land in the VCPU's time too**: the hypervisor's switch-in and switch-out
  (VMCS load, INVEPT after a migration, the PMU's switch hooks) run on behalf of the VCPU
  being switched, and a PCPU shared by two domains switches far more often.
- **Cycles on the soft backend are the TSC ticks between VM entry and VM exit** (README,
  "The virtual PMU"). With `guest` accounting they stop at every exit, which removes nearly
  all of the above: their errors stay near 0.1%. With `vcpu` and `hybrid` accounting they
  include the hypervisor's handling too and follow the TSC.
- **The reference is a perfvisor run, not bare metal**: this machine has no PMU (Bochs has
  none, QEMU TCG none), so there is no native count to compare with; the case `native-qemu`
  boots the microbenchmark without perfvisor only to show that it runs and says so.
"""


def fmt_err(e):
    """A relative error for a table: exact zero as 0, large ones as a factor."""
    if e is None:
        return "-"
    if e == 0:
        return "0"
    if abs(e) >= 10:
        return f"x{1 + e:.0f}"
    return f"{100 * e:+.2f}%" if abs(e) >= 1e-4 else f"{100 * e:+.1e}%"


def label(r):
    return f"{r['scenario']}:D{r['domain'].lstrip('d')}-T{r['thread']}"


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(out) + "\n"


# No chart is wider than a screen: clusters beyond what fits go into panels (facets) below
# each other, one per scenario, never into a wider chart.
CHART_WIDTH_MAX = 1200
PANEL_HEIGHT = 330


def gnuplot(out, name, title, xlabel, ylabel, series, facets, yrange=None):
    """Clustered bar charts stacked in one SVG: facets is [(panel title, [(label, [value or
    None per series])])], one panel each; xlabel and ylabel say what and in which unit."""
    charts = os.path.join(out, "charts")
    os.makedirs(charts, exist_ok=True)
    panels = []
    for k, (facet, data) in enumerate(facets):
        dat = f"{name}-{k}.dat"
        with open(os.path.join(charts, dat), "w", encoding="utf-8") as f:
            # A comment: gnuplot would take a header row for an empty first cluster.
            f.write("# label " + " ".join(f'"{s}"' for s in series) + "\n")
            for lab, vals in data:
                f.write(f'"{lab}" ' + " ".join("?" if v is None else f"{v:.6g}" for v in vals)
                        + "\n")
        plots = ", ".join(
            (f"'{dat}' using {i + 2}:xtic(1)" if i == 0 else f"'' using {i + 2}")
            + f" title '{s}'" for i, s in enumerate(series))
        panels.append(f'set title "{facet}"\nplot {plots}' if facet else f"plot {plots}")
    # Labels stay horizontal (SVG renderers disagree on rotated text).
    clusters = max(len(data) for _, data in facets)
    width = min(CHART_WIDTH_MAX, max(800, 260 + 24 * len(series) * clusters))
    height = 40 + PANEL_HEIGHT * len(facets)
    script = f"""set terminal svg size {width},{height} noenhanced font "sans,11" \\
    background rgb "white"
set output '{name}.svg'
set xlabel "{xlabel}"
set ylabel "{ylabel}"
set datafile missing "?"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set xtics scale 0 font ",9"
set grid ytics
set key outside right top
set xzeroaxis lt -1
{f"set yrange [{yrange[0]}:{yrange[1]}]" if yrange else ""}
set multiplot layout {len(facets)},1 title "{title}"
""" + "\n".join(panels) + "\nunset multiplot\n"
    with open(os.path.join(charts, name + ".gp"), "w", encoding="utf-8") as f:
        f.write(script)
    done = subprocess.run(["gnuplot", name + ".gp"], cwd=charts, capture_output=True, text=True)
    if done.returncode != 0:
        return f"(chart {name} failed: {done.stderr.strip()[:200]})"
    return f"![{title}](charts/{name}.svg)"


def verdict_section(cases_rows):
    rows = []
    for c in cases_rows:
        what = "; ".join(c["reasons"][:2]) + (" ..." if len(c["reasons"]) > 2 else "")
        if not what:
            what = c.get("seen") or f"{c['values']} values as expected"
        rows.append([c["case"], c["scenario"], c["counters"], c["acct"],
                     f"**{c['verdict']}**", what])
    return "## Verdicts, one line per case\n\n" + md_table(
        ["case", "scenario", "counters", "acct", "verdict", "why"], rows)


def count_tables(rows, out):
    """Seed 003 figure 7 as tables: per counter mode, every scenario:domain-thread."""
    text = ["## Counting: relative error per thread (seed 003 figure 7)\n"]
    text.append("Scenarios: " + "; ".join(f"({k}) {v}" for k, v in matrix.SCENARIOS.items())
                + ".\n")
    counts = [r for r in rows if r["kind"] == "count" and r.get("thread") is not None
              and not r["scenario"].startswith("ref")]
    for counters in matrix.COUNTERS:
        mine = [r for r in counts if r["counters"] == counters]
        if not mine:
            text.append(f"### counters={counters}\n\nnot run.\n")
            continue
        header = ["N:Dx-Ty"] + [f"{short} ({acct})" for acct in matrix.ACCTS
                                for _, short in EVENTS]
        table = {}
        for r in mine:
            key = label(r)
            table.setdefault(key, {})[(r["acct"], r["event"])] = r.get("error")
        lines = [[key] + [fmt_err(vals.get((acct, ev))) for acct in matrix.ACCTS
                          for ev, _ in EVENTS] for key, vals in sorted(table.items())]
        text.append(f"### counters={counters}\n\n" + md_table(header, lines))
    text.append(direct_table(rows))
    for ev, short in EVENTS:
        facets = []
        for scen in sorted({r["scenario"] for r in counts}):
            data = []
            for lab in sorted({label(r) for r in counts if r["scenario"] == scen}):
                vals = []
                for counters in matrix.COUNTERS:
                    hit = [r.get("error") for r in counts if label(r) == lab
                           and r["acct"] == "guest" and r["counters"] == counters
                           and r["event"] == ev]
                    vals.append(100 * hit[0] if hit and hit[0] is not None else None)
                data.append((lab.split(":")[1], vals))
            facets.append((f"scenario {scen}: {matrix.SCENARIOS.get(scen, '')}", data))
        if facets:
            text.append(gnuplot(out, f"count-{ev}", f"{short}: relative error per thread "
                                "(guest accounting), one panel per scenario",
                                "domain x, thread y (Dx-Ty)", "relative error (%)",
                                list(matrix.COUNTERS), facets) + "\n")
    return "\n".join(text)


def direct_table(rows):
    """The direct user-mode reads (seed 003 4.2.3) against the kernel's count at the stop, and
    against the loop's own count (absolute)."""
    direct = [r for r in rows if str(r.get("event", "")).endswith("-direct")]
    if not direct:
        return ""
    per_case = {}
    for r in direct:
        c = per_case.setdefault((r["case"], r["acct"]), [0, 0, 0, None])
        c[0] += 1
        c[1] += r["measured"] == r["expected"]
        lo_hi = r.get("absolute")
        if lo_hi:
            c[2] += lo_hi[0] <= r["measured"] <= lo_hi[1]
            c[3] = max(c[3] or 0, lo_hi[1] - lo_hi[0])
    lines = [[case, n, "not judged" if acct == "vcpu" else ok, inside,
              "-" if width is None else width]
             for (case, acct), (n, ok, inside, width) in per_case.items()]
    return ("### Direct reads\n\nA thread reads its counts in user mode from the shared pages "
            "right before it stops counting; the instructions between the read's sample and "
            "the stop's system call are the same in every window, so the read must fall short "
            "of the kernel's final count by exactly what it does in an empty window (relative; "
            "with `vcpu` accounting that stretch also holds the hypervisor's varying work: not "
            "judged). A constant bias of the read would cancel there, so each read is also "
            "judged absolutely: it holds the loop of n/2 iterations (the formula) and at most "
            "the window's own path on top (1,000 instructions: the guest-accounting cases "
            "measure 30 to 350), or, with `vcpu` accounting, at most the stop's count after "
            "it.\n\n"
            + md_table(["case", "reads", "exact (relative)", "within the absolute bound",
                        "bound's width"], lines))


def vcpu_section(cases_rows):
    """vcpu accounting against the summary's separate tally of the hypervisor's work."""
    lines = [b for c in cases_rows for b in c.get("budget") or []]
    if not lines:
        return ""
    return ("## vcpu accounting against the hypervisor's own tally\n\nUnder `vcpu` "
            "accounting a window counts the guest's instructions plus the hypervisor's ticks on "
            "the VCPU's exits (seed 004). The hypervisor tallies those ticks separately and "
            "prints them per VCPU at the end of the run (`counted as vcpu-mode instructions` for "
            "the virtual PMU's counters; for the paravirtual ones, which that tally misses, its "
            "`hypervisor ticks` while counting, an upper bound). The printed windows minus the "
            "guest's own instructions (loops and each window's path) bound the tally from below; "
            "from above (virtual PMU only) the printed windows plus the unprinted empty read "
            "window, which counts at most what the full one does. Both give or take two average "
            "exits per window: the enabling and disabling exits, whose handling the counter may "
            "or may not see. Each event the summary tallies is judged so (instructions; "
            "branches too where the hypervisor counts its work as branches), the others stay "
            "exact, and no thread's excess may be nothing or pass its cycles.\n\n"
            + md_table(["case", "domain", "counters", "event", "windows' count", "tally at least",
                        "tally at most", "tally", "what the summary tallies", "within"],
                       lines))


def time_section(rows, cases_rows):
    """TSC and cycles against their derived bounds (run.py, time_budget)."""
    bounded = [r for r in rows if r.get("bound") is not None]
    if not bounded:
        return ""
    per_case = {}
    for r in bounded:
        c = per_case.setdefault((r["case"], r["event"]), [0.0, 0.0, 0, 0.0])
        c[0] = max(c[0], abs(r["error"]))
        c[1] = max(c[1], r["bound"])
        c[2] += not r["ok"]
        c[3] = max(c[3], r.get("bound_kernel") or 0.0)
    lines = [[case, ev, fmt_err(worst), f"{100 * bound:.2f}%",
              f"{100 * kernel:.2f}%" if ev == "tsc" else "-",
              "yes" if not bad else f"**{bad} over**"]
             for (case, ev), (worst, bound, bad, kernel) in sorted(per_case.items())]
    return ("## TSC and cycles against a derived bound\n\nA thread's virtual TSC runs only in "
            "its VCPU's time (`tsc=vcpu`), so against the same thread in the baseline run it can "
            "move at most by what its domain's VCPU time moved (the summary's guest and "
            "hypervisor ticks: the guest kernel's extra work, the hypervisor's on the extra "
            "exits) plus the VCPU switches of both runs (count x ticks each, the summary's "
            "`pcpu` lines), which land in the switched VCPU's time. Cycles under `guest` "
            "accounting stop at every exit: the domain's guest ticks alone. What moves between "
            "a thread's windows the totals cannot see is added per thread: samples taken again "
            "(`sample_retry_tsc`) and, for the TSC, the guest kernel's paths that landed in one "
            "run's window and not in the other's (a timer tick, a thread switch, an overflow "
            "interrupt): the difference of the ticks the kernel measured its entries adding to "
            "the window, and of their number times each entry's unstamped instructions. The "
            "bound is per thread; the largest per case is shown (and the largest kernel-paths "
            "term), and a thread beyond its own fails the case.\n\n"
            + md_table(["case", "event", "largest error (either sign)", "largest bound",
                        "of which kernel paths", "all within"], lines))


def ovf_section(rows, out):
    ovf = [r for r in rows if r["kind"] == "ovf" and r.get("thread") is not None]
    if not ovf:
        return ""
    table = {}
    for r in ovf:
        table.setdefault((r["case"], label(r)), {})[r["event"]] = r
    lines = []
    for (case, lab), ev in sorted(table.items()):
        n = ev.get("notifications", {})
        lines.append([case, lab, fmt_err(ev.get("instructions", {}).get("error")),
                      f"{n.get('measured', '-')}/{n.get('expected', '-')}",
                      fmt_err(ev.get("cycles", {}).get("error")),
                      fmt_err(ev.get("tsc", {}).get("error"))])
    facets = []
    for case in sorted({c for c, _ in table if not c.startswith("ovf-ref-")}):
        placement, counters = case.removeprefix("ovf-").split("-", 1)
        data = [(lab.split(":")[1],
                 [100 * ev[e]["error"] if e in ev and ev[e].get("error") is not None else None
                  for e in ("instructions", "cycles", "tsc")])
                for (c, lab), ev in sorted(table.items()) if c == case]
        facets.append((f"{matrix.OVF_PLACEMENTS.get(placement, placement)}, "
                       f"counters={counters}", data))
    chart = gnuplot(out, "ovf", "i-mode overflow test: relative error per thread, one panel "
                    "per placement", "domain x, thread y (Dx-Ty)", "relative error (%)",
                    ["PAPI_TOT_INS (i-mode)", "PAPI_TOT_CYC", "TSC"],
                    facets) if facets else ""
    return ("## i-mode: the overflow test (seed 003 5.1.2, figures 8-9)\n\nFour threads per "
            "domain on random VCPUs each sample their own instructions; each must be told of "
            "every overflow, in its own context, and its i-mode total must be exact. "
            "Placements: " + "; ".join(f"{k}: {v}" for k, v in matrix.OVF_PLACEMENTS.items())
            + ". Cycles and TSC against the same thread alone (ref).\n\n"
            + md_table(["case", "N:Dx-Ty", "PAPI_TOT_INS", "notifications (got/expected)",
                        "PAPI_TOT_CYC", "TSC"], lines) + "\n" + chart + "\n")


def profile_section(rows, out):
    prof = [r for r in rows if r["kind"] == "profile" and r.get("function")]
    if not prof:
        return ""
    columns = sorted({(r["case"], r["domain"]) for r in prof})
    header = ["function"] + [f"{c.split('-')[1]}:{d}" for c, d in columns]
    lines = []
    for f in CHASED:
        cells = []
        for c, d in columns:
            hit = [r for r in prof if r["case"] == c and r["domain"] == d and r["function"] == f]
            cells.append(f"{hit[0]['ratio']:.3f}" if hit else "-")
        lines.append([f] + cells)
    samples = [sum(r["measured"] for r in prof if r["case"] == c and r["domain"] == d)
               for c, d in columns]
    lines.append(["(samples)"] + samples)
    data = [(f, [next((r["ratio"] for r in prof if r["case"] == c and r["domain"] == d
                       and r["function"] == f), None) for c, d in columns])
            for f in CHASED if f != "wl_pchase"]
    chart = gnuplot(out, "profile", "profile ratio, sampled / expected share per function",
                    "chased function", "ratio (sampled share / expected share; 1 = exact)",
                    header[1:], [("", data)], yrange=(0.8, 1.2))
    return ("## Sampling: profile ratios (seed 003 table 3, Metis)\n\nThree domains profile the "
            "pointer-chasing workload at the same time, each sampling a different event "
            "(ins = PAPI_TOT_INS, br = PAPI_BR_INS, cyc = PAPI_TOT_CYC), as Metis lets "
            "domains monitor different events independently. Columns: placement (same: one "
            "PCPU; diff: a PCPU each) and domain. The wl_chase_xK cost 10:7:4:1 sampling "
            "periods of instructions (4:3:2:1 of branches), so each must get exactly its "
            "share; wl_pchase, the loop that calls them, runs in pieces shorter than a "
            "period and is shown only.\n\n"
            + md_table(header, lines) + "\n" + chart + "\n")


def cost_section(cases_rows):
    lines = []
    for c in cases_rows:
        if "exits_per_s" not in c:
            continue
        lines.append([c["case"], c["exits"], c["steps"], f"{c['exits_per_s']:.0f}",
                      f"{c['nonstep_exits_per_s']:.0f}", f"{100 * c['hv_fraction']:.1f}%",
                      c.get("migrations", 0), f"{c['seconds']:.0f}"])
    return ("## The hypervisor's cost per case\n\nexits: all VM exits of the domains; steps: "
            "those that single-stepped an instruction; per second of VCPU time (guest + "
            "hypervisor on its exits); hv %: the hypervisor's share of that time; wall: "
            "seconds the emulator ran.\n\n"
            + md_table(["case", "exits", "steps", "exits/s", "non-step exits/s", "hv %",
                        "migrations", "wall s"], lines))


def write(out, rows):
    cases_rows = [r for r in rows if r["kind"] == "case"]
    passed = sum(c["verdict"] == "PASS" for c in cases_rows)
    inject = {c.get("inject") for c in cases_rows if c.get("case_kind") != "canary"} - {None}
    head = ["# perfvisor validation report\n",
            f"Generated {time.strftime('%Y-%m-%d %H:%M')} by `tests/validate/run.py` from "
            f"`results.jsonl` ({len(rows) - len(cases_rows)} values, {len(cases_rows)} cases): "
            f"**{passed} of {len(cases_rows)} cases PASS**.\n"]
    if inject:
        head.append(f"**Broken on purpose**: the hypervisor ran with inject={', '.join(inject)}; "
                    "the failures below are the point.\n")
    parts = head + [HOW_TO_READ, verdict_section(cases_rows), count_tables(rows, out),
                    vcpu_section(cases_rows), time_section(rows, cases_rows),
                    ovf_section(rows, out), profile_section(rows, out), scale_section(rows),
                    cost_section(cases_rows), CAUSES]
    with open(os.path.join(out, "report.md"), "w", encoding="utf-8") as f:
        f.write("\n".join(p for p in parts if p))


def scale_section(rows):
    scale = [r for r in rows if r["kind"] == "scale" and r.get("error") is not None
             and r["event"] in ("instructions", "branches")]
    if not scale:
        return ""
    worst = max(abs(r["error"]) for r in scale)
    doms = len({(r["case"], r["domain"]) for r in scale})
    return (f"## Scale\n\n{doms} domains of two VCPUs and two threads each on two PCPUs, "
            f"everything migrating: {len(scale)} instruction and branch counts, largest "
            f"|relative error| {fmt_err(worst)}.\n")
