#!/usr/bin/env bash
# ensure-patroni.sh [DIR]: puts Debian trixie's Patroni (PATRONI_VERSION) under DIR (default
# var/patroni) when it is not there yet: a private apt configuration (a sources file for suite
# trixie, lists and cache folders under DIR/apt) so that the machine's own apt sources, lists and
# cache are untouched; `apt-get download` of the package (architecture all: pure Python), `dpkg -x`
# into DIR/root, and two wrappers, DIR/bin/patroni and DIR/bin/patronictl, that run it with
# bookworm's /usr/bin/python3 and its python3-psycopg2, -yaml, -click, -prettytable, -dateutil,
# -psutil, -urllib3 (installed here with bookworm's patroni package, by ensure-ha.sh) on PYTHONPATH.
# Why not bookworm's patroni 3.0.2: its etcd3 leader update overwrote the leader key
# unconditionally, so a primary that stalled past its lease took the key back from the standby
# promoted meanwhile and discarded what that one acknowledged (docs/replicas.md, issue 40).
# `python3` on PATH may be another interpreter; the wrappers name /usr/bin/python3.
set -euo pipefail
PATRONI_VERSION=${PATRONI_VERSION:-4.0.7}
dir=$(realpath -m "${1:-var/patroni}")
if [ -x "$dir/bin/patroni" ] && [ "$("$dir/bin/patroni" --version 2>/dev/null)" = "patroni $PATRONI_VERSION" ]; then
  exit 0
fi
echo "fetching Patroni $PATRONI_VERSION from Debian trixie into $dir..."
apt=$dir/apt
mkdir -p "$apt/sources.list.d" "$apt/lists/partial" "$apt/cache/archives/partial" "$dir/deb"
cat >"$apt/sources.list.d/trixie.sources" <<SRC
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-trixie-stable.gpg
SRC
aptopts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt/sources.list.d"
  -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
  -o "APT::Sandbox::User=root")
apt-get "${aptopts[@]}" update -qq
(cd "$dir/deb" && rm -f patroni_*.deb && apt-get "${aptopts[@]}" download "patroni=$PATRONI_VERSION-*" -qq)
rm -rf "$dir/root"
dpkg -x "$dir"/deb/patroni_*.deb "$dir/root"
site=$(ls -d "$dir"/root/usr/lib/python3/dist-packages)
mkdir -p "$dir/bin"
for prog in patroni patronictl; do
  cat >"$dir/bin/$prog" <<WRAP
#!/bin/sh
# Debian trixie's $prog $PATRONI_VERSION on bookworm's Python (scripts/ensure-patroni.sh).
PYTHONPATH=$site\${PYTHONPATH:+:\$PYTHONPATH} exec /usr/bin/python3 $dir/root/usr/bin/$prog "\$@"
WRAP
  chmod 755 "$dir/bin/$prog"
done
chmod -R a+rX "$dir"
got=$("$dir/bin/patroni" --version)
if [ "$got" != "patroni $PATRONI_VERSION" ]; then
  echo "ensure-patroni: $dir/bin/patroni --version says '$got', want 'patroni $PATRONI_VERSION'" >&2
  exit 1
fi
echo "$got in $dir"
