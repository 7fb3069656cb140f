#!/usr/bin/env bash
# Installs the Debian 12 packages cubesim builds and tests with (DESIGN.md, "Dependencies").
# Idempotent and non-interactive: asks dpkg first and calls apt only for what is missing,
# so a second run costs well under a second.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libboost-context-dev      # fibers
  nlohmann-json3-dev        # specs, reports, traces
  libspdlog-dev libfmt-dev  # logging
  libcli11-dev              # the cubesim CLI
  libgtest-dev libgmock-dev # tests
  libbenchmark-dev          # micro-benchmarks
  libeigen3-dev             # tile math, half / bfloat16
  libopenblas-dev           # CPU GEMM backend
  libdnnl-dev ocl-icd-opencl-dev  # CPU GEMM backend (oneDNN needs the OpenCL loader to configure)
  libopenmpi-dev openmpi-bin      # distributed sweeps
  python3 python3-matplotlib      # sweep plots
  clang-format                    # the formatting check in CI (tools/check-format.sh)
  universal-ctags                 # function lengths in the layout check (tools/check_layout.py)
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed$'; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
    echo "install-deps: missing packages (${missing[*]}) and not root; run as root or install them" >&2
    exit 1
  fi
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
