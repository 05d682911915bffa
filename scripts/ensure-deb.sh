#!/usr/bin/env bash
# ensure-deb.sh PACKAGE [PROGRAM]: installs Debian's PACKAGE when PROGRAM (default: PACKAGE) is
# missing and we may install (root). The package's own system-wide service, if it starts one, is
# stopped: the project runs its own instances with their own configuration.
set -euo pipefail
pkg=$1
prog=${2:-$1}
command -v "$prog" >/dev/null 2>&1 || [ -x "/usr/sbin/$prog" ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "$prog is missing: run 'sudo apt-get install $pkg'" >&2
  exit 1
fi
echo "installing $pkg from Debian..."
export DEBIAN_FRONTEND=noninteractive
bash "$(dirname "$0")/apt-update.sh"
apt-get install -y -qq "$pkg" >/dev/null
systemctl disable --now "$pkg" >/dev/null 2>&1 || service "$pkg" stop >/dev/null 2>&1 || true
