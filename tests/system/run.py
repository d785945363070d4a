#!/usr/bin/env python3
"""Runs the system tests of tests/system/tests.cfg and judges their serial logs."""

import argparse
import inspect
import os
import re
import shlex
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import checks

SCENARIOS = "tests/scenarios"
ISO_DIR = "build/iso"
LOG_DIR = "build/test-logs"
EMULATORS = ("bochs", "qemu", "kvm")
# Statuses scripts/run-emu.sh gives when there is no verdict line.
NO_VERDICT = {124: "timeout", 125: "no verdict line, emulator ended", 130: "interrupted"}
# VERDICT 'none': a kernel booted without perfvisor; the emulator must end by itself.
ENDED_BY_ITSELF = 125
CHECK_CALL = re.compile(r"@([A-Za-z_]\w*)\((.*)\)")


class Test:
    """One row of the table."""

    def __init__(self, where, words):
        if len(words) < 6:
            raise ValueError(f"{where}: want NAME EMU CPUS TIMEOUT VERDICT BOOT [CHECK]...")
        self.name, self.emu, cpus, timeout, verdict, boot = words[:6]
        if not re.fullmatch(r"[A-Za-z0-9_.-]+", self.name):
            raise ValueError(f"{where}: bad test name '{self.name}'")
        if self.emu not in EMULATORS:
            raise ValueError(f"{where}: emulator '{self.emu}' is not one of {EMULATORS}")
        try:
            self.cpus, self.timeout = int(cpus), int(timeout)
            self.verdict = None if verdict == "none" else int(verdict)
        except ValueError:
            raise ValueError(f"{where}: CPUS and TIMEOUT must be numbers, VERDICT a number "
                             "or 'none'") from None
        how, _, scenario = boot.partition("=")
        if how not in ("iso", "kernel") or not scenario:
            raise ValueError(f"{where}: BOOT must be iso=SCENARIO or kernel=SCENARIO")
        if how == "kernel" and self.emu == "bochs":
            raise ValueError(f"{where}: Bochs boots only iso=SCENARIO")
        self.boot = how
        self.scenario = os.path.join(SCENARIOS, scenario)
        stem = os.path.splitext(os.path.basename(scenario))[0]
        self.iso = os.path.join(ISO_DIR, stem + ".iso")
        self.must, self.must_not, self.calls = [], [], []
        for check in words[6:]:
            call = CHECK_CALL.fullmatch(check)
            if call:
                func = getattr(checks, call.group(1), None)
                if not callable(func) or call.group(1).startswith("_"):
                    raise ValueError(f"{where}: no check '{call.group(1)}' in checks.py")
                args = [a.strip() for a in call.group(2).split(",")] if call.group(2) else []
                try:
                    inspect.signature(func).bind([], *args)
                except TypeError as err:
                    raise ValueError(f"{where}: {check}: {err}") from None
                self.calls.append((check, func, args))
                continue
            if check[:1] not in "+-" or len(check) < 2:
                raise ValueError(f"{where}: check '{check}' must be +REGEX, -REGEX or "
                                 "@CHECK(ARG,...)")
            try:
                regex = re.compile(check[1:])
            except re.error as err:
                raise ValueError(f"{where}: bad regex '{check[1:]}': {err}") from None
            (self.must if check[0] == "+" else self.must_not).append(regex)
        self.log = os.path.join(LOG_DIR, self.name)


def read_table(path):
    tests = []
    row, where = "", ""
    with open(path, encoding="utf-8") as table:
        for lineno, line in enumerate(table, 1):
            where = where or f"{path}:{lineno}"
            line = line.rstrip("\n")
            # A backslash at the end of a line continues the row on the next one.
            if line.endswith("\\"):
                row += line[:-1] + " "
                continue
            try:
                words = shlex.split(row + line, comments=True)
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
            if words:
                tests.append(Test(where, words))
            row, where = "", ""
    if row:
        raise ValueError(f"{where}: the last row ends with a backslash")
    names = [t.name for t in tests]
    for name in names:
        if names.count(name) > 1:
            raise ValueError(f"{path}: test name '{name}' is used twice")
    return tests


def build_isos(tests):
    """Builds each ISO the tests need once; returns {iso: error text} for failures."""
    failed = {}
    for iso, scenario in sorted({(t.iso, t.scenario) for t in tests if t.boot == "iso"}):
        done = subprocess.run(["scripts/mkiso.sh", scenario, iso], stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT, text=True)
        for line in done.stdout.splitlines():
            print(f"# {line}", flush=True)
        if done.returncode != 0:
            failed[iso] = done.stdout.strip().splitlines()[-1:] or ["mkiso.sh failed"]
    return failed


