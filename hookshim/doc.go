// Package hookshim is the command-hook process of heirloom: `heirloom hook <harness> [-- CMD…]`
// and the light binary `heirloom-hook <harness> [-- CMD…]` both run Main. It reads one hook call
// on stdin, POSTs it to the sidecar's /hooks/<harness>, and prints the reply; with "-- CMD" it
// also runs an existing hook command on the same input and merges the two replies
// (claudecode.Merge). It never blocks the harness: whatever fails, it prints a usable reply
// ({} at worst), warns on one stderr line and exits 0 (2 only when a wrapped command blocks).
//
// Every hook starts a process, so the package stays small: it imports only the standard library,
// adapters/claudecode (for Claude Code's reply format) and inject/heading, never kv, Pebble,
// inject, proxy, config or the logging and metrics libraries; deps_test.go at the module root
// enforces it for the whole dependency closure of cmd/heirloom-hook.
//
// Settings come from the environment, never from a config file:
//
//	HEIRLOOM_URL                the sidecar's base URL (default DefaultURL)
//	HEIRLOOM_HOOK_TIMEOUT       the whole hook's deadline, stdin included: a Go duration or
//	                            milliseconds (default DefaultTimeout, 1500ms)
//	HEIRLOOM_TOKEN              bearer token for the sidecar, when it requires one
//	HEIRLOOM_UPSTREAM_TIMEOUT   with "--": the wrapped command's deadline (default
//	                            DefaultCommandTimeout, 30s)
//	HEIRLOOM_MAX_CONTEXT_CHARS  with "--": cap on the merged additionalContext, 500..10000
//	                            (default claudecode.DefaultMaxContextChars)
package hookshim
