#!/usr/bin/env python3
"""The demo's table (make run): per thread, measured vs expected, from a run's serial log.

Reads the JSON lines the demo guest (guest-stub/demo/demo.c) prints and the hypervisor's
summary, or for `make run LINUX=1` what perf printed in the Linux guest (guest-stub/linux/init.sh);
prints nothing for a log with neither, so `make run` may call it for any scenario.
Exit status 0 when every count is exact, 1 otherwise.
"""

import json
import re
import sys

EVENTS = ("instructions", "branches", "read-exits")

# What the Linux guest's programs retire in user mode, from their code (docs/linux-guest.md):
# known.S 2N + 4 instructions and N + 1 branches (N = 10000); profile.S's functions cost m x 2000
# instructions, so sampled every 2000 each gets m samples.
LINUX_EXPECTED = (
    ("perf stat -e instructions:u /bin/known", r"perf: (\d+),,instructions:u,", 20004),
    ("perf stat -e branches:u /bin/known", r"perf: (\d+),,branches:u,", 10001),
) + tuple((f"perf record -c 2000 /bin/profile: {fn} samples",
           r"profile: +[\d.]+% +(\d+) +\[\.\] " + fn + "$", m)
          for fn, m in (("cost10", 10), ("cost7", 7), ("cost4", 4), ("cost1", 1)))


def vcpu_list(mask):
    return ",".join(str(i) for i in range(64) if mask >> i & 1) or "-"


def linux_table(lines):
    """make run LINUX=1: perf's counts in the Linux guest against its programs' code."""
    got = {}
    for line in lines:
        m = re.match(r"^\[[\w-]+\] \[ *[\d.]+\] perfvisor-linux: (.*)", line.rstrip())
        for what, pattern, _ in LINUX_EXPECTED if m else ():
            v = re.match(pattern, m.group(1))
            if v:
                got[what] = int(v.group(1))
    if not got:
        return 0
    print()
    print("perfvisor demo: perf in the Linux guest, measured / expected (the expectations come"
          " from the code: guest-stub/linux/known.S, profile.S)")
    width = max(len(what) for what, _, _ in LINUX_EXPECTED)
    exact = 0
    for what, _, want in LINUX_EXPECTED:
        v = got.get(what)
        exact += v == want
        cell = "missing" if v is None else f"{v} / {want}" + ("" if v == want else "  WRONG")
        print(f"  {what.ljust(width)}  {cell}")
    total = len(LINUX_EXPECTED)
    print(f"every count exact: {'yes' if exact == total else 'NO'} ({exact} of {total} values)")
    return 0 if exact == total else 1


def main(path):
    rows, domains, switches, migrations = {}, [], 0, 0
    with open(path, errors="replace") as f:
        lines = f.readlines()
    if any("perfvisor-linux: " in line for line in lines):
        return linux_table(lines)
    for line in lines:
        m = re.match(r"^\[[\w-]+\] (\{.*\})$", line.strip())
        if m:
            v = json.loads(m.group(1))
            if v.get("workload") == "demo":
                key = (v["domain"], v["thread"])
                rows.setdefault(key, {"mode": v["mode"]})[v["event"]] = v
                rows[key]["vcpus"], rows[key]["resumes"] = v["vcpus"], v["resumes"]
            continue
        m = re.match(r"^perfvisor:   domain \d+ \(([\w-]+)\): (.*)", line)
        if m:
            domains.append((m.group(1), m.group(2).split(",")[0]))
        m = re.match(r"^perfvisor:   pcpu \d+: (\d+) vcpu switches .*, (\d+) migrations in",
                     line)
        if m:
            switches += int(m.group(1))
            migrations += int(m.group(2))
    if not rows:
        return 0

    head = ("domain", "counters", "thread", "ran on vcpus", "switched in", "instructions",
            "branches", "VM exits of its reads")
    table = [head]
    exact = total = 0
    for (dom, thread), r in sorted(rows.items()):
        cells = [dom, r["mode"], str(thread), vcpu_list(r["vcpus"]), str(r["resumes"])]
        for ev in EVENTS:
            v = r.get(ev)
            if v is None:
                cells.append("missing")
                total += 1
                continue
            ok = v["measured"] == v["expected"]
            exact += ok
            total += 1
            cell = f"{v['measured']} / {v['expected']}"
            if ev == "read-exits":
                cell += f" ({v['raw']} reads)"
            cells.append(cell + ("" if ok else "  WRONG"))
        table.append(cells)
    # A domain that printed no row (it crashed, or its counters did not open) is not exact.
    silent = [f"{d} ({why})" for d, why in domains if d not in {k[0] for k in rows}]

    widths = [max(len(row[i]) for row in table) for i in range(len(head))]
    print()
    print("perfvisor demo: per thread, measured / expected (the expectations come from the code:"
          " guest-stub/workloads/workloads.h)")
    for i, row in enumerate(table):
        print("  " + "  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip())
        if i == 0:
            print("  " + "  ".join("-" * w for w in widths))
    print(f"  the hypervisor switched VCPUs {switches} times, {migrations} of them to another PCPU")
    for d in silent:
        print(f"  domain {d}: no counts")
    all_exact = exact == total and not silent
    print(f"every count exact: {'yes' if all_exact else 'NO'} ({exact} of {total} values)")
    return 0 if all_exact else 1


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: scripts/demo-table.py SERIAL_LOG")
    sys.exit(main(sys.argv[1]))
