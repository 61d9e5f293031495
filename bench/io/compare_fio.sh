#!/usr/bin/env bash
# nodeprobe-io vs fio, side by side on the same files with the same access
# pattern: random whole-record reads of one block size, W threads with one
# read in flight each (fio psync / nodeprobe-io pread), every record once per
# pass. Two cache states: cold with O_DIRECT, warm from the page cache.
# Prints MB/s of each (median of the repeats) and the ratio nodeprobe-io / fio
# (median of the per-repeat ratios).
#
#   bench/io/compare_fio.sh [--build-dir build] [--dir DIR] [--samples 4096]
#                           [--size 128Ki] [--workers 2] [--repeats 5] [--keep]
#                           [--batch 8] [--prefetch 2] [--fio-huge auto|on|off]
#                           [--cold-epochs 2] [--warm-epochs 32]
#
# --fio-huge (auto: when root) adds a third peer, fio with its buffers on
# hugetlb pages (--mem=shmhuge; a few pages are reserved in vm.nr_hugepages
# for the run and given back after), the fair match for nodeprobe-io's
# staging on transparent huge pages.
#
# DIR must be on the storage under test (default: BUILD/io-bench); O_DIRECT
# needs a filesystem that supports it. Sizes are exact (no spread) and shard
# records are 4 KiB aligned, so both tools issue identical requests.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
samples=4096
size=128Ki
workers=2
repeats=5
batch=8
prefetch=2
epochs_cold=2
epochs_warm=32
fio_huge=auto
opts=(--samples samples --size size --workers workers --repeats repeats --batch batch --prefetch prefetch
      --cold-epochs epochs_cold --warm-epochs epochs_warm --fio-huge fio_huge)
source "$here/bench/io/bench_args.sh"
command -v fio >/dev/null || { echo "compare_fio.sh: fio not installed (apt-get install fio / dnf install fio)" >&2; exit 2; }
mkdir -p "$dir"

bytes=$(python3 -c "import sys; u={'':1,'k':1e3,'Ki':1024,'M':1e6,'Mi':1048576}; import re; m=re.fullmatch(r'([0-9.]+)([A-Za-z]*)', sys.argv[1]); print(int(float(m[1])*u[m[2]]))" "$size")
(( bytes % 4096 == 0 )) || { echo "compare_fio.sh: --size must be a multiple of 4096 (O_DIRECT)" >&2; exit 64; }

prep() {  # layout dir extra...
  local d=$1; shift
  "$np" prepare --dir "$d" --files "$samples" --size "$bytes" --size-spread 0 --overwrite -q "$@" >/dev/null
}
echo "# preparing $samples x $bytes B records in $dir (files and 8 shards)" >&2
prep "$dir/files"
prep "$dir/shards" --shards 8 --align 4096
# Writeback of the fresh dataset would otherwise slow whichever tool reads first.
sync

# Each measurement prints "MB/s CPU-us-per-read": the second number does not
# depend on how much CPU the machine's other tenants leave us.
# The raw reader: any idle worker takes the next batch (first-free), with
# PyTorch's default prefetch_factor 2 and batches of --batch records. Each
# in-flight record needs its own staging slot (W x P x B of them; fio reuses
# one buffer per job), and where reads land matters even for O_DIRECT on a
# virtual disk, whose "DMA" is the host copying into guest memory: measured
# here (bench/io/buffer_footprint.sh), reads cycling through 16.5 MiB of
# buffers (B=32) run 0.85x as fast as into one buffer, through 2 MiB 0.95x.
# Staging slots are reused most-recently-freed first, and batches of 8 keep
# the active set near 2 MiB at 128 KiB records (each hand-off to the consumer is amortised over 8 reads).
# fio reads into its default malloc'ed buffers (4 KiB pages): on a virtio or
# NVMe disk an O_DIRECT read into one huge page is one physically contiguous
# segment instead of 32, which is why the cold rows favour us against it;
# the fio-hugepage column removes that advantage.
# Warm runs are 32 passes (~1 s): at 4 passes (0.13 s) thread start-up and
# scheduling noise decided the ratio (0.76x-1.33x between runs).
np_mbs() {  # dir method cache epochs
  "$np" read --dir "$1" --method "$2" "--$3" -e "$4" -w "$workers" -b "$batch" -p "$prefetch" --dispatch first-free --json - -q |
    python3 -c "import json,sys; d=json.load(sys.stdin)['probes'][0]; assert d['status'] in ('pass','warn'), d['reason']; d=d['data']; print('%.1f %.1f' % (d['bytes']/d['elapsed_s']/1e6, d['cpu_s']/d['samples']*1e6))"
}

fio_mbs() {  # layout direct epochs [fio args...] -> MB/s
  local layout=$1 direct=$2 epochs=$3 target
  shift 3
  local per_job=$(( samples * bytes * epochs / workers ))
  if [[ $layout == shards ]]; then
    target=(--filename="$(ls "$dir"/shards/shard-*.rec | paste -sd:)")
  else
    target=(--opendir="$dir/files/samples")
  fi
  fio --name=np-compare "${target[@]}" --rw=randread --bs="$bytes" --ioengine=psync --direct="$direct" \
      --invalidate=0 --numjobs="$workers" --group_reporting --io_size="$per_job" --file_service_type=random \
      "$@" --output-format=json 2>/dev/null |
    python3 -c "import json,sys; t=sys.stdin.read(); j=json.loads(t[t.index('{'):])['jobs'][0]; r=j['read']; cpu=(j['usr_cpu']+j['sys_cpu'])/100*r['runtime']/1e3*$workers; print('%.1f %.1f' % (r['io_bytes']/(r['runtime']/1e3)/1e6, cpu/r['total_ios']*1e6))"
}

