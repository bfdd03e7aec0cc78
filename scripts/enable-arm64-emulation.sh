#!/usr/bin/env bash
# Lets this amd64 machine run arm64 programs (debootstrap's second stage, docker build --platform linux/arm64):
# qemu-user-static registers itself with binfmt_misc, which needs mounting by hand where no systemd does it.
set -euo pipefail

if [ ! -e /proc/sys/fs/binfmt_misc/status ]; then
  mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
fi
if [ ! -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]; then
  update-binfmts --enable qemu-aarch64
fi
if ! grep -q '^enabled' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  echo "enable-arm64-emulation: qemu-aarch64 is registered but disabled" >&2
  exit 1
fi
# The F flag: the interpreter is opened now, so it also works inside containers and chroots without a copy of it.
if ! grep -q '^flags:.*F' /proc/sys/fs/binfmt_misc/qemu-aarch64; then
  echo "enable-arm64-emulation: qemu-aarch64 lacks the F (fix binary) flag; arm64 programs in containers would not start" >&2
  exit 1
fi
