# Sourced by the bench/io scripts that run a real PyTorch DataLoader as a peer:
# sets $venv to a virtual environment with torch ($NODEPROBE_BENCH_VENV, else
# .venv-bench in the repository), creating it with `pip install torch` when
# torch is missing. A benchmark peer only, never a nodeprobe dependency.
# Needs $here (the repository root).
venv=${NODEPROBE_BENCH_VENV:-$here/.venv-bench}
if ! "$venv/bin/python" -c "import torch" 2>/dev/null; then
  echo "# installing torch into $venv (benchmark peer only)" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q torch
fi
