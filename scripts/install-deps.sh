#!/usr/bin/env bash
# Installs the Debian packages flightrec needs, only those that are missing.
# Usage: scripts/install-deps.sh [--fuzz] [--aarch64]
#   --fuzz     adds clang + libFuzzer
#   --aarch64  adds the aarch64 cross build (docs/packaging.md "aarch64"):
#              Debian's cross compiler, qemu-user, and the arm64 multiarch
#              packages of the libraries the build links (dpkg architecture
#              arm64 is added for them); header-only packages are shared
set -euo pipefail

pkgs=(g++ cmake ninja-build pkg-config binutils libzstd-dev zstd nlohmann-json3-dev
      libcli11-dev libgtest-dev libgmock-dev googletest libbenchmark-dev python3
      libcpp-httplib-dev libssl-dev libcrypt-dev openssl curl jq prometheus chromium)
aarch64=0
for arg in "$@"; do
  case "$arg" in
    --fuzz) pkgs+=(clang libclang-rt-dev clang-format clang-tidy) ;;
    --aarch64)
      aarch64=1
      # libc6 and libstdc++6 of arm64: the loader and the C++ runtime where
      # qemu finds them without -L (cmake/toolchain-aarch64-linux-gnu.cmake)
      pkgs+=(g++-aarch64-linux-gnu qemu-user-static ccache libc6:arm64 libstdc++6:arm64
             libzstd-dev:arm64 libgtest-dev:arm64 libgmock-dev:arm64 libbenchmark-dev:arm64
             libcpp-httplib-dev:arm64 libssl-dev:arm64 libcrypt-dev:arm64) ;;
    *) echo "install-deps: unknown option $arg" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${pkgs[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "flightrec: installing missing packages: ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "flightrec: need root or sudo to install ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
if ((aarch64)) && ! dpkg --print-foreign-architectures | grep -qx arm64; then
  $sudo dpkg --add-architecture arm64
fi
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
