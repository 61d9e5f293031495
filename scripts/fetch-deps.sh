#!/usr/bin/env bash
# fetch-deps.sh: on a connected machine, download what an air-gapped node
# needs to build nodeprobe: the pinned library sources of
# cmake/pinned-deps.txt (checked against their SHA-256) and the CMake wheel
# for nodes whose CMake is too old. Copy DIR to the node, then
#
#   scripts/setup.sh --deps DIR      (builds with DIR's sources; downloads nothing)
#
#   scripts/fetch-deps.sh DIR [--arch x86_64|aarch64]... [--no-cmake] [--mirror URL]
#
# --arch: the nodes' architectures for the CMake wheel (default: both);
# --no-cmake: no wheel (the nodes have CMake >= 3.20); --mirror URL: fetch
# FILE from URL/FILE instead of the upstream URL (an internal mirror).
# Files already in DIR with the right checksum are kept. Exit 0 when DIR is
# complete, 2 when something could not be fetched or did not match.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
pins=${NODEPROBE_PINNED_DEPS:-$here/cmake/pinned-deps.txt}
dir=""
arches=()
cmake_wheel=1
mirror=""
usage() { sed -n '2,15p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --arch) arches+=("${2:?--arch needs x86_64 or aarch64}"); shift ;;
    --no-cmake) cmake_wheel=0 ;;
    --mirror) mirror=${2:?--mirror needs a URL}; shift ;;
    -h|--help) usage; exit 0 ;;
    -*) echo "fetch-deps.sh: unknown option $1 (see --help)" >&2; exit 64 ;;
    *) [[ -z $dir ]] || { echo "fetch-deps.sh: one DIR only" >&2; exit 64; }; dir=$1 ;;
  esac
  shift
done
[[ -n $dir ]] || { usage >&2; exit 64; }
[[ ${#arches[@]} -gt 0 ]] || arches=(x86_64 aarch64)
mkdir -p "$dir"
fail=0

download() {  # URL OUT
  if command -v curl >/dev/null 2>&1; then curl -fsSL --retry 3 -o "$2" "$1"
  elif command -v wget >/dev/null 2>&1; then wget -q -O "$2" "$1"
  else echo "fetch-deps.sh: needs curl or wget" >&2; return 1
  fi
}

while read -r name version file sha url; do
  [[ -z $name || $name == \#* || $url == pypi ]] && continue
  out=$dir/$file
  if [[ -f $out ]] && echo "$sha  $out" | sha256sum -c --status; then
    echo "ok       $name $version ($file, already there)"; continue
  fi
  src=$url
  [[ -n $mirror ]] && src=${mirror%/}/$file
  if ! download "$src" "$out.part"; then
    echo "FAILED   $name $version: cannot download $src" >&2; rm -f "$out.part"; fail=1; continue
  fi
  if ! echo "$sha  $out.part" | sha256sum -c --status; then
    echo "FAILED   $name $version: $src does not have the pinned SHA-256 $sha" >&2; rm -f "$out.part"; fail=1; continue
  fi
  mv "$out.part" "$out"
  echo "fetched  $name $version ($file)"
done < "$pins"

if [[ $cmake_wheel == 1 ]]; then
  spec=cmake$(awk '$1 == "cmake" {print $2}' "$pins")
  mkdir -p "$dir/wheels"
  for a in "${arches[@]}"; do
    # manylinux2014 (glibc 2.17) wheels install on every supported system;
    # pip picks the newest that fits the pinned range.
    if python3 -m pip download -q --no-deps --only-binary=:all: --platform "manylinux2014_$a" \
         --python-version 3.6 --implementation py --abi none -d "$dir/wheels" "$spec"; then
      wheels=("$dir"/wheels/*"$a"*.whl)
      echo "fetched  $spec wheel for $a (${wheels[*]##*/})"
    else
      echo "FAILED   $spec wheel for $a (pip download)" >&2; fail=1
    fi
  done
fi

if [[ $fail != 0 ]]; then echo "fetch-deps.sh: $dir is incomplete (see above)" >&2; exit 2; fi
echo "fetch-deps.sh: $dir is complete; on the node: scripts/setup.sh --deps $dir"
