#!/usr/bin/env python3
"""Runs the system tests of tests/system/*.cfg and judges their serial logs (docs/testing.md).

A table holds stanzas; '#' starts a comment line, and a comment after a key's value:
    [name]                 unique across all tables; logs in build/test-logs/NAME/
    emu = bochs            bochs | qemu | kvm
    cpus = 2
    timeout = 120          seconds; a timeout fails the test
    verdict = 0            the code of the last 'perfvisor: EXIT <code>' line, or none
    boot = iso             iso (GRUB ISO, any emu) | kernel (QEMU -kernel)
    scenario = NAME.cfg    under tests/scenarios/
    groups = word word     what feature(s) it proves; 'long' runs only when G= names it
    + REGEX                some serial line must match (Python re.search; the whole line)
    - REGEX                no serial line may match
    @ check(ARG,...)       a numeric check from tests/system/checks.py
    ok DOMAIN: CHECK NAME  DOMAIN's guest printed 'ok N - CHECK NAME' (any N, the name
                           alone or followed by ':' or a space), no 'not ok' of that name,
                           and the ok is not a '# SKIP'
"""

import argparse
import glob
import inspect
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import checks

TABLES = "tests/system/*.cfg"
SCENARIOS = "tests/scenarios"
ISO_DIR = "build/iso"
LOG_DIR = "build/test-logs"
EMULATORS = ("bochs", "qemu", "kvm")
# Statuses scripts/run-emu.sh gives when there is no verdict line.
NO_VERDICT = {124: "timeout", 125: "no verdict line, emulator ended", 130: "interrupted"}
# VERDICT 'none': a kernel booted without perfvisor; the emulator must end by itself.
ENDED_BY_ITSELF = 125
# Rows of this group run only when G= names it: they take too long for make test.
LONG = "long"
KEYS = ("emu", "cpus", "timeout", "verdict", "boot", "scenario", "groups")
# Keys a stanza may leave out: mem (MB for the emulator, run-emu.sh's default when absent).
OPTIONAL_KEYS = ("mem",)
STANZA = re.compile(r"\[([A-Za-z0-9_.-]+)\]$")
KEY_LINE = re.compile(r"([a-z]+)\s*=\s*(.*?)\s*(?:#.*)?$")
CHECK_CALL = re.compile(r"@\s*([A-Za-z_]\w*)\((.*)\)$")
GUEST_CHECK = re.compile(r"ok\s+([\w.-]+):\s*(\S.*)$")
# A guest's check line, as the guest test library prints it behind the hypervisor's prefix.
CHECK_LINE = re.compile(r"^\[([\w.-]+)\] (not )?ok \d+ - (.*)$")
SKIP = re.compile(r"(.*?)\s+# SKIP\b")


def check_named(text, name):
    """A check's text carries NAME when it is NAME or goes on after it with ':' or a space
    (the measured values of 'what: measured M expected E' are not part of the name)."""
    return text == name or (text.startswith(name) and text[len(name)] in ": ")


class Test:
    """One stanza of a table."""

    def __init__(self, name, where):
        self.name, self.where = name, where
        self.must, self.must_not, self.calls, self.guest_checks = [], [], [], []
        self.fields = {}
        self.log = os.path.join(LOG_DIR, name)

    def add(self, where, line):
        """Takes one line of the stanza's body."""
        key = KEY_LINE.fullmatch(line)
        if line[0] in "+-":
            try:
                regex = re.compile(line[1:].strip())
            except re.error as err:
                raise ValueError(f"{where}: bad regex '{line[1:].strip()}': {err}") from None
            if not regex.pattern:
                raise ValueError(f"{where}: '{line[0]}' wants a regex after it")
            (self.must if line[0] == "+" else self.must_not).append(regex)
        elif line[0] == "@":
            self.add_call(where, line)
        elif GUEST_CHECK.fullmatch(line):
            domain, check = GUEST_CHECK.fullmatch(line).groups()
            self.guest_checks.append((domain, check.rstrip()))
        elif key:
            if key.group(1) not in KEYS + OPTIONAL_KEYS:
                raise ValueError(f"{where}: unknown key '{key.group(1)}' (keys: "
                                 f"{', '.join(KEYS + OPTIONAL_KEYS)})")
            if key.group(1) in self.fields:
                raise ValueError(f"{where}: '{key.group(1)}' given twice in [{self.name}]")
            self.fields[key.group(1)] = (where, key.group(2))
        else:
            raise ValueError(f"{where}: want 'key = value', '+ REGEX', '- REGEX', "
                             "'@ check(ARG,...)' or 'ok DOMAIN: CHECK NAME'")

    def add_call(self, where, line):
        call = CHECK_CALL.fullmatch(line)
        if not call:
            raise ValueError(f"{where}: want '@ check(ARG,...)'")
        func = getattr(checks, call.group(1), None)
        if not callable(func) or call.group(1).startswith("_"):
            raise ValueError(f"{where}: no check '{call.group(1)}' in checks.py")
        args = [a.strip() for a in call.group(2).split(",")] if call.group(2).strip() else []
        try:
            inspect.signature(func).bind([], *args)
        except TypeError as err:
            raise ValueError(f"{where}: {line}: {err}") from None
        self.calls.append((f"@{call.group(1)}({','.join(args)})", func, args))

    def finish(self):
        """Checks the keys once the stanza is read."""
        missing = [k for k in KEYS if k not in self.fields]
        if missing:
            raise ValueError(f"{self.where}: [{self.name}] lacks {', '.join(missing)}")
        value = {k: v for k, (_, v) in self.fields.items()}
        where = {k: w for k, (w, _) in self.fields.items()}
        self.emu = value["emu"]
        if self.emu not in EMULATORS:
            raise ValueError(f"{where['emu']}: emu '{self.emu}' is not one of {EMULATORS}")
        try:
            self.cpus = int(value["cpus"])
            self.timeout = int(value["timeout"])
            self.verdict = None if value["verdict"] == "none" else int(value["verdict"])
            self.mem = int(value["mem"]) if "mem" in value else None
        except ValueError:
            raise ValueError(f"{self.where}: cpus, timeout and mem must be numbers, verdict a "
                             "number or 'none'") from None
        self.boot = value["boot"]
        if self.boot not in ("iso", "kernel"):
            raise ValueError(f"{where['boot']}: boot must be iso or kernel")
        if self.boot == "kernel" and self.emu == "bochs":
            raise ValueError(f"{where['boot']}: Bochs boots only from an iso")
        scenario = value["scenario"]
        if not scenario or os.path.dirname(scenario) or not scenario.endswith(".cfg"):
            raise ValueError(f"{where['scenario']}: scenario must be a file NAME.cfg of "
                             f"{SCENARIOS}/")
        self.scenario = os.path.join(SCENARIOS, scenario)
        self.iso = os.path.join(ISO_DIR, scenario[:-len(".cfg")] + ".iso")
        self.groups = value["groups"].split()
        if not self.groups:
            raise ValueError(f"{where['groups']}: name at least one group")


