#!/usr/bin/env python3
"""Checks tests/kut/run.py's verdicts and unittests.cfg reading on made-up logs (make kut-check)."""

import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run  # noqa: E402

EXITED = "perfvisor:   domain 0 (kut): exit code {}, 1 vcpus, 9 exits, 0 migrations, ran 5 host TSC ticks\n"
CASES = [
    ("pass", "[kut] SUMMARY: 12 tests\n" + EXITED.format(0) + "perfvisor: EXIT 0\n", 2,
     ("PASS", 12)),
    ("fail", "[kut] SUMMARY: 12 tests, 2 unexpected failures\n" + EXITED.format(1)
     + "perfvisor: EXIT 2\n", 2, ("FAIL", 12)),
    ("all skipped", "[kut] SUMMARY: 3 tests, 3 skipped\n" + EXITED.format(38)
     + "perfvisor: EXIT 2\n", 2, ("SKIP", 3)),
    ("unhandled exception", "[kut] Unhandled exception 13 #GP(0)\n" + EXITED.format(63)
     + "perfvisor: EXIT 2\n", 2, ("FAIL", None)),
    ("killed", "perfvisor:   domain 0 (kut): killed: triple fault\nperfvisor: EXIT 2\n", 2,
     ("KILLED", None)),
    ("refused", "perfvisor:   domain 0 (kut): not started: bad image\nperfvisor: EXIT 2\n", 2,
     ("REFUSED", None)),
    ("boot refused", "perfvisor: module 1: too long\nperfvisor: EXIT 4\n", 4,
     ("REFUSED", None)),
    ("timeout", "[kut] PASS: one\n", 124, ("TIMEOUT", None)),
    ("exit 0 with failures", "[kut] SUMMARY: 4 tests, 1 unexpected failures\n"
     + EXITED.format(0) + "perfvisor: EXIT 0\n", 0, ("FAIL", 4)),
]

CFG = """# comment
[one]
file = a.flat
smp = 2
test_args = 'x y'
qemu_params = -cpu max -m 2048
groups = g1 nodefault

[two]
file = b.flat
arch = i386
extra_params = -append "p q"
"""


def main():
    n = failed = 0
    for name, serial, status, want in CASES:
        got = run.judge(serial, status)[:2]
        n += 1
        ok = got == want
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {n} - judge: {name}" + ("" if ok else f" (got {got})"))
    with tempfile.NamedTemporaryFile("w", suffix=".cfg", delete=False) as f:
        f.write(CFG)
    one, two = run.parse_unittests(f.name)
    os.unlink(f.name)
    checks = [
        ("test_args unquoted", run.test_args(one) == "x y"),
        ("extra_params -append", run.test_args(two) == "p q"),
        ("-m above the domain maximum is capped", run.guest_mem_mib(one) == run.MEM_MAX_MIB),
        ("no -m: QEMU's 128 MiB", run.guest_mem_mib(two) == 128),
        ("i386 entries are skipped with a reason", run.skip_reason(two, []) is not None),
        ("nodefault left out unless named", not run.selected(one, [], [])
         and run.selected(one, ["on*"], []) and run.selected(one, [], ["g1"])),
        ("skip table covers nested VMX", run.skip_reason({"name": "vmx_pf_vpid_test"},
                                                         run.read_skip_table(run.SKIP_TABLE))),
        ("argv[0] first in the module string, the test device and the environment module",
         run.module_line(one, "/k/x86/a.flat", 2, 128)
         == "module /k/x86/a.flat name=kut vcpus=2 mem=128M testdev initrd=kutenv -- "
            "x86/a.flat x y\n"),
        ("the environment says TEST_DEVICE=0", run.env_text() == "TEST_DEVICE=0\n"),
        ("the slow table lengthens the CR0.WP toggles' limit, never shortens one",
         run.entry_timeout({"name": "vmexit_cr0_wp"}, run.read_slow_table(run.SLOW_TABLE), 300)
         > 300
         and run.entry_timeout({"name": "vmexit_cr0_wp"}, [("vmexit_cr0_wp", 60, "")], 300)
         == 300
         and run.entry_timeout({"name": "msr"}, run.read_slow_table(run.SLOW_TABLE), 300)
         == 300),
        ("-x2apic in qemu_params: x2apic=off",
         run.cpu_options({"qemu_params": "-cpu qemu64,-x2apic,+tsc-deadline"}) == " x2apic=off"
         and run.cpu_options({"qemu_params": "-cpu qemu64,+x2apic,+tsc-deadline"}) == ""
         and run.cpu_options(one) == ""),
    ]
    for name, ok in checks:
        n += 1
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {n} - {name}")
    print(f"{n - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
