package main_test

import (
	"os/exec"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/heirloom-dev/heirloom"

// allowedInternal lists, per package, the project packages it may import directly. Data flows one
// way: adapters → engine (decisions) → kv → inject → reply, with proxy carrying HTTP to the
// engine; only main wires config and harnesses.
var allowedInternal = map[string][]string{
	"adapters":            {},
	"adapters/claudecode": {"adapters", "inject/heading", "inject/textcut", "adapters/internal/atomicfile", "adapters/internal/jsonconfig", "adapters/internal/toolinput"},
	"adapters/opencode":   {"adapters", "adapters/internal/atomicfile", "adapters/internal/jsonconfig", "adapters/internal/follow", "adapters/internal/textdiff", "adapters/internal/toolinput"},
	"adapters/codex":      {"adapters", "adapters/internal/atomicfile", "adapters/internal/textdiff", "adapters/internal/toolinput"},
	"adapters/openclaw":   {"adapters", "adapters/internal/atomicfile", "adapters/internal/jsonconfig", "adapters/internal/follow", "adapters/internal/textdiff", "adapters/internal/toolinput"},
	// The installers' --dry-run diffs; internal to the adapters.
	"adapters/internal/textdiff": {},
	// The installers' one atomic, synced file write (temp file, fsync, rename, directory fsync).
	"adapters/internal/atomicfile": {},
	// The installers' edits of JSON config files: key order and indentation kept, atomic writes.
	"adapters/internal/jsonconfig": {"adapters/internal/atomicfile", "adapters/internal/textdiff"},
	// The stream clients' shared lifecycle, backoff, counters and Sink delivery.
	"adapters/internal/follow": {"adapters"},
	// The stream clients' test helpers (a recording Sink and Logger, a goroutine-leak check):
	// tests only.
	"adapters/internal/streamtest": {"adapters", "internal/leaktest"},
	// The goroutine-leak check the stream clients' and the live feed's tests share: tests only.
	"internal/leaktest": {},
	// The decoders' one reading of a tool call's input (summary, paths) and text bound.
	"adapters/internal/toolinput": {"adapters"},
	// A fake OpenClaw Gateway for tests, like net/http/httptest: nothing but tests imports it.
	"adapters/openclaw/gatewaytest": {"adapters/openclaw"},
	// Claude Code's payloads and transcript records for tests: nothing but tests imports it.
	"adapters/claudecode/claudecodetest": {},
	"kv":                                 {},
	// inject renders stored records; it takes the reply cap from the harness vocabulary.
	"inject": {"kv", "adapters", "inject/heading", "inject/textcut"},
	// The block headings and the UTF-16 measuring and cutting, for code that must not link
	// inject (Claude Code's reply merging, and through it the hook shim).
	"inject/heading": {},
	"inject/textcut": {},
	// The decisions: adapters' events in, kv's records out, inject's blocks gathered; searches
	// run over kv's index with search's logic.
	"engine": {"adapters", "kv", "inject", "search"},
	// Tokenizing, query parsing and ranking: pure logic over a Source the store implements.
	"search": {},
	// Level-2 condensation: the one outbound call to a model (an OpenAI-compatible
	// chat-completions endpoint). It knows no record: main builds it, the engine calls it through
	// its Condenser interface, in the background.
	"condense": {},
	// Transport only: it carries requests to the engine. The read API reads kv directly;
	// Claude Code's reply merging (proxy mode) is its adapter's.
	"proxy": {"adapters", "adapters/claudecode", "engine", "kv", "inject", "inject/heading", "ui"},
	// The lineage viewer's page, script and style sheet, embedded; proxy serves them.
	"ui": {},
	// config composes its defaults from the packages they configure.
	"config": {"adapters", "engine", "proxy"},
	// The hook process: one per hook, so it links no store, engine or server (see TestHookDeps).
	"hookshim":          {"adapters", "adapters/claudecode", "inject/heading"},
	"cmd/heirloom-hook": {"hookshim"},
	// The user service files (systemd, launchd) and the commands that enable them: main runs them.
	"service": {},
	"":        {"adapters", "adapters/claudecode", "adapters/codex", "adapters/opencode", "adapters/openclaw", "condense", "config", "engine", "hookshim", "kv", "inject", "proxy", "search", "service"},
}

// outsideHome names the one project package allowed to import each outside library (STYLE rule 1).
// hclog is made in main and passed down, so proxy may name its type.
var outsideHome = map[string][]string{
	"github.com/cockroachdb/pebble":    {"kv"},
	"github.com/knadh/koanf":           {"config"},
	"github.com/go-viper/mapstructure": {"config"},
	"github.com/hashicorp/go-hclog":    {"", "engine", "proxy"},
	"github.com/mattn/go-isatty":       {""},
	"github.com/r3labs/sse":            {"adapters/opencode"},
	// go-toml parses Codex's config.toml (install edits its text, keeping the user's bytes).
	"github.com/pelletier/go-toml": {"adapters/codex"},
	// gorilla/websocket: the OpenClaw Gateway client, and the live feed's server and client
	// (GET /api/events, Client.Watch) in proxy.
	"github.com/gorilla/websocket": {"adapters/openclaw", "adapters/openclaw/gatewaytest", "proxy"},
	// Prometheus: the registry is made in main and passed down; proxy registers and serves it.
	"github.com/prometheus/client_golang": {"", "proxy"},
	// MCP: the tools live beside the API they call, served at /mcp and by `heirloom mcp`.
	"github.com/modelcontextprotocol/go-sdk": {"proxy"},
}

// TestImportRules fails on a forbidden import edge between packages, or an outside library
// imported outside its home package.
func TestImportRules(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", `{{.ImportPath}}{{range .Imports}} {{.}}{{end}}`, "./...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fields := strings.Fields(line)
		pkg := strings.TrimPrefix(strings.TrimPrefix(fields[0], module), "/")
		if strings.HasPrefix(pkg, "e2e") {
			continue // tests of the whole program may import anything
		}
		allowed, known := allowedInternal[pkg]
		if !known {
			t.Errorf("package %q has no entry in allowedInternal: add its rule", pkg)
			continue
		}
		for _, imp := range fields[1:] {
			if rel, ok := strings.CutPrefix(imp, module); ok {
				rel = strings.TrimPrefix(rel, "/")
				if !contains(allowed, rel) {
					t.Errorf("%s imports %s: not allowed (allowed: %v)", pkgName(pkg), rel, allowed)
				}
				continue
			}
			for lib, homes := range outsideHome {
				if strings.HasPrefix(imp, lib) && !contains(homes, pkg) {
					t.Errorf("%s imports %s: only %v may", pkgName(pkg), imp, homes)
				}
			}
		}
	}
}

