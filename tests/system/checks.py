"""Numeric checks of a serial log that a regex cannot judge, named in a stanza as @ NAME(ARG,...).

Each takes the log's lines and the row's arguments (strings) and returns (passed, what it
measured): run.py prints the measurement when the check fails and keeps it in checks.txt.
"""

import json
import re


def _one(lines, regex, what):
    """The number the only line matching regex captures; ValueError if none or several."""
    hits = [int(m.group(1)) for m in map(re.compile(regex).search, lines) if m]
    if len(hits) != 1:
        raise ValueError(f"{len(hits)} lines with {what}, expected one")
    return hits[0]


def tsc_ratio(lines, name, low, high):
    """Domain NAME's guest printed 'tsc delta D' over its run, and the summary gives the host
    TSC ticks T the domain ran: D / T must lie in [LOW, HIGH]."""
    try:
        delta = _one(lines, rf"^\[{re.escape(name)}\] .*\btsc delta (\d+)$",
                     f"[{name}] ... tsc delta")
        wall = _one(lines, rf"^perfvisor:   domain \d+ \({re.escape(name)}\): exit code 0, "
                    r".* ran (\d+) host TSC ticks$", f"a summary line of {name} exiting 0")
    except ValueError as err:
        return False, f"{name}: {err}"
    ratio = delta / wall if wall else float("inf")
    return (float(low) <= ratio <= float(high),
            f"{name}: guest TSC delta {delta} / host ticks {wall} = {ratio:.3f} "
            f"(want {low}..{high})")


def vcpu_acct(lines, guest, vcpu, event="instructions-fixed0", kind="instructions"):
    """Domains GUEST (acct=guest) and VCPU (acct=vcpu) ran the same counted loop: VCPU's count
    of EVENT must exceed GUEST's by exactly the hypervisor's KIND (instructions: its ticks,
    branches: one in 5 of them, docs/virtual-pmu.md) the summary says vcpu mode counted."""
    def measured(name):
        return _one(lines, rf'^\[{re.escape(name)}\] \{{"event": "{re.escape(event)}", '
                    r'"measured": (\d+),', f"[{name}] {event} JSON")
    try:
        base, more = measured(guest), measured(vcpu)
        at = next(i for i, line in enumerate(lines)
                  if re.search(rf"^perfvisor:   domain \d+ \({re.escape(vcpu)}\):", line))
        block = lines[at + 1:at + 4]  # the domain's own lines under its summary line
        counted = _one(block, rf"\((\d+) counted as vcpu-mode {re.escape(kind)}\)",
                       f"a pmu line under {vcpu}'s summary")
    except (ValueError, StopIteration) as err:
        return False, f"{vcpu}: {err or 'no summary line'}"
    return (counted > 0 and more - base == counted,
            f"{vcpu} {more} - {guest} {base} = {more - base}, summary counted {counted}")


def exits_per_retired(lines, name, high):
    """Domain NAME's VM exits over the guest instructions the soft PMU saw retire, both from the
    summary (its line, then a pmu line per VCPU under it): at most HIGH."""
    try:
        exits = _one(lines, rf"^perfvisor:   domain \d+ \({re.escape(name)}\): exit code 0, "
                     r"\d+ vcpus, (\d+) exits,", f"a summary line of {name} exiting 0")
        at = next(i for i, line in enumerate(lines)
                  if re.search(rf"^perfvisor:   domain \d+ \({re.escape(name)}\):", line))
        retired = 0
        for line in lines[at + 1:]:
            if not re.match(r"^perfvisor:     ", line):
                break
            m = re.search(r" vcpu \d+: pmu \d+ stepped instructions, (\d+) retired,", line)
            retired += int(m.group(1)) if m else 0
    except (ValueError, StopIteration) as err:
        return False, f"{name}: {err or 'no summary line'}"
    ratio = exits / retired if retired else float("inf")
    return (ratio <= float(high),
            f"{name}: {exits} exits / {retired} retired = {ratio:.3f} (want at most {high})")


def retired_beyond(lines, name, per_entry):
    """Domain NAME (soft_ring) counted a user-only window across K system calls and T timer
    interrupts, K + T kernel entries: the soft PMU saw (the summary's retired) fewer than
    PER_ENTRY x (K + T) instructions beyond the window, PER_ENTRY being the least one kernel
    entry and return would add if CPL 0 were stepped; and it ran CPL 0 unstepped at least K
    times (its summary line)."""
    try:
        hits = [m for m in (re.search(rf"^\[{re.escape(name)}\] soft_ring: user window: "
                                      r"(\d+) instructions, (\d+) kernel entries by INT 0x80, "
                                      r"(\d+) timer interrupts", line)
                            for line in lines) if m]
        if len(hits) != 1:
            raise ValueError(f"{len(hits)} user window lines of {name}, expected one")
        window, calls, ticks = (int(hits[0].group(i)) for i in (1, 2, 3))
        at = next(i for i, line in enumerate(lines)
                  if re.search(rf"^perfvisor:   domain \d+ \({re.escape(name)}\):", line))
        retired = runs = 0
        for line in lines[at + 1:]:
            if not re.match(r"^perfvisor:     ", line):
                break
            m = re.search(r" vcpu \d+: pmu \d+ stepped instructions, (\d+) retired,", line)
            retired += int(m.group(1)) if m else 0
            m = re.search(r" vcpu \d+: soft PMU: (\d+) runs at CPL 0 unstepped", line)
            runs += int(m.group(1)) if m else 0
    except (ValueError, StopIteration) as err:
        return False, f"{name}: {err or 'no summary line'}"
    beyond, bound = retired - window, int(per_entry) * (calls + ticks)
    return (0 <= beyond < bound and runs >= calls,
            f"{name}: {retired} retired - {window} in the window = {beyond} (want below "
            f"{per_entry} x ({calls} + {ticks}) = {bound}); {runs} runs at CPL 0 unstepped "
            f"(want at least {calls})")