# fio with huge-page buffers: reserve pages for its jobs, give them back on exit.
huge_old=""
restore_huge() { [[ -n $huge_old ]] && echo "$huge_old" >/proc/sys/vm/nr_hugepages 2>/dev/null || true; }
trap restore_huge EXIT
case "$fio_huge" in
  auto|on)
    need=$(( workers * 2 + 8 ))
    if [[ $(id -u) == 0 && -w /proc/sys/vm/nr_hugepages ]]; then
      huge_old=$(cat /proc/sys/vm/nr_hugepages)
      echo $(( huge_old + need )) >/proc/sys/vm/nr_hugepages
      free=$(awk '/HugePages_Free/ {print $2}' /proc/meminfo)
      if (( free < need )); then
        restore_huge; huge_old=""
        [[ $fio_huge == on ]] && { echo "compare_fio.sh: could not reserve $need huge pages" >&2; exit 2; }
        fio_huge=off; echo "# fio-huge skipped: could not reserve $need huge pages" >&2
      fi
    else
      [[ $fio_huge == on ]] && { echo "compare_fio.sh: --fio-huge on needs root (vm.nr_hugepages)" >&2; exit 2; }
      fio_huge=off; echo "# fio-huge skipped: needs root to reserve huge pages" >&2
    fi ;;
  off) ;;
  *) echo "compare_fio.sh: --fio-huge auto|on|off" >&2; exit 64 ;;
esac

median() { python3 -c "import statistics,sys; print('%.1f' % statistics.median(float(x) for x in sys.argv[1:]))" "$@"; }
field() { local f=$1; shift; for x in "$@"; do echo "$x" | cut -d' ' -f"$f"; done; }

printf '# nodeprobe-io %s vs %s, %s workers, %s B random reads, batch %s prefetch %s, %s/%s passes cold/warm, %s repeats (median); host %s, %s cores\n' \
  "$("$np" --version | awk '{print $2}')" "$(fio --version)" "$workers" "$bytes" "$batch" "$prefetch" "$epochs_cold" "$epochs_warm" "$repeats" "$(hostname)" "$(nproc)"
hdr_huge=""; [[ $fio_huge != off ]] && hdr_huge=$(printf ' %14s %8s' fio-hugepage ratio)
printf '%-7s %-5s %-14s %12s %12s %8s %18s%s\n' layout cache method nodeprobe-io fio ratio "CPU us/read np|fio" "$hdr_huge"
ratio_of() {  # ours[] theirs[] names: median of the per-repeat ratios
  local -n a=$1 b=$2
  local r=() i
  for ((i = 0; i < repeats; i++)); do r+=("$(python3 -c "print(${a[i]%% *}/${b[i]%% *})")"); done
  python3 -c "import statistics,sys; print('%.2fx' % statistics.median(float(x) for x in sys.argv[1:]))" "${r[@]}"
}
for layout in shards files; do
  for cache in cold warm; do
    ours=(); theirs=(); huge=()
    if [[ $cache == cold ]]; then args=(direct cold $epochs_cold 1); else args=(pread warm $epochs_warm 0); fi
    # --warm reads everything once first, so fio then finds the same pages cached.
    [[ $cache == warm ]] && np_mbs "$dir/$layout" pread warm 1 >/dev/null
    for ((i = 0; i < repeats; i++)); do
      # Rotate who goes first, so drift in the machine's load hits all alike.
      for ((k = 0; k < 3; k++)); do
        case $(( (i + k) % 3 )) in
          0) ours+=("$(np_mbs "$dir/$layout" "${args[0]}" "${args[1]}" "${args[2]}")") ;;
          1) theirs+=("$(fio_mbs "$layout" "${args[3]}" "${args[2]}")") ;;
          2) [[ $fio_huge != off ]] && huge+=("$(fio_mbs "$layout" "${args[3]}" "${args[2]}" --mem=shmhuge)") ;;
        esac
      done
    done
    o=$(median $(field 1 "${ours[@]}")); t=$(median $(field 1 "${theirs[@]}"))
    # A ratio is the median of each repeat's own ratio (the runs of a repeat
    # are adjacent in time, so slow drift in the device cancels out).
    ratio=$(ratio_of ours theirs)
    oc=$(median $(field 2 "${ours[@]}")); tc=$(median $(field 2 "${theirs[@]}"))
    method=$([[ $cache == cold ]] && echo "O_DIRECT/psync" || echo "pread/psync")
    col_huge=""
    if [[ $fio_huge != off ]]; then
      col_huge=$(printf ' %14s %8s' "$(median $(field 1 "${huge[@]}")) MB/s" "$(ratio_of ours huge)")
    fi
    printf '%-7s %-5s %-14s %12s %12s %8s %18s%s\n' "$layout" "$cache" "$method" "$o MB/s" "$t MB/s" \
      "$ratio" "$oc | $tc" "$col_huge"
    echo "#   runs (MB/s): nodeprobe-io $(field 1 "${ours[@]}" | paste -sd' ') | fio $(field 1 "${theirs[@]}" | paste -sd' ')${huge:+ | fio-hugepage $(field 1 "${huge[@]}" | paste -sd' ')}" >&2
  done
done
if [[ $keep == 0 ]]; then
  "$np" clean --dir "$dir/files" -q >/dev/null
  "$np" clean --dir "$dir/shards" -q >/dev/null
fi
