#!/usr/bin/env python3
"""cli_consistency_test.py BUILD: one table, every executable, one answer.

Each row runs one command line of a built program and checks the exit code
(DESIGN.md's table: 0 pass/warn, 1 fail, 2 error, 64 usage, 77 skip, 124
timeout), that a usage error is one line on stderr naming the reason, that
--list prints NAME<TAB>DESCRIPTION lines on stdout, that --help shows
defaults and units, that sizes mean the same everywhere and that --expect
is answered from the one instance table by gemm, accept and diag alike.
Cheap rows only (help, list, usage errors, tiny runs): well under 10 s.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

BUILD = os.path.realpath(sys.argv[1])
SOURCE = os.path.realpath(sys.argv[2])
BIN = os.path.join(BUILD, "bin")
EMPTY_ROOT = os.path.join(SOURCE, "tests", "fixtures", "sysroot", "empty")
PROGRAMS = ["nodeprobe", "nodeprobe-limits", "nodeprobe-io", "nodeprobe-allreduce", "nodeprobe-gemm"]
TMP = tempfile.mkdtemp(prefix="nodeprobe-cli-")
ENV = dict(os.environ, NODEPROBE_NO_IMDS="1")
failures = []
rows = 0


def run(argv, timeout=30, env=None):
    return subprocess.run([os.path.join(BIN, argv[0])] + argv[1:], capture_output=True, text=True,
                          timeout=timeout, env=env or ENV, cwd=TMP, stdin=subprocess.DEVNULL)


def check(argv, rc, out=None, err=None, one_line_err=False, list_shape=False, not_rc=None, timeout=30, note=""):
    """One row of the table."""
    global rows
    rows += 1
    shown = " ".join(argv) + (f"  [{note}]" if note else "")
    r = run(argv, timeout)
    bad = []
    if rc is not None and r.returncode != rc:
        bad.append(f"exit {r.returncode}, want {rc}")
    if not_rc is not None and r.returncode in not_rc:
        bad.append(f"exit {r.returncode}, want none of {not_rc}")
    if out and not re.search(out, r.stdout, re.M):
        bad.append(f"stdout lacks /{out}/")
    if err and not re.search(err, r.stderr, re.M):
        bad.append(f"stderr lacks /{err}/")
    if one_line_err and r.stderr.count("\n") != 1:
        bad.append(f"stderr is {r.stderr.count(chr(10))} lines, want one")
    if list_shape:
        lines = r.stdout.splitlines()
        if not lines or any(not re.match(r"^\S+\t\S.*$", l) for l in lines):
            bad.append("stdout is not NAME<TAB>DESCRIPTION lines")
    if bad:
        failures.append(f"{shown}: {'; '.join(bad)}\n  stdout: {r.stdout[-800:]!r}\n  stderr: {r.stderr[-800:]!r}")
    return r


def main():
    # --help: every executable and subcommand, defaults and units shown.
    for prog in PROGRAMS:
        check([prog, "--help"], 0, out=r"(?i)options")
        check([prog, "--list"], 0, list_shape=True)
        check([prog, "--no-such-flag"], 64, one_line_err=True)
    for sub in ["accept", "diag", "collect", "compare", "report", "fleet"]:
        check(["nodeprobe", sub, "--help"], 0, out=r"(?i)options")
        check(["nodeprobe", sub, "--no-such-flag"], 64, one_line_err=True)
    for sub in ["prepare", "read", "sweep", "clean", "accept"]:
        check(["nodeprobe-io", sub, "--help"], 0, out=r"(?i)options")
        check(["nodeprobe-io", sub, "--list"], 0, list_shape=True)
    # CLI11 writes a default as "=VALUE" after the type; sizes say their units.
    check(["nodeprobe-allreduce", "--help"], 0, out=r"--bucket-mb FLOAT:.*=25\n\s+Scaling: bucket size in MiB")
    check(["nodeprobe-allreduce", "--help"], 0, out=r"-b,--minbytes TEXT:SIZE \(K, M, G, T, KiB..TiB = powers of 1024; "
                                                   r"kB, MB, GB, TB = powers of 1000\)=1M$")
    check(["nodeprobe-io", "prepare", "--help"], 0, out=r"--size TEXT:SIZE .*=110kB$")
    check(["nodeprobe-io", "read", "--help"], 0, out=r"--workers.*=\d+$")
    check(["nodeprobe", "diag", "--help"], 0, out=r"--command-timeout FLOAT:.*=15$")
    check(["nodeprobe", "diag", "--help"], 0, out=r"--read-timeout FLOAT:NUMBER in [^=]*$")  # "(default 30)" in words
    check(["nodeprobe-limits", "--help"], 0, out=r"--timeout FLOAT:.*=0$")

    # --list: what each can run (and, with --expect, the instance types), on stdout.
    check(["nodeprobe", "--list"], 0, out=r"^accept\t.*\n(.*\n)*^diag\t", list_shape=True)
    check(["nodeprobe-io", "--list"], 0, out=r"^prepare\t(.*\n)*^read\t", list_shape=True)
    check(["nodeprobe-gemm", "--list"], 0, out=r"^gemm\t(.*\n)*^p4d\.24xlarge\tinstance type \(--expect\): 8 x A100",
          list_shape=True)
    check(["nodeprobe", "diag", "--list"], 0, out=r"^nvrm\.xid\trule: raises gpu\.xid(.*\n)*^g6\.xlarge\tinstance type",
          list_shape=True)
    check(["nodeprobe", "accept", "--list", "--sysroot", EMPTY_ROOT, "--only", "limits"], 0,
          out=r"^g6\.xlarge\tinstance type \(--expect\): 1 x L4")

    # --expect: one table, one answer. An unknown type is a usage error
    # everywhere, listing the known ones; a known one is accepted everywhere.
    log = os.path.join(TMP, "kern.log")
    with open(log, "w") as f:
        f.write("Dec  1 10:00:00 host kernel: hello\n")
    unknown = r"unknown instance type 'g9\.bogus' \(known: .*g6\.xlarge.*p4d\.24xlarge"
    check(["nodeprobe-gemm", "--expect", "g9.bogus"], 64, err=unknown, one_line_err=True)
    check(["nodeprobe", "accept", "--expect", "g9.bogus", "--only", "limits", "--sysroot", EMPTY_ROOT], 64,
          err=unknown, one_line_err=True)
    check(["nodeprobe", "diag", "--expect", "g9.bogus", "--log", log], 64, err=unknown, one_line_err=True)
    for t in ["g6.xlarge", "p4d.24xlarge", "c5.xlarge"]:
        check(["nodeprobe-gemm", "--expect", t, "-q"], None, not_rc=[2, 64], note="known type")
        check(["nodeprobe", "accept", "--expect", t, "--only", "limits", "--sysroot", EMPTY_ROOT, "-q"], None,
              not_rc=[2, 64], note="known type")
        check(["nodeprobe", "diag", "--expect", t, "--log", log, "-q"], None, not_rc=[2, 64], note="known type")

    # Sizes: one parser; a bad size is a usage error naming the flag.
    ds = os.path.join(TMP, "ds")
    for argv, flag in [
        (["nodeprobe-io", "prepare", "--dir", ds, "--files", "1", "--size", "1Q"], "--size"),
        (["nodeprobe-io", "prepare", "--dir", ds, "--files", "1", "--size", "nan"], "--size"),
        (["nodeprobe-allreduce", "-b", "nan"], "--minbytes"),
        (["nodeprobe-allreduce", "-e", "99999999999999999999999"], "--maxbytes"),
        (["nodeprobe-allreduce", "--grad-bytes", "16X"], "--grad-bytes"),
        (["nodeprobe", "fleet", "--pair-bytes", "3"], "--pair-bytes"),
        (["nodeprobe", "diag", "--max-input-size", "-1"], "--max-input-size"),
    ]:
        check(argv, 64, err=re.escape(flag), one_line_err=True)
    # --size 1M is 1 MiB in nodeprobe-io as in nodeprobe-allreduce (-b 1M: 1048576).
    check(["nodeprobe-io", "prepare", "--dir", ds, "--files", "2", "--size", "1M", "--size-spread", "0", "-q"], 0)
    sample = os.path.join(ds, "samples", "0000", "00000000.bin")
    size = os.path.getsize(sample) if os.path.exists(sample) else None
    if size != 1048576:
        failures.append(f"nodeprobe-io prepare --size 1M: a sample is {size} bytes, want 1048576 (1 MiB, as -b 1M)")

    # Exit codes at --timeout: 124 for every executable (io read with a slow
    # consumer; the allreduce launcher's ranks stop at their deadline).
    check(["nodeprobe-io", "read", "--dir", ds, "--step-ms", "400", "-e", "1000", "-b", "1", "-w", "1",
           "--timeout", "1", "-q"], 124, timeout=30, note="io read --timeout")
    if shutil.which("mpirun") or os.path.exists("/usr/bin/mpirun"):
        check(["nodeprobe-allreduce", "--np", "2", "--backend", "mpi", "-b", "64M", "-e", "64M", "-n", "100000",
               "--timeout", "2", "-q"], 124, timeout=60, note="allreduce --np --timeout")

    # Tables to stdout, progress to stderr: with --json - stdout is JSON only.
    for argv in (["nodeprobe-limits", "--json", "-", "--sysroot", EMPTY_ROOT],
                 ["nodeprobe-gemm", "--json", "-"],
                 ["nodeprobe", "diag", "--log", log, "--json", "-"]):
        rows_r = run(argv)
        try:
            json.loads(rows_r.stdout)
        except ValueError:
            failures.append(f"{' '.join(argv)}: stdout is not only JSON: {rows_r.stdout[:300]!r}")
    r = run(["nodeprobe-limits", "--sysroot", EMPTY_ROOT])
    if "limits" not in r.stdout:
        failures.append("nodeprobe-limits: the text table is not on stdout")

    # Data files: diag's rules.json, like the playbook and the instance table,
    # comes from the data directory (--share-dir / NODEPROBE_SHARE_DIR) first.
    site = os.path.join(TMP, "site")
    shutil.copytree(os.path.join(BUILD, "share", "nodeprobe"), site)
    rules_path = os.path.join(site, "playbook", "rules.json")
    with open(rules_path) as f:
        rules = json.load(f)
    rule = next(r for r in rules["rules"] if r.get("key") == "gpu.no_device")
    rule["patterns"] = [{"re": "NODEPROBE SITE RULE", "src": "docs test: a site's own wording"}]
    rule.pop("lookalikes", None)
    with open(rules_path, "w") as f:
        json.dump(rules, f)
    site_log = os.path.join(TMP, "site.log")
    with open(site_log, "w") as f:
        f.write("Dec  1 10:00:00 host app: NODEPROBE SITE RULE\n")
    check(["nodeprobe", "--share-dir", site, "diag", "--log", site_log], None, out=r"gpu\.not_found",
          note="the site's rules.json is read")
    r = run(["nodeprobe", "diag", "--log", site_log])
    if "gpu.not_found" in r.stdout:
        failures.append("nodeprobe diag without --share-dir used the site's rules")
    with open(rules_path, "w") as f:
        f.write("{}")
    check(["nodeprobe", "--share-dir", site, "diag", "--log", site_log], 2, err=re.escape(rules_path),
          one_line_err=True, note="a broken site rules.json is named")

    shutil.rmtree(TMP, ignore_errors=True)
    for f in failures:
        print("FAIL:", f)
    print(f"{'FAIL' if failures else 'PASS'}: {rows} rows over {len(PROGRAMS)} executables; {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
