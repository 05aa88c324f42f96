#!/usr/bin/env bash
# Installs the Debian packages edgeattn builds with, if any is missing. Idempotent and quiet
# when everything is present; needs apt-get (Debian 12, Ubuntu 24.04 or later).
#   tools/install_deps.sh          native build and tests
#   tools/install_deps.sh --arm    also the aarch64 cross compilers (g++, clang-19 + lld),
#                                  qemu-user, arm64 libraries and the LLVM tools of
#                                  tools/arm_model.py
#   tools/install_deps.sh --plots  also Python's matplotlib, for tools/plot_bench.py
set -euo pipefail

packages=(cmake g++ make pkg-config libhwy-dev libtbb-dev libgtest-dev libgmock-dev
          libbenchmark-dev nlohmann-json3-dev libcli11-dev clang libclang-rt-14-dev valgrind)
arm=0
for option in "$@"; do
  case "$option" in
    --arm)
      arm=1
      packages+=(g++-aarch64-linux-gnu qemu-user libhwy-dev:arm64 libtbb-dev:arm64
                 libgtest-dev:arm64 libgmock-dev:arm64)
      packages+=(clang-19 lld-19)  # tools/test_arm.sh --clang
      packages+=(python3 llvm-14 llvm-19) ;;  # tools/arm_model.py: llvm-mca, llvm-objdump
    --plots) packages+=(python3-matplotlib) ;;
    *) echo "install_deps.sh: unknown option '$option' (expected --arm or --plots)" >&2; exit 1 ;;
  esac
done

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if ! command -v apt-get >/dev/null 2>&1; then
  echo "install_deps.sh: apt-get not found. Install these packages (or their equivalents)" \
       "with your system's package manager: ${missing[*]}" >&2
  exit 1
fi
sudo=()
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || {
    echo "install_deps.sh: not root and no sudo; as root run: apt-get install ${missing[*]}" >&2
    exit 1
  }
  sudo=(sudo)
fi
echo "install_deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
if [ $arm -eq 1 ] && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  "${sudo[@]}" dpkg --add-architecture arm64
fi
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 update -qq
"${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
