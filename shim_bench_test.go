package main_test

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/adapters/claudecode"
	"github.com/heirloom-dev/heirloom/engine"
	"github.com/heirloom-dev/heirloom/kv"
	"github.com/heirloom-dev/heirloom/proxy"
)

// openBenchServer opens a proxy.Server on 127.0.0.1:0 over a real store in a temp dir, as
// `heirloom serve` would, and returns its URL; both close in b.Cleanup.
func openBenchServer(b *testing.B) string {
	b.Helper()
	store := kv.NewStore(b.TempDir())
	if err := store.Open(); err != nil {
		b.Fatal(err)
	}
	reg, err := adapters.NewRegistry(claudecode.Registration())
	if err != nil {
		b.Fatal(err)
	}
	eng := engine.New(store, "default")
	eng.Harnesses = reg
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	s := proxy.NewServer()
	s.Addr = "127.0.0.1:0"
	s.Engine, s.Harnesses = eng, reg
	if err := s.Open(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := s.Close(ctx); err != nil {
			b.Error(err)
		}
		if err := eng.Close(ctx); err != nil {
			b.Error(err)
		}
		if err := store.Close(); err != nil {
			b.Error(err)
		}
	})
	return s.URL()
}

// benchExec runs name with args once per iteration, stdin from stdin(i), and fails b unless it
// exits 0 with stdout wantOut (when wantOut is not empty).
func benchExec(b *testing.B, env []string, stdin func(i int) string, wantOut string, name string, args ...string) {
	b.Helper()
	i := 0
	for b.Loop() {
		cmd := exec.Command(name, args...)
		cmd.Env = env
		cmd.Stdin = strings.NewReader(stdin(i))
		var stdout bytes.Buffer
		cmd.Stdout = &stdout
		if err := cmd.Run(); err != nil {
			b.Fatalf("%s: %v", name, err)
		}
		if wantOut != "" && stdout.String() != wantOut {
			b.Fatalf("%s: stdout %q, want %q", name, stdout.String(), wantOut)
		}
		i++
	}
}

// BenchmarkShim measures the whole process of one command hook, `heirloom hook claude-code`
// with a SessionStart payload on stdin, exec'd once per iteration: against an in-process server
// over real Pebble (one synced write a call), against an address nobody listens on (the warning
// path), and beside `node -e 0` and `true` as the cost of starting a process at all.
func BenchmarkShim(b *testing.B) {
	home := b.TempDir()
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	payload := func(i int) string {
		return fmt.Sprintf(`{"session_id":"bench-%d","transcript_path":"/nonexistent/bench-%d.jsonl","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`, i, i)
	}
	b.Run("shim=sidecar", func(b *testing.B) {
		env := append(base, "HEIRLOOM_URL="+openBenchServer(b))
		benchExec(b, env, payload, "{}\n", heirloomBin, "hook", "claude-code")
	})
	b.Run("shim=nothing-listening", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		env := append(base, "HEIRLOOM_URL=http://"+addr)
		benchExec(b, env, payload, "{}\n", heirloomBin, "hook", "claude-code")
	})
	b.Run("node-e0", func(b *testing.B) {
		node, err := exec.LookPath("node")
		if err != nil {
			b.Skip("node not installed")
		}
		benchExec(b, base, payload, "", node, "-e", "0")
	})
	b.Run("true", func(b *testing.B) {
		bin, err := exec.LookPath("true")
		if err != nil {
			b.Skip("true not found")
		}
		benchExec(b, base, payload, "", bin)
	})
}

// BenchmarkShimWrap measures what wrapping an existing command hook costs (proxy mode):
// `heirloom hook claude-code -- echo {}` with a SessionStart payload on stdin, exec'd once per
// iteration, against an in-process server (which adds nothing to SessionStart of a new session,
// so echo's output passes through) and against an address nobody listens on, beside the same
// `echo {}` run alone.
func BenchmarkShimWrap(b *testing.B) {
	home := b.TempDir()
	base := []string{"HOME=" + home, "PATH=" + os.Getenv("PATH")}
	payload := func(i int) string {
		return fmt.Sprintf(`{"session_id":"wrap-%d","transcript_path":"/nonexistent/wrap-%d.jsonl","cwd":"/tmp","hook_event_name":"SessionStart","source":"startup"}`, i, i)
	}
	echo, err := exec.LookPath("echo")
	if err != nil {
		b.Skip("echo not found")
	}
	b.Run("echo-alone", func(b *testing.B) {
		benchExec(b, base, payload, "{}\n", echo, "{}")
	})
	b.Run("shim=sidecar/wrap=echo", func(b *testing.B) {
		env := append(base, "HEIRLOOM_URL="+openBenchServer(b))
		benchExec(b, env, payload, "{}\n", heirloomBin, "hook", "claude-code", "--", echo, "{}")
	})
	b.Run("shim=nothing-listening/wrap=echo", func(b *testing.B) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			b.Fatal(err)
		}
		addr := ln.Addr().String()
		ln.Close()
		env := append(base, "HEIRLOOM_URL=http://"+addr)
		benchExec(b, env, payload, "{}\n", heirloomBin, "hook", "claude-code", "--", echo, "{}")
	})
}