// hookForbidden are what the hook process must never link, whole packages or every package under
// a path: each hook starts a process, and initialising these (Pebble, Prometheus and protobuf
// above all) costs more than the shim's own work. inject/heading is the one inject package the
// shim needs; it imports nothing.
var hookForbidden = []string{
	"github.com/cockroachdb/", // Pebble and its dependencies
	"github.com/prometheus/",
	"google.golang.org/protobuf",
	"github.com/golang/protobuf",
	"github.com/knadh/koanf",
	"github.com/hashicorp/go-hclog",
	"github.com/gorilla/websocket",
	"github.com/r3labs/sse",
	"github.com/modelcontextprotocol/",
	module + "/kv",
	module + "/engine",
	module + "/proxy",
	module + "/inject",
	module + "/config",
}

// hookPackages are the project packages the hook binary may link; the rest of its closure is
// the standard library. Claude Code's adapter brings its stdlib-only helpers along.
var hookPackages = []string{"cmd/heirloom-hook", "hookshim", "adapters", "adapters/claudecode", "inject/heading", "inject/textcut",
	"adapters/internal/atomicfile", "adapters/internal/jsonconfig", "adapters/internal/textdiff", "adapters/internal/toolinput"}

// TestHookDeps fails when the hook binary's whole dependency closure reaches beyond the standard
// library and hookPackages, naming any forbidden package it links.
func TestHookDeps(t *testing.T) {
	deps := goListDeps(t, "./cmd/heirloom-hook")
	for _, dep := range deps {
		for _, bad := range hookForbidden {
			if (dep == bad || strings.HasPrefix(dep, strings.TrimSuffix(bad, "/")+"/")) && dep != module+"/inject/heading" && dep != module+"/inject/textcut" {
				t.Errorf("cmd/heirloom-hook links %s: the hook process must not (%s)", dep, bad)
			}
		}
		if rel, ok := strings.CutPrefix(dep, module+"/"); ok {
			if !contains(hookPackages, rel) {
				t.Errorf("cmd/heirloom-hook links %s: allowed project packages are %v", rel, hookPackages)
			}
			continue
		}
		if first, _, _ := strings.Cut(dep, "/"); strings.Contains(first, ".") {
			t.Errorf("cmd/heirloom-hook links %s: only the standard library outside the project", dep)
		}
	}
	t.Logf("cmd/heirloom-hook links %d packages, heirloom %d", len(deps), len(goListDeps(t, ".")))
}

// goListDeps returns the import paths of pkg and everything it links.
func goListDeps(t *testing.T, pkg string) []string {
	t.Helper()
	out, err := exec.Command("go", "list", "-deps", pkg).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	return strings.Fields(string(out))
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func pkgName(p string) string {
	if p == "" {
		return "main"
	}
	return p
}
