#!/usr/bin/env bash
# Installs the pinned harness binaries for heirloom's live e2e tests into
# e2e/npm/node_modules (the tests look for node_modules/.bin/claude).
#
# Idempotent and fast when nothing changed: the sha256 of package-lock.json is
# kept in node_modules/.heirloom-install.stamp, and `npm ci` runs only when it
# differs or the binary is missing. Needs node and npm; reaches only the npm
# registry (the Claude Code native binary ships inside an npm package, and its
# postinstall only links it into place).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

stamp=node_modules/.heirloom-install.stamp
bin=node_modules/@anthropic-ai/claude-code/bin/claude.exe
want=$(sha256sum package-lock.json | cut -d' ' -f1)

# native reports whether the claude entry point is the real binary rather than
# the small placeholder the package ships until its postinstall has run.
native() {
	[[ -f $bin ]] && (($(stat -c %s "$bin") > 1048576))
}

if [[ -f $stamp && $(<"$stamp") == "$want" ]] && native; then
	exit 0
fi

command -v npm >/dev/null || {
	echo "install.sh: npm not found: install Node.js >= 18 first" >&2
	exit 1
}

npm ci --no-audit --no-fund

# A client that blocks dependency install scripts leaves the placeholder in
# place: run the package's own postinstall, which only links the binary from
# the platform package npm already fetched.
if ! native; then
	node node_modules/@anthropic-ai/claude-code/install.cjs
fi
if ! native; then
	echo "install.sh: $bin is not the native binary (no package for this platform?)" >&2
	exit 1
fi

node_modules/.bin/claude --version
echo "$want" >"$stamp"
