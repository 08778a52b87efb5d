#!/usr/bin/env bash
# Installs the pinned harness binaries for heirloom's live e2e tests into
# e2e/npm/node_modules (the tests look for node_modules/.bin/claude and
# node_modules/.bin/opencode).
#
# Idempotent and fast when nothing changed: the sha256 of package-lock.json is
# kept in node_modules/.heirloom-install.stamp, and `npm ci` runs only when it
# differs or a binary is missing. Needs node and npm; reaches only the npm
# registry. Both native binaries ship inside npm packages: Claude Code's
# postinstall only links its binary into place; OpenCode's links the binary of
# its platform package (opencode-linux-x64, or -baseline on CPUs without AVX2)
# and, only when npm skipped that optional package, fetches it with
# `npm install` from the same registry.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

stamp=node_modules/.heirloom-install.stamp
claude=node_modules/@anthropic-ai/claude-code/bin/claude.exe
opencode=node_modules/opencode-ai/bin/opencode.exe
want=$(sha256sum package-lock.json | cut -d' ' -f1)

# native reports whether an entry point is the real binary rather than the
# small placeholder its package ships until its postinstall has run.
native() {
	[[ -f $1 ]] && (($(stat -c %s "$1") > 1048576))
}

if [[ -f $stamp && $(<"$stamp") == "$want" ]] && native "$claude" && native "$opencode"; then
	exit 0
fi

command -v npm >/dev/null || {
	echo "install.sh: npm not found: install Node.js >= 18 first" >&2
	exit 1
}

npm ci --no-audit --no-fund

# A client that blocks dependency install scripts leaves the placeholders in
# place: run each package's own postinstall, which links the binary from the
# platform package npm already fetched.
if ! native "$claude"; then
	node node_modules/@anthropic-ai/claude-code/install.cjs
fi
if ! native "$opencode"; then
	(cd node_modules/opencode-ai && node postinstall.mjs)
fi
for bin in "$claude" "$opencode"; do
	if ! native "$bin"; then
		echo "install.sh: $bin is not the native binary (no package for this platform?)" >&2
		exit 1
	fi
done

node_modules/.bin/claude --version
# opencode creates its config, cache and data dirs on any run: keep them out
# of the real HOME.
scratch=$(mktemp -d)
env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
	HOME="$scratch" node_modules/.bin/opencode --version
rm -rf "$scratch"
echo "$want" >"$stamp"
