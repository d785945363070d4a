#!/usr/bin/env python3
"""Runs a user's kvm-unit-tests build (x86/unittests.cfg) under perfvisor, entry by entry, as TAP."""

import argparse
import fnmatch
import os
import re
import shlex
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SKIP_TABLE = os.path.join(HERE, "skip.cfg")
SLOW_TABLE = os.path.join(HERE, "slow.cfg")
# kvm-unit-tests' lib/report.c: report_summary() returns 0, 1, or 77 >> 1 when all skipped.
EXIT_PASS, EXIT_FAIL, EXIT_SKIP = 0, 1, 77 >> 1
# QEMU's -m default, which kvm-unit-tests' x86 entries are written for; perfvisor's
# largest domain (hv/domcfg.h DOM_MEM_MAX).
MEM_DEFAULT_MIB, MEM_MAX_MIB = 128, 1024
# The hypervisor's own frames, page tables and the boot modules besides the guest's RAM.
EMU_MEM_EXTRA_MIB = 128
# Statuses of scripts/run-emu.sh without a verdict line.
RUN_TIMEOUT, RUN_NO_VERDICT = 124, 125
SUMMARY = re.compile(r"^\[kut\] SUMMARY: (\d+) tests(?:, (\d+) unexpected failures)?"
                     r"(?:, (\d+) known failures)?(?:, (\d+) expected failures)?"
                     r"(?:, (\d+) skipped)?")
DOM_EXIT = re.compile(r"^perfvisor:   domain 0 \(kut\): exit code (-?\d+),")
DOM_FATE = re.compile(r"^perfvisor:   domain 0 \(kut\): (killed|not started): (.*)$")
HV_EXIT = re.compile(r"^perfvisor: EXIT (\d+)$")
# The environment kvm-unit-tests reads from its first multiboot module (lib/x86/setup.c), as
# its own scripts/arch-run.bash passes one with QEMU's -initrd. TEST_DEVICE=0: in this
# kvm-unit-tests every reader of it asks "is this KVM?", not "is pc-testdev there?" (the
# device itself is offered: testdev below); docs/kut.md, "TEST_DEVICE", says why.
KUT_ENV = {"TEST_DEVICE": "0"}
ENV_DATA = "kutenv"


def parse_unittests(path):
    """The entries of unittests.cfg in order, each a dict of its keys with 'name'."""
    entries, cur = [], None
    with open(path, encoding="utf-8") as f:
        for raw in f:
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            sect = re.fullmatch(r"\[(.+)\]", line)
            if sect:
                cur = {"name": sect.group(1)}
                entries.append(cur)
                continue
            key, eq, val = line.partition("=")
            if cur is None or not eq:
                continue
            val = val.strip()
            if len(val) >= 2 and val[0] == val[-1] and val[0] in "'\"":
                val = val[1:-1]
            cur[key.strip()] = val
    return entries


def read_skip_table(path):
    table = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.strip() and not line.startswith("#"):
                pattern, reason = line.split(None, 1)
                table.append((pattern, reason.strip()))
    return table


def skip_reason(entry, table):
    if entry.get("arch", "x86_64") != "x86_64":
        return f"arch {entry['arch']}: perfvisor runs x86_64 builds"
    for pattern, reason in table:
        if fnmatch.fnmatchcase(entry["name"], pattern):
            return reason
    return None


def read_slow_table(path):
    """(pattern, seconds, reason) of the entries that need a longer limit under Bochs."""
    return [(pattern, int(rest.split(None, 1)[0]), rest.split(None, 1)[1])
            for pattern, rest in read_skip_table(path)]


def entry_timeout(entry, slow, default):
    """The larger of the default and the slow table's seconds for the entry."""
    for pattern, seconds, _ in slow:
        if fnmatch.fnmatchcase(entry["name"], pattern):
            return max(default, seconds)
    return default


def guest_mem_mib(entry):
    """The RAM QEMU's -m in qemu_params (or extra_params) asks for, else QEMU's default."""
    params = entry.get("qemu_params", "") + " " + entry.get("extra_params", "")
    m = re.search(r"-m\s+(\d+)([MmGg]?)\b", params)
    if not m:
        return MEM_DEFAULT_MIB
    mib = int(m.group(1)) * (1024 if m.group(2) in ("g", "G") else 1)
    # Domain RAM is a multiple of 2 MiB (hv/domcfg.h DOM_MEM_ALIGN).
    return min(max(mib + mib % 2, 2), MEM_MAX_MIB)


