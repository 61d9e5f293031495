#!/usr/bin/env bash
# compare's false-alarm rate and its power, measured on this machine.
#
# 1. A/A: runs `nodeprobe accept` PAIRS+1 times in a row, nothing changed,
#    and compares each run with the next (PAIRS A/A pairs). A pair passes when
#    `nodeprobe compare` exits 0 (no metric worse). Prints each pair's exit,
#    verdict counts, the worse metrics if any and the 1-minute load average,
#    then "A/A: K of PAIRS pairs exit 0".
# 2. A real setting change: `nodeprobe-io read -w 2 -p 2` vs `-w 1 -p 1` on
#    one dataset (1 ms consumer step). Expected: exit 1, the settings named as
#    the cause.
# 3. A throttled node: the same `-w 2 -p 2` read again inside a CPU cgroup
#    limited to PCT % of one CPU in periods of MS milliseconds (root and a
#    cgroup cpu controller needed; skipped with the reason otherwise), once
#    per --throttle (default: 10/10, a fine quota, and 5/100, a coarse one:
#    the default CFS period of Docker and Kubernetes CPU limits, each period
#    starting at full speed). Same settings, slower node. Expected: exit 1,
#    no settings difference.
# Peer: the A/A pair itself (the same command run twice is the baseline any
# alarm is measured against); the ratio printed is pairs exit 0 / pairs.
#
#   bench/compare/aa_compare.sh [--build-dir DIR] [--pairs N] [--profile quick|full]
#                               [--throttle PCT[/MS]]... [--epochs N] [--keep DIR]
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build="$here/build"; pairs=3; profile=quick; throttles=(); epochs=3; keep=""
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-dir) build=$2; shift ;;
    --pairs) pairs=$2; shift ;;
    --profile) profile=$2; shift ;;
    --throttle) throttles+=("$2"); shift ;;
    --epochs) epochs=$2; shift ;;
    --keep) keep=$2; shift ;;
    -h|--help) sed -n '2,/^set -uo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "aa_compare.sh: unknown option $1" >&2; exit 64 ;;
  esac
  shift
