#!/bin/bash
# Installs the pinned npm packages (package.json, package-lock.json) into node_modules. npm ci unpacks
# about 200 MB of packages (some 40 s of CPU); so after an install this machine keeps a copy of
# node_modules, named by a hash of the two files, in NPM_MODULES_CACHE (default
# ~/.cache/triad/node_modules), and a later clone of the same lock takes it from there instead: hard
# links to its files (a second; new folders, the files shared, which the tools only read), or a
# copy where the two folders are on different file systems. Go's build cache spares a clone its
# compiling the same way. A different lock misses the cache and runs npm ci.
set -euo pipefail
key=$(cat package.json package-lock.json | sha256sum | cut -c1-16)
root=${NPM_MODULES_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/triad/node_modules}
cache=$root/$key
if [ -f "$cache/complete" ]; then
	rm -rf node_modules
	cp -al "$cache/node_modules" node_modules 2>/dev/null || { rm -rf node_modules; cp -a "$cache/node_modules" node_modules; }
	echo "node_modules: taken from $cache (the same package-lock.json)"
	exit 0
fi
npm ci --no-audit --no-fund --loglevel=error
# Kept only whole: copied beside, marked complete, then moved into place.
mkdir -p "$root"
tmp=$(mktemp -d "$root/.tmp.XXXXXX")
if cp -a node_modules "$tmp/node_modules" && touch "$tmp/complete"; then
	rm -rf "$cache"
	mv "$tmp" "$cache" || rm -rf "$tmp"
else
	rm -rf "$tmp"
fi