def test_args(entry):
    """The guest's arguments: test_args, or what an old-style extra_params gives -append."""
    if "test_args" in entry:
        return entry["test_args"]
    m = re.search(r"-append\s+(\"[^\"]*\"|'[^']*'|\S+)", entry.get("extra_params", ""))
    return m.group(1).strip("'\"") if m else ""


def cpu_options(entry):
    """Domain options for CPU features qemu_params takes away: -x2apic (the xapic entry)."""
    params = entry.get("qemu_params", "") + " " + entry.get("extra_params", "")
    return " x2apic=off" if re.search(r"-cpu\s+\S*,-x2apic\b", params) else ""


def module_line(entry, flat, vcpus, mem):
    # kvm-unit-tests takes argv[0] from the command line's first word (QEMU puts the
    # kernel's path there), so the file name goes first, as QEMU would give it. The domain
    # gets QEMU's pc-testdev, which kvm-unit-tests' scripts always add, and the environment.
    args = test_args(entry)
    return (f"module {flat} name=kut vcpus={vcpus} mem={mem}M{cpu_options(entry)} testdev "
            f"initrd={ENV_DATA} -- "
            f"x86/{os.path.basename(flat)}{' ' + args if args else ''}\n")


def env_text():
    """The environment module's content: NAME=VALUE lines."""
    return "".join(f"{k}={v}\n" for k, v in KUT_ENV.items())


def judge(serial, status):
    """(outcome, checks, detail) from the serial log and run-emu.sh's status."""
    summary = code = fate = hv_exit = None
    last_hv = ""
    for line in serial.splitlines():
        m = SUMMARY.match(line)
        if m:
            summary = m
        m = DOM_EXIT.match(line)
        if m:
            code = int(m.group(1))
        m = DOM_FATE.match(line)
        if m:
            fate = m
        m = HV_EXIT.match(line)
        if m:
            hv_exit = int(m.group(1))
        if line.startswith("perfvisor: ") and not line.startswith("perfvisor:   "):
            last_hv = line[len("perfvisor: "):]
    checks = int(summary.group(1)) if summary else None
    if fate:
        return ("KILLED" if fate.group(1) == "killed" else "REFUSED"), checks, fate.group(2)
    if code is None:
        if hv_exit is not None:
            return "REFUSED", checks, f"perfvisor EXIT {hv_exit}: {last_hv}"
        if status == RUN_TIMEOUT:
            return "TIMEOUT", checks, "no end before the time limit"
        return "CRASHED", checks, f"no verdict from perfvisor (run-emu status {status})"
    failed = summary and int(summary.group(2) or 0)
    if code == EXIT_PASS and not failed:
        return "PASS", checks, ""
    if code == EXIT_SKIP:
        return "SKIP", checks, "every check skipped itself"
    if code == EXIT_FAIL:
        return "FAIL", checks, f"{failed} unexpected failures" if failed else "exit code 1"
    return "FAIL", checks, f"exit code {code}" + ("" if summary else ", no SUMMARY line")


def selected(entry, names, groups):
    eg = entry.get("groups", "").split()
    if names:
        return any(fnmatch.fnmatchcase(entry["name"], n) for n in names)
    if groups:
        return any(g in eg for g in groups)
    # kvm-unit-tests' run_tests.sh leaves group nodefault out unless asked for.
    return "nodefault" not in eg


