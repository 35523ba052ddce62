#!/usr/bin/env bash
# Lets this x86-64 machine run aarch64 executables directly: the kernel
# hands them to qemu-user (binfmt_misc), so an aarch64 program that starts
# another one (flightrec-emu's rank processes, the plugin's `flightrec watch`,
# a test running the CLI) works under emulation as it does on Grace.
# Needs root (or sudo) and Debian's qemu-user-static (scripts/install-deps.sh
# --aarch64). Idempotent: does nothing when aarch64 is already registered.
# The registration is the one qemu-user-static ships for systemd-binfmt
# (flags OPF: F opens the interpreter now, so it works in any mount
# namespace). Ends with a check: an aarch64 program run directly.
set -euo pipefail

mnt=/proc/sys/fs/binfmt_misc
conf=/usr/lib/binfmt.d/qemu-aarch64.conf
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "aarch64-binfmt: need root or sudo" >&2; exit 1; }
  sudo="sudo"
fi

if [[ ! -e $mnt/register ]]; then
  $sudo mount -t binfmt_misc binfmt_misc "$mnt" || {
    echo "aarch64-binfmt: cannot mount binfmt_misc on $mnt" >&2
    exit 1
  }
fi
if [[ ! -e $mnt/qemu-aarch64 ]]; then
  [[ -r $conf ]] || { echo "aarch64-binfmt: $conf missing (Debian qemu-user-static)" >&2; exit 1; }
  grep -m1 '^:qemu-aarch64:' "$conf" | $sudo tee "$mnt/register" >/dev/null
fi
if [[ "$(head -1 "$mnt/qemu-aarch64")" != enabled ]]; then
  echo 1 | $sudo tee "$mnt/qemu-aarch64" >/dev/null
fi

# The check: a tiny program built by the cross compiler, run directly.
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'int main(void) { return 0; }\n' >"$probe/p.c"
aarch64-linux-gnu-gcc -o "$probe/p" "$probe/p.c"
"$probe/p" || { echo "aarch64-binfmt: an aarch64 program does not run" >&2; exit 1; }
echo "aarch64-binfmt: aarch64 executables run through $(sed -n 's/^interpreter //p' "$mnt/qemu-aarch64")"
