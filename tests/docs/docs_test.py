#!/usr/bin/env python3
"""docs_test.py SOURCE BUILD: README.md and docs/*.md cannot go stale.

Every fenced block of those files is checked; a marker (an HTML comment on
the line just above the fence) says how:

  <!-- docs-test: run [setup=NAME] [timeout=S] -->
      the block is a session: each `$ COMMAND` line (continued with a
      trailing backslash) is run against the built programs, in a fresh
      directory holding tests/docs/setups/NAME/* and links to the source
      tree's tests/, scripts/, bench/, diag/ and the build tree (as build/
      and build-test/), run by bash; the lines after it (up to the next `$`)
      are the output the docs show. Checked: the exit code (`$ echo $?`
      and the number after it) and the shape of the output: the words of
      the sample (not numbers, not timings) must be in what the command
      printed. `...` in a sample stands for elided lines.
  <!-- docs-test: flags REASON -->    (and every block without a marker)
      each command line (a `$` line, or a line starting with a program:
      nodeprobe, nodeprobe-*, mpirun/srun ... nodeprobe-*, scripts/*.sh)
      is checked without running it: every flag it uses must be one the
      program lists in its --help (scripts: one the script's source
      handles), so a renamed or removed flag fails here. REASON says why
      it is not run (GPU, EFA, real hosts, root). hidden=--a,--b names
      test-only flags the block shows that --help does not list.
  <!-- docs-test: skip REASON -->
      not a command block (output only, JSON, code).

Prints one line per problem and a summary; exit 1 on any problem.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile

SOURCE = os.path.realpath(sys.argv[1])
BUILD = os.path.realpath(sys.argv[2])
BIN = os.path.join(BUILD, "bin")
PROGRAMS = ["nodeprobe", "nodeprobe-limits", "nodeprobe-io", "nodeprobe-allreduce", "nodeprobe-gemm"]
MARK = re.compile(r"<!--\s*docs-test:\s*(\w+)\s*(.*?)\s*-->")
FENCE = re.compile(r"^```(\w*)\s*$")
FLAG = re.compile(r"(?<![\w./-])(--?[A-Za-z][A-Za-z0-9_-]*)")
problems = []
counts = {"run": 0, "flags": 0, "skip": 0, "commands_run": 0, "commands_checked": 0}


def problem(where, text):
    problems.append(f"{where}: {text}")


# ---- the programs' flags, as their --help lists them -----------------------------------
_help_cache = {}


def help_text(prog, sub=None):
    key = (prog, sub)
    if key not in _help_cache:
        argv = [os.path.join(BIN, prog)] + ([sub] if sub else []) + ["--help"]
        r = subprocess.run(argv, capture_output=True, text=True, timeout=30)
        _help_cache[key] = r.stdout if r.returncode == 0 else None
    return _help_cache[key]


def subcommands(prog):
    text = help_text(prog) or ""
    part = text.split("SUBCOMMANDS:")[-1] if "SUBCOMMANDS:" in text else text.split("Subcommands:")[-1]
    if part is text:
        return []
    return re.findall(r"^\s{2}([a-z][a-z0-9-]*)\s", part, re.M)


def flags_in_help(prog, sub):
    flags = set()
    for text in (help_text(prog), help_text(prog, sub) if sub else None):
        if text:
            flags.update(FLAG.findall(text))
    return flags


# ---- command lines -----------------------------------------------------------------------
def strip_comment(line):
    out, quote = [], None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            break
        out.append(c)
    return "".join(out).rstrip()


def program_of(tokens):
    """(index, program) of the first nodeprobe program in tokens, else (None, None)."""
    for i, t in enumerate(tokens):
        base = os.path.basename(t)
        if base in PROGRAMS:
            return i, base
    return None, None


def check_flags(cmd, where, hidden=()):
    text = strip_comment(cmd)
    # Placeholders the docs use inside brackets: [--size 110k] -> --size 110k
    tokens = re.split(r"[\s\[\]|]+", text)
    tokens = [t for t in tokens if t]
    while tokens and (re.match(r"^[A-Z_][A-Z0-9_]*=", tokens[0]) or tokens[0] == "sudo"):
        tokens = tokens[1:]  # VAR=value prefixes, sudo
    if not tokens:
        return
    if tokens[0].endswith(".sh") and not tokens[0].startswith("/"):
        path = os.path.join(SOURCE, tokens[0].split()[0])
        if not os.path.isfile(path):
            problem(where, f"{tokens[0]}: no such script")
            return
        src = open(path, encoding="utf-8", errors="replace").read()
        for t in tokens[1:]:
            if t == "exec":  # netns-cluster.sh exec N COMMAND...: the rest is the command's
                break
            m = FLAG.match(t)
            if m and m.group(1).startswith("--") and m.group(1) not in src:
                problem(where, f"{tokens[0]}: flag {m.group(1)} is not handled by the script")
        counts["commands_checked"] += 1
        return
    i, prog = program_of(tokens)
    if prog is None:
        return
    if not os.access(os.path.join(BIN, prog), os.X_OK):
        problem(where, f"{prog} was not built")
        return
    rest = tokens[i + 1:]
    sub = None
    subs = subcommands(prog)
    # "nodeprobe --share-dir D diag ..." : the first bare word that is a subcommand
    for t in rest:
        if t in subs:
            sub = t
            break
    known = flags_in_help(prog, sub)
    if help_text(prog, sub) is None:
        problem(where, f"{prog} {sub or ''}: --help failed")
        return
    for t in rest:
        if t.startswith("$(") or t.startswith("`"):
            continue
        m = FLAG.match(t)
        if not m or re.match(r"^-\d", t):
            continue
        flag = m.group(1)
        if flag not in known and flag not in hidden:
            problem(where, f"{prog}{' ' + sub if sub else ''}: flag {flag} is not in its --help")
    counts["commands_checked"] += 1


def block_commands(lines):
    """Command lines of a block: `$ ...` lines (joined over trailing backslashes) or,
    in a block without any `$`, lines starting with a program or a script."""
    has_prompt = any(l.startswith("$ ") for l in lines)
    out, i = [], 0
    while i < len(lines):
        l = lines[i]
        if has_prompt and not l.startswith("$ "):
            i += 1
            continue
        cmd = l[2:] if has_prompt else l
        while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
            i += 1
            cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
        if has_prompt or re.match(r"^\s*(sudo\s+)?(nodeprobe|mpirun|srun|scripts/|bench/\S*\.sh)", cmd):
            out.append((i, cmd))
        i += 1
    return out


# ---- running a session ------------------------------------------------------------------
WORD = re.compile(r"[A-Za-z_][A-Za-z_'.-]*[A-Za-z_]|[A-Za-z]")


def words(text):
    return {w.lower() for w in WORD.findall(text) if len(w) >= 3 and not re.search(r"\d", w)}


ERROR_LINE = re.compile(r"^\S*nodeprobe[\w-]*( [a-z]+)?: ")


def strict_words(sample_lines):
    """Words a sample must show exactly: identifiers (metric, check and finding
    ids, flags: words with '.' or '_') and every word of a one-line error
    message ("nodeprobe diag: ..."), the contract of bad input."""
    out = set()
    for l in sample_lines:
        ws = words(l)
        if ERROR_LINE.match(l.strip()):
            out |= ws
        else:
            out |= {w for w in ws if "." in w.strip(".") or "_" in w}
    return out


def run_session(lines, opts, where):
    setup = opts.get("setup")
    timeout = float(opts.get("timeout", 20))
    tmp = tempfile.mkdtemp(prefix="nodeprobe-docs-")
    try:
        if setup:
            src = os.path.join(SOURCE, "tests", "docs", "setups", setup)
            for name in os.listdir(src):
                shutil.copy(os.path.join(src, name), tmp)
        for link in ("tests", "scripts", "bench", "diag", "cmake"):
            os.symlink(os.path.join(SOURCE, link), os.path.join(tmp, link))
        for link in ("build", "build-test"):  # `build/bin/nodeprobe ...` as the docs write it
            os.symlink(BUILD, os.path.join(tmp, link))
        env = dict(os.environ)
        env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
        env["NODEPROBE_NO_IMDS"] = "1"
        env.pop("NO_COLOR", None)
        # Sessions: (command, sample lines, expected exit or None)
        sessions = []
        i = 0
        while i < len(lines):
            l = lines[i]
            if not l.startswith("$ "):
                i += 1
                continue
            cmd = l[2:]
            while cmd.rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd = cmd.rstrip()[:-1] + " " + lines[i].strip()
            i += 1
            sample = []
            while i < len(lines) and not lines[i].startswith("$ "):
                sample.append(lines[i])
                i += 1
            if strip_comment(cmd).strip() == "echo $?":
                if sessions and sample and sample[0].strip().isdigit():
                    sessions[-1][2] = int(sample[0].strip())
                continue
            # "verdict: fail    # exit 1": the exit code written beside the output
            want = None
            for k, l in enumerate(sample):
                m = re.search(r"\s#\s*exit (\d+)\s*$", l)
                if m:
                    want = int(m.group(1))
                    sample[k] = l[:m.start()]
            sessions.append([cmd, sample, want])
        for cmd, sample, want_rc in sessions:
            counts["commands_run"] += 1
            try:
                # bash: the docs' sessions use pipes, `;` and VAR=value prefixes.
                r = subprocess.run(["bash", "-c", strip_comment(cmd)], cwd=tmp, env=env, capture_output=True, text=True, timeout=timeout,
                                   stdin=subprocess.DEVNULL)
            except subprocess.TimeoutExpired:
                problem(where, f"`{cmd}` ran past {timeout:.0f} s")
                continue
            except OSError as e:
                problem(where, f"`{cmd}`: {e}")
                continue
            got = r.stdout + r.stderr
            if want_rc is not None and r.returncode != want_rc:
                problem(where, f"`{cmd}` exited {r.returncode}, the docs say {want_rc}\n{got[-2000:]}")
            elif want_rc is None and (r.returncode in (64, 126, 127) or r.returncode < 0):
                problem(where, f"`{cmd}` exited {r.returncode}\n{got[-2000:]}")
            kept = [l for l in sample if l.strip() != "..."]
            got_words = words(got)
            want = words("\n".join(kept))
            missing = sorted(want - got_words)
            strict_missing = sorted(strict_words(kept) - got_words)
            # A sample is the shape: its identifiers and error messages must be
            # printed as shown; of its other words (labels, column names,
            # prose) nearly all; values (numbers, timings) may differ.
            if strict_missing:
                problem(where, f"`{cmd}`: the output lacks what the docs show: {', '.join(strict_missing[:25])}"
                               f"\n--- printed:\n{got[-3000:]}")
            elif want and len(missing) > max(2, len(want) // 10):
                problem(where, f"`{cmd}`: the output no longer has the shape shown; missing words: "
                               f"{', '.join(missing[:25])}\n--- printed:\n{got[-3000:]}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


# ---- the documents --------------------------------------------------------------------------
def check_file(rel):
    path = os.path.join(SOURCE, rel)
    lines = open(path, encoding="utf-8").read().split("\n")
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        j = i + 1
        while j < len(lines) and not lines[j].startswith("```"):
            j += 1
        body = lines[start + 1:j]
        i = j + 1
        mark = MARK.search(lines[start - 1]) if start > 0 else None
        mode = mark.group(1) if mark else "flags"
        opts = dict(kv.split("=", 1) for kv in (mark.group(2).split() if mark else []) if "=" in kv)
        where = f"{rel}:{start + 1}"
        if m.group(1) in ("json", "cpp", "yaml", "roff") and mode != "run":
            mode = "skip"
        if mode not in ("run", "flags", "skip"):
            problem(where, f"unknown docs-test mode '{mode}'")
            continue
        counts[mode] += 1
        if mode == "skip":
            continue
        for k, cmd in block_commands(body):
            check_flags(cmd, f"{rel}:{start + 2 + k}", opts.get("hidden", "").split(","))
        if mode == "run":
            run_session(body, opts, where)


def main():
    files = ["README.md"] + sorted("docs/" + f for f in os.listdir(os.path.join(SOURCE, "docs")) if f.endswith(".md"))
    for rel in files:
        check_file(rel)
    for p in problems:
        print("FAIL:", p)
    print(f"{'FAIL' if problems else 'PASS'}: {len(files)} documents, {counts['run']} blocks run "
          f"({counts['commands_run']} commands), {counts['flags']} blocks flag-checked, {counts['skip']} skipped, "
          f"{counts['commands_checked']} command lines checked against --help; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