def run_entry(entry, kut, args, logdir, timeout):
    flat = os.path.join(kut, "x86", entry["file"])
    if not os.path.isfile(flat):
        return "SKIP", None, f"{entry['file']} is not built in {kut}/x86", 0.0
    vcpus = int(entry.get("smp", "1"))
    mem = guest_mem_mib(entry)
    os.makedirs(logdir, exist_ok=True)
    scenario = os.path.join(logdir, "scenario.cfg")
    env = os.path.abspath(os.path.join(logdir, "env"))
    with open(env, "w", encoding="utf-8") as f:
        f.write(env_text())
    with open(scenario, "w", encoding="utf-8") as f:
        f.write(f"# kvm-unit-tests entry [{entry['name']}], written by tests/kut/run.py\n")
        f.write("multiboot perfvisor.elf\n")
        f.write(module_line(entry, flat, vcpus, mem))
        f.write(f"module {env} data={ENV_DATA}\n")
    start = time.monotonic()
    cmd = ["scripts/run-emu.sh", "--emu", args.emu, "--cpus", str(vcpus),
           "--mem", str(mem + EMU_MEM_EXTRA_MIB), "--timeout", str(timeout),
           "--log", logdir, "--quiet"]
    if args.emu == "bochs":
        iso = os.path.join(logdir, "kut.iso")
        r = subprocess.run(["scripts/mkiso.sh", "-f", scenario, iso], capture_output=True,
                           text=True, check=False)
        if r.returncode:
            return "CRASHED", None, "mkiso: " + r.stderr.strip(), 0.0
        cmd += ["--iso", iso]
    else:
        cmd += ["--scenario", scenario]
    with open(os.path.join(logdir, "run.txt"), "w", encoding="utf-8") as out:
        out.write(" ".join(shlex.quote(c) for c in cmd) + "\n")
        out.flush()
        # The emulator's own limit plus a margin for ISO and start-up.
        status = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                                timeout=timeout + 120, check=False).returncode
    minutes = (time.monotonic() - start) / 60
    try:
        with open(os.path.join(logdir, "serial.txt"), encoding="utf-8", errors="replace") as f:
            serial = f.read()
    except FileNotFoundError:
        serial = ""
    outcome, checks, detail = judge(serial, status)
    return outcome, checks, detail, minutes


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("kut", help="a kvm-unit-tests build directory (./configure && make)")
    ap.add_argument("--emu", default="bochs", choices=("bochs", "qemu", "kvm"))
    ap.add_argument("--tests", default="", help="entry names or patterns, blank or comma separated")
    ap.add_argument("--groups", default="", help="groups of unittests.cfg, blank or comma separated")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per entry")
    ap.add_argument("--logs", default="build/kut")
    args = ap.parse_args()
    cfg = os.path.join(args.kut, "x86", "unittests.cfg")
    if not os.path.isfile(cfg):
        sys.exit(f"kut: {cfg}: not found; KUT= must name a kvm-unit-tests build (docs/kut.md)")
    names = args.tests.replace(",", " ").split()
    groups = args.groups.replace(",", " ").split()
    table = read_skip_table(SKIP_TABLE)
    slow = read_slow_table(SLOW_TABLE)
    entries = [e for e in parse_unittests(cfg) if "file" in e and selected(e, names, groups)]
    head = subprocess.run(["git", "-C", args.kut, "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=False).stdout.strip() or "unknown commit"
    print(f"# kvm-unit-tests {head} in {args.kut}, under {args.emu}, {args.timeout} s per entry")
    print(f"1..{len(entries)}", flush=True)
    counts = {}
    for n, entry in enumerate(entries, 1):
        why = skip_reason(entry, table)
        if why:
            outcome, checks, detail, minutes = "SKIP", None, why, 0.0
        else:
            timeout = entry_timeout(entry, slow, args.timeout)
            print(f"# [{n}/{len(entries)}] {entry['name']}: {entry['file']} "
                  f"smp {entry.get('smp', '1')}, up to {timeout} s ...", flush=True)
            outcome, checks, detail, minutes = run_entry(
                entry, args.kut, args, os.path.join(args.logs, entry["name"]), timeout)
        counts[outcome] = counts.get(outcome, 0) + 1
        what = f"{entry['name']}: {outcome}"
        if checks is not None:
            what += f", {checks} checks"
        if minutes:
            what += f", {minutes:.2f} min"
        if outcome == "SKIP":
            print(f"ok {n} - {what} # SKIP {detail}", flush=True)
        elif outcome == "PASS":
            print(f"ok {n} - {what}", flush=True)
        else:
            print(f"not ok {n} - {what}: {detail} (log {args.logs}/{entry['name']}/serial.txt)",
                  flush=True)
    order = ("PASS", "FAIL", "SKIP", "KILLED", "REFUSED", "TIMEOUT", "CRASHED")
    print("kut: " + ", ".join(f"{counts.get(o, 0)} {o.lower()}" for o in order)
          + f" of {len(entries)} entries")
    return 0 if all(o in ("PASS", "SKIP") for o in counts) else 1


if __name__ == "__main__":
    sys.exit(main())
