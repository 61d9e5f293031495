#!/usr/bin/env bash
# deb_install_test.sh BUILD SOURCE: pack the DEB from BUILD with CPack, unpack
# it into a fresh root (dpkg -x) and run the installed nodeprobe from a
# directory outside both trees: accept --profile quick, diag --log FILE, the
# data-file override (--share-dir), and nodeprobe-gemm without CUDA
# libraries. With root, it runs in a private mount namespace where SOURCE,
# BUILD and /usr/local/cuda are empty tmpfs mounts, so nothing can be read
# from them.
set -euo pipefail
build=$(realpath "$1"); src=$(realpath "$2")
command -v dpkg-deb >/dev/null || { echo "SKIP: no dpkg-deb"; exit 77; }
cpack_exe=$(dirname "$(command -v cmake)")/cpack
[[ -x $cpack_exe ]] || { echo "SKIP: no cpack"; exit 77; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/nodeprobe-deb-test.XXXXXX")
case "$tmp/" in "$src"/*|"$build"/*) tmp_in_tree=1 ;; *) tmp_in_tree=0 ;; esac
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# Shared libraries only (dpkg-shlibdeps is slow and not what is tested here).
"$cpack_exe" -G DEB --config "$build/CPackConfig.cmake" -B "$tmp/out" -D CPACK_DEBIAN_PACKAGE_SHLIBDEPS=OFF \
  >"$tmp/cpack.log" 2>&1 || { cat "$tmp/cpack.log"; fail "cpack -G DEB"; }
deb=$(ls "$tmp"/out/nodeprobe*.deb)
dpkg-deb -x "$deb" "$tmp/root"
root=$tmp/root

for f in usr/bin/nodeprobe usr/bin/nodeprobe-limits usr/bin/nodeprobe-io usr/bin/nodeprobe-allreduce \
         usr/share/nodeprobe/playbook/playbook.json usr/share/nodeprobe/playbook/xid.json \
         usr/share/nodeprobe/instance_types.json usr/share/nodeprobe/schema/report.schema.json \
         usr/share/man/man1/nodeprobe.1 usr/share/man/man1/nodeprobe-io.1 \
         usr/share/bash-completion/completions/nodeprobe usr/share/doc/nodeprobe/README.md; do
  [[ -e $root/$f ]] || fail "the package lacks /$f"
done
# Nothing in the package points back at the trees it was built from (rpath).
if readelf -d "$root"/usr/bin/nodeprobe* | grep -E "R(UN)?PATH" | grep -qE "$build|$src"; then
  fail "an installed binary's RPATH names the build or source tree"
fi

# A site playbook: the same files with gpu.xid's remedy steps marked.
mkdir -p "$tmp/site"
cp -r "$root/usr/share/nodeprobe/." "$tmp/site/"
python3 - "$tmp/site/playbook/playbook.json" <<'PY'
import json, sys
p = sys.argv[1]
d = json.load(open(p))
for e in d["entries"]:
    if e["id"] == "gpu.xid":
        e["remedy"] = [r + " # SITE PLAYBOOK STEP" for r in e["remedy"]]
json.dump(d, open(p, "w"), indent=1)
PY
printf '%s\n' "Dec  1 10:00:00 node kernel: NVRM: Xid (PCI:0000:10:1c): 79, pid=1234, name=python, GPU has fallen off the bus." \
  > "$tmp/kern.log"
mkdir -p "$tmp/sysroot" "$tmp/work"

# This test is about the installed package, not accept's budget: 60 s, so a
# probe is not cut short while the test tier runs beside it (once io ran past
# its 16 s deadline beside the browser tests). A sanitizer build runs several
# times slower (scripts/test.sh --sanitize sets the factor): stretched alike.
factor=${NODEPROBE_TEST_TIME_FACTOR:-1}
budget="--budget $(awk -v f="$factor" 'BEGIN { print 60 * f }')"

cat > "$tmp/inner.sh" <<INNER
set -uo pipefail
cd "$tmp/work"
export PATH=/usr/bin:/bin LD_LIBRARY_PATH= NODEPROBE_NO_IMDS=1
unset NODEPROBE_SHARE_DIR NODEPROBE_PROBE_DIR NODEPROBE_CUDA_LIBRARY_PATH NODEPROBE_NVML_LIBRARY
np=$root/usr/bin/nodeprobe
rc=0; "\$np" accept --profile quick $budget --sysroot "$tmp/sysroot" --data-dir "$tmp/work" --json "$tmp/accept.json" \
  >"$tmp/accept.out" 2>&1 || rc=\$?
echo "\$rc" > "$tmp/accept.rc"
rc=0; "\$np" diag --log "$tmp/kern.log" --json "$tmp/diag.json" >"$tmp/diag.out" 2>&1 || rc=\$?
echo "\$rc" > "$tmp/diag.rc"
"\$np" --share-dir "$tmp/site" diag --log "$tmp/kern.log" >"$tmp/site.out" 2>&1
rc=0; "$root/usr/bin/nodeprobe-gemm" --json "$tmp/gemm.json" >"$tmp/gemm.out" 2>&1 || rc=\$?
echo "\$rc" > "$tmp/gemm.rc"
INNER
if [[ $tmp_in_tree == 1 ]]; then
  echo "note: TMPDIR is inside the trees: they are not hidden, only left"
  bash "$tmp/inner.sh"
elif [[ $(id -u) -eq 0 ]] && unshare -m true 2>/dev/null; then
  # The build tree first: it may sit inside the source tree.
  hide="mount -t tmpfs -o ro nodeprobe-hidden '$build' && mount -t tmpfs -o ro nodeprobe-hidden '$src'"
  [[ -d /usr/local/cuda ]] && hide+=" && mount -t tmpfs -o ro nodeprobe-hidden \$(realpath /usr/local/cuda)"
  unshare -m --propagation private bash -c "$hide && bash '$tmp/inner.sh'" || fail "hiding the trees"
  echo "ran with $src, $build and /usr/local/cuda hidden (private mount namespace)"
else
  echo "note: no mount namespace (not root): the trees are not hidden, only left"
  bash "$tmp/inner.sh"
fi

show() { echo "--- $1"; cat "$tmp/$1"; }
# accept: a verdict (0 pass/warn, 1 fail), never an error, and a report with
# every planned probe.
read -r rc < "$tmp/accept.rc"
[[ $rc == 0 || $rc == 1 ]] || { show accept.out; fail "accept --profile quick exited $rc"; }
python3 - "$tmp/accept.json" <<'PY' || { show accept.out; fail "accept's report"; }
import json, sys
r = json.load(open(sys.argv[1]))
names = [p["name"] for p in r["probes"]]
assert r["schema"].startswith("nodeprobe.report/"), r["schema"]
for want in ("limits", "io"):
    assert any(n.startswith(want) for n in names), (want, names)
for p in r["probes"]:
    assert p["status"] != "error" or "not available" not in p.get("reason", ""), p
print("accept:", r["verdict"], ", ".join(f'{p["name"]}={p["status"]}' for p in r["probes"]))
PY
# diag: the Xid from the installed playbook, and the site playbook when asked.
read -r rc < "$tmp/diag.rc"
[[ $rc == 1 ]] || { show diag.out; fail "diag --log with Xid 79 exited $rc (want 1)"; }
python3 - "$tmp/diag.json" <<'PY' || { show diag.out; fail "diag's report"; }
import json, sys
r = json.load(open(sys.argv[1]))
ids = [f["id"] for f in r["findings"]]
assert "gpu.xid" in ids, ids
assert "SITE PLAYBOOK" not in json.dumps(r["findings"])
print("diag:", r["verdict"], ids)
PY
grep -q "SITE PLAYBOOK STEP" "$tmp/site.out" || { show site.out; fail "--share-dir did not replace the playbook"; }
# gemm without CUDA libraries: a skip that says why, never a loader error.
read -r rc < "$tmp/gemm.rc"
grep -qiE "error while loading shared libraries|cannot open shared object" "$tmp/gemm.out" && { show gemm.out; fail "loader error"; }
[[ $rc == 77 ]] || { show gemm.out; fail "nodeprobe-gemm without CUDA exited $rc (want 77, skip)"; }
python3 - "$tmp/gemm.json" <<'PY' || { show gemm.out; fail "gemm's report"; }
import json, sys
r = json.load(open(sys.argv[1]))
p = r["probes"][0]
assert p["status"] == "skip" and p["reason"], p
print("gemm:", p["status"], "-", p["reason"])
PY
echo "PASS: $(basename "$deb") installed with dpkg -x and run outside the trees"