def read_table(path):
    """The stanzas of one table file."""
    tests, test = [], None
    with open(path, encoding="utf-8") as table:
        for lineno, line in enumerate(table, 1):
            where = f"{path}:{lineno}"
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            stanza = STANZA.fullmatch(line)
            if stanza:
                if test:
                    test.finish()
                test = Test(stanza.group(1), where)
                tests.append(test)
            elif line.startswith("["):
                raise ValueError(f"{where}: bad stanza name {line} (letters, digits, '_.-')")
            elif test is None:
                raise ValueError(f"{where}: a line before the first [name]")
            else:
                test.add(where, line)
    if test:
        test.finish()
    return tests


def read_tables(paths):
    """The stanzas of every table; a name must be unique across them."""
    tests, seen = [], {}
    for path in paths:
        for test in read_table(path):
            if test.name in seen:
                raise ValueError(f"{test.where}: test name '{test.name}' is used twice "
                                 f"(first at {seen[test.name]})")
            seen[test.name] = test.where
            tests.append(test)
    return tests


def select(tests, pattern, groups):
    """The tests whose name matches PATTERN and that are in one of GROUPS (any if none);
    a test of group 'long' only when GROUPS names it."""
    return [t for t in tests if re.search(pattern, t.name)
            and (not groups or set(groups) & set(t.groups))
            and (LONG not in t.groups or LONG in groups)]


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
    cmd += ["--mem", str(test.mem)] if test.mem else []
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
    return reasons + judge(test, lines)


def judge_guest_check(lines, domain, name):
    """'ok DOMAIN: NAME': the reason it fails, or None."""
    passed = failed = skipped = None
    for line in lines:
        m = CHECK_LINE.match(line)
        if not m or m.group(1) != domain:
            continue
        skip = SKIP.match(m.group(3))
        if not check_named(skip.group(1) if skip else m.group(3), name):
            continue
        if m.group(2):
            failed = failed or line
        elif skip:
            skipped = skipped or line
        else:
            passed = passed or line
    if failed:
        return f"failed: {failed}"
    if not passed:
        return f"skipped: {skipped}" if skipped else f"missing: [{domain}] ok N - {name}"
    return None


def judge(test, lines):
    """The reasons the serial log LINES fails the test's expectations (empty: it passes)."""
    reasons = []
    for regex in test.must:
        if not any(regex.search(line) for line in lines):
            reasons.append(f"missing: {regex.pattern}")
    for regex in test.must_not:
        hits = [line for line in lines if regex.search(line)]
        if hits:
            reasons.append(f"unwanted: {regex.pattern} (line: {hits[0]})")
    for domain, name in test.guest_checks:
        reason = judge_guest_check(lines, domain, name)
        if reason:
            reasons.append(reason)
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
                        help="run only tests whose name matches this regex (make T=)")
    parser.add_argument("-G", "--groups", default="",
                        help="run only tests of these groups, words split by spaces or "
                        "commas (make G=); group 'long' runs only when named")
    parser.add_argument("--cfg", action="append",
                        help=f"a test table (repeat for more; default {TABLES})")
    parser.add_argument("--list", action="store_true",
                        help="print the selected tests and their groups, run nothing")
    parser.add_argument("-j", "--jobs", type=int, default=2, help="tests run at once")
    args = parser.parse_args()
    os.chdir(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

    groups = args.groups.replace(",", " ").split()
    tables = args.cfg or sorted(glob.glob(TABLES))
    try:
        tests = select(read_tables(tables), args.pattern, groups)
    except (OSError, ValueError, re.error) as err:
        print(f"run.py: {err}", file=sys.stderr)
        return 2
    if not tests:
        print(f"run.py: no test of {', '.join(tables)} matches T='{args.pattern}' "
              f"G='{args.groups}' (group '{LONG}' runs only with G={LONG})", file=sys.stderr)
        return 2
    if args.list:
        for test in tests:
            print(f"{test.name:24} {' '.join(test.groups):32} {test.where}")
        return 0
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
