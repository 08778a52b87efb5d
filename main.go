// Command heirloom is a sidecar for AI coding harnesses: it hands every sub-agent the context its
// parent had, keeps sessions searchable while they run, and keeps the objective alive across
// compaction. main.go only wires; the logic lives in the packages.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"syscall"
)

// usage is the top-level help text.
const usage = `heirloom — warm starts for sub-agents, live transcripts, objectives that survive compaction.

Usage:
  heirloom serve [flags]              run the sidecar (127.0.0.1:7433, data in ~/.local/share/heirloom)
  heirloom hook claude-code           command-hook shim: hook JSON on stdin, reply on stdout
  heirloom hook claude-code -- CMD…   the same, in front of an existing hook command: its reply merged after heirloom's
                                      (heirloom-hook claude-code is the same shim as a light binary of its own)
  heirloom doctor [--json]            check the wiring: sidecar, store, each harness's binary, hooks, plugin, MCP entry
  heirloom sessions [flags]           list recorded sessions, newest first (--tree: with sub-agents)
  heirloom sessions delete KEY        remove a session, its turns, its index entries and checkpoints
  heirloom runs [flags]               list sub-agent runs, newest first (--session, --status, --harness, --since, --type)
  heirloom runs show ID               print a run's result as a model reads it, whole while it is kept
  heirloom search QUERY [flags]       full-text search over every transcript (--session KEY, --json)
  heirloom watch [flags]              follow the live event feed, one line per event (--session KEY, --type T,…, --json)
  heirloom reindex                    rebuild the search index now, with a progress bar
  heirloom explain KEY [flags]        every block of context heirloom gave session KEY: when, how, from whom, what was cut
  heirloom checkpoint KEY [flags]     take a checkpoint of session KEY now and print it
  heirloom mcp                        heirloom's MCP tools over stdio, through the running sidecar (or use its /mcp)
  heirloom install claude-code        add heirloom's hooks to ~/.claude/settings.json (--project DIR, --hooks http, --dry-run)
  heirloom install opencode           add heirloom's plugin to OpenCode (--project DIR, --dry-run)
  heirloom install openclaw           add heirloom's plugin to OpenClaw's config (--url URL, --dry-run)
  heirloom install service            run heirloom serve at login (systemd user unit, launchd agent; --dry-run)
  heirloom uninstall HARNESS|service  take out exactly what install added, with backups (--dry-run shows the diff)
  heirloom config show [flags]        print the effective configuration and where each value came from
  heirloom config example             print a commented example config file
  heirloom version                    print the version

Run 'heirloom <command> -h' for a command's flags.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run dispatches a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	env := os.Environ()
	switch args[0] {
	case "serve":
		return exitCode(stderr, (&ServeCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "hook":
		return (&HookCommand{Env: env, Stdin: stdin, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:])
	case "sessions":
		return exitCode(stderr, (&SessionsCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "runs":
		return exitCode(stderr, (&RunsCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "search":
		return exitCode(stderr, (&SearchCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "watch":
		return exitCode(stderr, (&WatchCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "reindex":
		return exitCode(stderr, (&ReindexCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "doctor":
		return exitCode(stderr, (&DoctorCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "explain":
		return exitCode(stderr, (&ExplainCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "checkpoint":
		return exitCode(stderr, (&CheckpointCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "mcp":
		return exitCode(stderr, (&MCPCommand{Env: env, Stdin: stdin, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "config":
		return exitCode(stderr, (&ConfigCommand{Env: env, Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "install":
		return exitCode(stderr, (&InstallCommand{Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "uninstall":
		return exitCode(stderr, (&UninstallCommand{Stdout: stdout, Stderr: stderr}).Run(ctx, args[1:]))
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, "heirloom", version())
		return 0
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return 0
	default:
		fmt.Fprintf(stderr, "heirloom: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
}

// exitCode prints err (if any) and maps it to an exit code.
func exitCode(stderr io.Writer, err error) int {
	switch {
	case err == nil:
		return 0
	case err == errHelp:
		return 0
	case err == errUsage:
		return 2
	case err == errProblems:
		return 1 // the report said what
	default:
		fmt.Fprintf(stderr, "heirloom: %v\n", err)
		return 1
	}
}

// version returns the version the binary was stamped with, else the module version it was built
// from, or "devel".
func version() string {
	if buildVersion != "" {
		return buildVersion
	}
	if info, ok := debug.ReadBuildInfo(); ok && info.Main.Version != "" && info.Main.Version != "(devel)" {
		return info.Main.Version
	}
	return "devel"
}

// buildVersion is the version a release build stamps: go build -ldflags "-X
// main.buildVersion=v0.3.0" (scripts/release does). Empty: the module's, or "devel".
var buildVersion string