def run_one(test):
    """Runs one test; returns the list of reasons it failed (empty: passed)."""
    shutil.rmtree(test.log, ignore_errors=True)
    os.makedirs(test.log)
    cmd = ["scripts/run-emu.sh", "--emu", test.emu, "--cpus", str(test.cpus),
           "--timeout", str(test.timeout), "--log", test.log, "--quiet"]
    cmd += ["--iso", test.iso] if test.boot == "iso" else ["--scenario", test.scenario]
    with open(os.path.join(test.log, "run-emu.txt"), "w", encoding="utf-8") as out:
        # run-emu.sh enforces the timeout; this one only guards against a stuck script.
        status = subprocess.run(cmd, stdout=out, stderr=subprocess.STDOUT,
                                timeout=test.timeout + 60).returncode

    reasons = []
    if test.verdict is None:
        if status != ENDED_BY_ITSELF:
            why = NO_VERDICT.get(status, f"a 'perfvisor: EXIT' line (status {status})")
            reasons.append(f"{why}, expected the emulator to end by itself without one; "
                           f"see {test.log}/run-emu.txt")
    elif status in NO_VERDICT:
        reasons.append(f"{NO_VERDICT[status]} (no 'perfvisor: EXIT' line), expected verdict "
                       f"{test.verdict}; see {test.log}/run-emu.txt")
    elif status != test.verdict:
        reasons.append(f"verdict {status}, expected {test.verdict}")
    with open(os.path.join(test.log, "run-emu.txt"), encoding="utf-8") as out:
        if "did not end by itself" in out.read():
            reasons.append("the emulator did not end by itself after the verdict")
    try:
        with open(os.path.join(test.log, "serial.txt"), encoding="utf-8",
                  errors="replace") as serial:
            lines = serial.read().replace("\r", "").splitlines()
    except FileNotFoundError:
        lines = []
    for regex in test.must:
        if not any(regex.search(line) for line in lines):
            reasons.append(f"missing: {regex.pattern}")
    for regex in test.must_not:
        hits = [line for line in lines if regex.search(line)]
        if hits:
            reasons.append(f"unwanted: {regex.pattern} (line: {hits[0]})")
    for check, func, args in test.calls:
        passed, measured = func(lines, *args)
        with open(os.path.join(test.log, "checks.txt"), "a", encoding="utf-8") as out:
            print(f"{check}: {'ok' if passed else 'FAILED'}: {measured}", file=out)
        if not passed:
            reasons.append(f"{check}: {measured}")
    return reasons


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("pattern", nargs="?", default="",
                        help="run only tests whose name matches this regex")
    parser.add_argument("--cfg", default="tests/system/tests.cfg", help="the test table")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="tests run at once")
    args = parser.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

    try:
        tests = [t for t in read_table(args.cfg) if re.search(args.pattern, t.name)]
    except (OSError, ValueError, re.error) as err:
        print(f"run.py: {err}", file=sys.stderr)
        return 2
    if not tests:
        print(f"run.py: no test in {args.cfg} matches '{args.pattern}'", file=sys.stderr)
        return 2
    print(f"# {len(tests)} system tests, {args.jobs} at a time", flush=True)
    iso_errors = build_isos(tests)

    lock = threading.Lock()
    results = {}

    def run_and_report(number, test):
        start = time.monotonic()
        if test.boot == "iso" and test.iso in iso_errors:
            shutil.rmtree(test.log, ignore_errors=True)
            reasons = [f"no ISO: {line}" for line in iso_errors[test.iso]]
        else:
            with lock:
                print(f"# {test.name}: starting ({test.emu}, {test.cpus} CPU, "
                      f"up to {test.timeout} s)", flush=True)
            try:
                reasons = run_one(test)
            except subprocess.TimeoutExpired:
                reasons = ["scripts/run-emu.sh did not end"]
            except OSError as err:
                reasons = [f"cannot run: {err}"]
        with lock:
            results[test.name] = not reasons
            if reasons:
                print(f"not ok {number} - {test.name}")
                for reason in reasons:
                    print(f"#   {reason}")
                if os.path.isdir(test.log):
                    print(f"#   log: {test.log}/serial.txt")
                sys.stdout.flush()
            else:
                print(f"ok {number} - {test.name} ({time.monotonic() - start:.1f} s)",
                      flush=True)

    pool = ThreadPoolExecutor(max_workers=max(1, args.jobs))
    try:
        for number, test in enumerate(tests, 1):
            pool.submit(run_and_report, number, test)
        pool.shutdown()
    except KeyboardInterrupt:
        # The running emulators got the Ctrl-C too; start no more.
        pool.shutdown(cancel_futures=True)
        print("run.py: interrupted", file=sys.stderr)
        return 130

    passed = sum(results.values())
    failed = len(tests) - passed
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
