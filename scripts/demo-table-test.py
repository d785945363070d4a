#!/usr/bin/env python3
"""Proves scripts/demo-table.py (the table make run prints) judges a demo log right: synthetic
serial logs with every count exact, one count wrong, one count missing and one domain silent,
the verdict line and the exit status of each; and the same for the Linux guest's perf lines
(make run LINUX=1)."""

import json
import os
import subprocess
import sys
import tempfile

TABLE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo-table.py")

SUMMARY = [
    "perfvisor:   domain 0 (a): exit code 0, 2 vcpus, 812 exits, 3 migrations",
    "perfvisor:   domain 1 (h): exit code 0, 2 vcpus, 904 exits, 2 migrations",
    "perfvisor:   pcpu 0: 120 vcpu switches (300 ticks each, PMU 60), 2 migrations in",
    "perfvisor:   pcpu 1: 80 vcpu switches (310 ticks each, PMU 61), 3 migrations in",
]


def value(domain, mode, thread, event, measured, expected):
    """One JSON line of the demo guest, behind the hypervisor's domain prefix."""
    v = {"domain": domain, "workload": "demo", "mode": mode, "thread": thread, "vcpu": 0,
         "vcpus": 3, "resumes": 7, "event": event, "measured": measured,
         "expected": expected, "raw": 12}
    return f"[{domain}] {json.dumps(v, separators=(',', ':'))}"


def demo_log(wrong=None, missing=None, domains=("a", "h")):
    """A demo log of two threads per domain; WRONG=(domain, thread, event) counts one off,
    MISSING=(domain, thread, event) leaves one out."""
    lines = []
    for domain in domains:
        mode = "hvm" if domain == "h" else "pv-a"
        for thread in (0, 1):
            for event, want in (("instructions", 4005), ("branches", 1001),
                                ("read-exits", 12 if domain == "h" else 0)):
                if missing == (domain, thread, event):
                    continue
                got = want + 1 if wrong == (domain, thread, event) else want
                lines.append(value(domain, mode, thread, event, got, want))
    return lines + SUMMARY


def linux_log(instructions=20004):
    """What the Linux guest's /init prints through the kernel's log (guest-stub/linux/init.sh)."""
    lines = [f"perf: {instructions},,instructions:u,8727830,100.00,,",
             "perf: 10001,,branches:u,8727830,100.00,,"]
    lines += [f"profile:     {share}%  {n:>12}  [.] {fn}" for share, n, fn in
              (("45.45", 10, "cost10"), ("31.82", 7, "cost7"), ("18.18", 4, "cost4"),
               ("4.55", 1, "cost1"))]
    return [f"[linux] [    8.987670] perfvisor-linux: {line}" for line in lines] + SUMMARY


def table(lines):
    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as log:
        log.write("".join(line + "\n" for line in lines))
    try:
        done = subprocess.run([sys.executable, TABLE, log.name], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
    finally:
        os.remove(log.name)
    return done.returncode, done.stdout


CASES = [
    ("every count exact: yes", demo_log(), 0,
     ["every count exact: yes (12 of 12 values)", "switched VCPUs 200 times, 5 of them"]),
    ("one count wrong: NO", demo_log(wrong=("h", 1, "branches")), 1,
     ["every count exact: NO (11 of 12 values)", "1002 / 1001  WRONG"]),
    ("one count missing: NO", demo_log(missing=("a", 0, "read-exits")), 1,
     ["every count exact: NO (11 of 12 values)", "missing"]),
    ("a domain without counts: NO", demo_log(domains=("a",)), 1,
     ["every count exact: NO (6 of 6 values)", "domain h (exit code 0): no counts"]),
    ("a log without demo lines: no table, status 0", SUMMARY, 0, []),
    ("Linux: every count exact: yes", linux_log(), 0,
     ["every count exact: yes (6 of 6 values)", "20004 / 20004", "cost10 samples  10 / 10"]),
    ("Linux: one count wrong: NO", linux_log(instructions=20003), 1,
     ["every count exact: NO (5 of 6 values)", "20003 / 20004  WRONG"]),
    ("Linux: one count missing: NO", [l for l in linux_log() if "cost1$" not in l + "$"], 1,
     ["every count exact: NO (5 of 6 values)", "missing"]),
]


def main():
    failed = 0
    for number, (what, lines, status_want, words) in enumerate(CASES, 1):
        status, out = table(lines)
        passed = status == status_want and all(w in out for w in words) and (words or not out)
        print(f"{'ok' if passed else 'not ok'} {number} - {what}")
        if not passed:
            failed += 1
            print(f"#   status {status}, wanted {status_want}")
            print("".join(f"#   {line}\n" for line in out.splitlines()), end="")
    print(f"{len(CASES) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