def exact_counts(lines, minimum):
    """Every exact count the log reports must equal its expected value: vpmu_count's JSON lines
    (run without expect=more) and pvcount's a-mode windows; at least MINIMUM of them."""
    patterns = (r'^\[([\w-]+)\] \{"event": "([\w-]+)", "measured": (\d+), "expected": (\d+),',
                r'^\[([\w-]+)\] (?:not )?ok \d+ - pvcount: (a-mode window \d+): (\d+) '
                r'instructions \(want (\d+)\)')
    counts = [m.groups() for line in lines for m in (re.search(p, line) for p in patterns) if m]
    wrong = [c for c in counts if c[2] != c[3]]
    domains = len({c[0] for c in counts})
    if wrong:
        name, what, got, want = wrong[0]
        return False, (f"{len(wrong)} of {len(counts)} counts wrong, first [{name}] {what}: "
                       f"{got}, expected {want}")
    return (len(counts) >= int(minimum),
            f"{len(counts)} counts from {domains} domains, all exact (want at least {minimum})")


def counts_after(lines, name, regex):
    """Domain NAME still counted after the first line matching REGEX: one of its exact counts
    (vpmu_count's JSON lines) comes later in the log, so its counting overlapped what that line
    marks (in the log's order, which is the hypervisor's)."""
    mark = next((i for i, line in enumerate(lines) if re.search(regex, line)), None)
    if mark is None:
        return False, f"no line matching {regex}"
    pattern = re.compile(rf'^\[{re.escape(name)}\] \{{"event": ')
    later = sum(1 for line in lines[mark + 1:] if pattern.search(line))
    before = sum(1 for line in lines[:mark] if pattern.search(line))
    return later > 0, f"[{name}]: {before} counts before line {mark + 1}, {later} after"


def perf_stat_at_least(lines, prefix, event, minimum):
    """The Linux guest's /init printed perf stat -x, for EVENT once, as 'perfvisor-linux: PREFIX:
    COUNT,,EVENT,...' (docs/linux-guest.md), and COUNT is at least MINIMUM."""
    try:
        count = _one(lines, rf"perfvisor-linux: {re.escape(prefix)}: (\d+),,{re.escape(event)},",
                     f"{prefix}: COUNT,,{event},")
    except ValueError as err:
        return False, f"{event}: {err}"
    return count >= int(minimum), f"{prefix} {event}: {count} (want at least {minimum})"


def linux_tsc(lines):
    """Linux took its TSC's frequency from CPUID leaf 15H ('tsc: Detected M.KKK MHz TSC'), and
    it is the rate perfvisor measured ('TSC runs at K kHz'), to the kHz Linux prints."""
    try:
        host = _one(lines, r"^perfvisor: TSC runs at (\d+) kHz", "TSC runs at K kHz")
    except ValueError as err:
        return False, str(err)
    found = [m for m in map(re.compile(r"tsc: Detected (\d+)\.(\d{3}) MHz TSC$").search, lines)
             if m]
    if len(found) != 1:
        return False, f"{len(found)} lines with 'tsc: Detected M MHz TSC', expected one"
    guest = int(found[0].group(1)) * 1000 + int(found[0].group(2))
    return guest == host, f"Linux's TSC {guest} kHz, perfvisor's {host} kHz"


def workload_values(lines, minimum):
    """The workload guests' JSON values (guest-stub/workloads): each names its own domain as
    the hypervisor's "[name]" prefix does, and each exact count (expected not null, not a
    profile's samples) equals its expectation; at least MINIMUM of those."""
    exact, wrong, misnamed = 0, [], []
    for line in lines:
        m = re.match(r"^\[([\w-]+)\] (\{.*\})$", line)
        if not m:
            continue
        try:
            v = json.loads(m.group(2))
        except ValueError:
            continue
        if "workload" not in v:
            continue
        if v.get("domain") != m.group(1):
            misnamed.append(f"[{m.group(1)}] says domain {v.get('domain')!r}")
        if v.get("expected") is None or "function" in v:
            continue
        exact += 1
        if v["measured"] != v["expected"]:
            wrong.append(f"[{m.group(1)}] {v['workload']} thread {v['thread']} {v['event']}: "
                         f"{v['measured']}, expected {v['expected']}")
    if misnamed or wrong:
        return False, "; ".join((misnamed + wrong)[:3]) + \
            f" ({len(wrong)} of {exact} counts wrong, {len(misnamed)} misnamed)"
    return (exact >= int(minimum),
            f"{exact} exact counts, all right, every value named by its domain "
            f"(want at least {minimum})")
