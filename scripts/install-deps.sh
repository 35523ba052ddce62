#!/usr/bin/env bash
# Installs the Debian packages flightrec needs, only those that are missing.
# Usage: scripts/install-deps.sh [--fuzz]   (--fuzz adds clang + libFuzzer)
set -euo pipefail

pkgs=(g++ cmake ninja-build pkg-config binutils libzstd-dev zstd nlohmann-json3-dev
      libcli11-dev libgtest-dev libgmock-dev googletest libbenchmark-dev python3
      libcpp-httplib-dev libssl-dev libcrypt-dev openssl curl jq prometheus chromium)
if [[ "${1:-}" == "--fuzz" ]]; then
  pkgs+=(clang libclang-rt-dev clang-format clang-tidy)
fi

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
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