done
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "aa_compare.sh: --pairs wants a positive integer" >&2; exit 64; }
[[ ${#throttles[@]} -gt 0 ]] || throttles=(10/10 5/100)
for t in "${throttles[@]}"; do
  [[ $t =~ ^[1-9][0-9]?(/[1-9][0-9]{0,2})?$ ]] ||
    { echo "aa_compare.sh: --throttle wants PCT[/MS]: 1..99 % of one CPU in periods of 1..999 ms (default 10)" >&2; exit 64; }
done
[[ $epochs =~ ^[1-9][0-9]?$ ]] || { echo "aa_compare.sh: --epochs wants 1..99" >&2; exit 64; }
np="$build/bin/nodeprobe"; npio="$build/bin/nodeprobe-io"
for b in "$np" "$npio"; do [[ -x $b ]] || { echo "aa_compare.sh: $b not built" >&2; exit 2; }; done

if [[ -n $keep ]]; then work=$keep; mkdir -p "$work" || exit 2; else work=$(mktemp -d); fi
cg=""
cleanup() {
  [[ -n $cg && -d $cg ]] && rmdir "$cg" 2>/dev/null
  [[ -d $work/ds ]] && "$npio" clean --dir "$work/ds" --quiet >/dev/null 2>&1
  [[ -z $keep ]] && rm -rf "$work"
}
trap cleanup EXIT

load1() { cut -d' ' -f1 /proc/loadavg; }

# One compare: prints "exit E: W worse, A ambiguous, S same, B better" plus
# the worse metrics and the causes line; returns compare's exit code.
judge() {  # before after name
  "$np" compare "$1" "$2" --format json --out "$work/$3.cmp.json" >/dev/null 2>"$work/$3.err"
  local rc=$?
  if [[ $rc -gt 1 ]]; then echo "  compare exit $rc: $(head -1 "$work/$3.err")"; return $rc; fi
  python3 - "$work/$3.cmp.json" "$rc" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
s = c["summary"]
print(f"  exit {sys.argv[2]}: {s['worse']} worse, {s['ambiguous']} ambiguous, {s['same']} same, {s['better']} better")
for m in c["metrics"]:
    if m["verdict"] == "worse":
        labels = "".join("{" + ",".join(f"{k}={v}" for k, v in m["labels"].items()) + "}" for _ in [0] if m.get("labels"))
        d = m.get("delta_pct")  # null when infinite (before was 0)
        print(f"    worse: {m['probe']}/{m['name']}{labels} {float('nan') if d is None else d:+.1f} %")
for cause in c.get("causes", []):
    for line in cause.get("text", []):
        print(f"    cause: {line}")
for e in c.get("environment", []):
    print(f"    differs: {e['section']} {e['key']}: {e.get('before', '-')} -> {e.get('after', '-')}")
PY
  return $rc
}

echo "== A/A: nodeprobe accept --profile $profile, $((pairs + 1)) runs, each compared with the next"
echo "   ($(nproc) CPUs; load average before: $(load1))"
for ((i = 0; i <= pairs; i++)); do
  t0=$(date +%s.%N)
  "$np" accept --profile "$profile" --quiet --no-imds --data-dir "$work" --json "$work/accept$i.json" >/dev/null 2>"$work/accept$i.err"
  rc=$?
  printf 'run %d: exit %d, %.1f s, load %s\n' "$i" "$rc" "$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {print b - a}')" "$(load1)"
  [[ -s $work/accept$i.json ]] || { echo "aa_compare.sh: accept wrote no report: $(head -1 "$work/accept$i.err")" >&2; exit 2; }
done
ok=0
for ((i = 0; i < pairs; i++)); do
  echo "pair $i-$((i + 1)):"
  judge "$work/accept$i.json" "$work/accept$((i + 1)).json" "aa$i" && ok=$((ok + 1))
done
printf 'A/A: %d of %d pairs exit 0 (ratio %.2f)\n' "$ok" "$pairs" "$(awk -v a="$ok" -v b="$pairs" 'BEGIN {print a / b}')"

echo "== A real setting change: nodeprobe-io read -w 2 -p 2 vs -w 1 -p 1 (1500 x 110 kB, --step-ms 1, $epochs epochs)"
"$npio" prepare --dir "$work/ds" --files 1500 --size 110kB --quiet --json "$work/prepare.json" >/dev/null || exit 2
read_with() {  # workers prefetch output [prefix command...]
  local w=$1 p=$2 out=$3; shift 3
  "$@" "$npio" read --dir "$work/ds" -w "$w" -p "$p" --step-ms 1 --epochs "$epochs" --quiet --json "$out" >/dev/null
}
read_with 2 2 "$work/w2p2.json"
read_with 1 1 "$work/w1p1.json"
judge "$work/w2p2.json" "$work/w1p1.json" change
echo "   (expected exit 1 with the settings named as the cause)"

in_cgroup() {  # run "$@" inside $cg
  (echo "$BASHPID" >"$cg/cgroup.procs" && exec "$@")
}
# Makes $cg: PCT % of one CPU in periods of MS ms; empty with the reason printed when it cannot.
make_cgroup() {  # pct period_ms name
  local quota=$(($1 * $2 * 10)) period=$(($2 * 1000))
  cg=""
  if [[ $(id -u) -ne 0 ]]; then
    echo "  skipped: a CPU cgroup needs root"
  elif [[ -w /sys/fs/cgroup/cpu && -e /sys/fs/cgroup/cpu/cpu.cfs_quota_us ]]; then
    cg=/sys/fs/cgroup/cpu/nodeprobe-aa-$$-$3
    mkdir "$cg" && echo "$period" >"$cg/cpu.cfs_period_us" && echo "$quota" >"$cg/cpu.cfs_quota_us" ||
      { echo "  skipped: the kernel refused quota $quota us in $period us"; rmdir "$cg"; cg=""; }
  elif [[ -e /sys/fs/cgroup/cgroup.controllers ]] && grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
    grep -qw cpu /sys/fs/cgroup/cgroup.subtree_control || echo +cpu >/sys/fs/cgroup/cgroup.subtree_control
    cg=/sys/fs/cgroup/nodeprobe-aa-$$-$3
    mkdir "$cg" && echo "$quota $period" >"$cg/cpu.max" ||
      { echo "  skipped: the kernel refused cpu.max $quota $period"; rmdir "$cg"; cg=""; }
  else
    echo "  skipped: no writable cgroup cpu controller"
  fi
}
for t in "${throttles[@]}"; do
  pct=${t%%/*}; ms=10; [[ $t == */* ]] && ms=${t#*/}
  name="throttled-$pct-$ms"
  echo "== A throttled node: the same -w 2 -p 2 read, after run limited to $pct % of one CPU in $ms ms periods"
  make_cgroup "$pct" "$ms" "$pct-$ms"
  [[ -n $cg ]] || continue
  read_with 2 2 "$work/w2p2-again-$name.json"
  read_with 2 2 "$work/w2p2-$name.json" in_cgroup
  rmdir "$cg" 2>/dev/null; cg=""
  echo " unthrottled A/A:"
  judge "$work/w2p2.json" "$work/w2p2-again-$name.json" "io-aa-$name"
  echo " throttled:"
  judge "$work/w2p2.json" "$work/w2p2-$name.json" "$name"
  echo "   (expected exit 1 and no settings difference)"
done
exit 0
