package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/heirloom-dev/heirloom/proxy"
)

// MCPCommand is `heirloom mcp`: heirloom's MCP tools on stdin and stdout, for MCP clients that
// start their servers as processes. It answers through the running sidecar (HEIRLOOM_URL,
// HEIRLOOM_TOKEN), which owns the store; when the sidecar is down the tools still list and each
// call answers with a tool error saying how to start it.
type MCPCommand struct {
	Env    []string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
}

const mcpUsage = `Usage: heirloom mcp

Serves heirloom's MCP tools (session_search, session_transcript, session_lineage, session_digest,
subagent_runs) over stdio, answering through the running sidecar at HEIRLOOM_URL (default
http://127.0.0.1:7433, with HEIRLOOM_TOKEN when it needs one). Clients that speak streamable HTTP
can use the sidecar's /mcp directly instead.
`

// Run serves until stdin closes or ctx ends.
func (c *MCPCommand) Run(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("heirloom mcp", flag.ContinueOnError)
	fs.SetOutput(c.Stderr)
	sidecarURL := urlFlag(fs)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), mcpUsage+"\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := parseFlags(fs, args, c.Stdout); err != nil {
		return err
	}
	client := sidecar(c.Env, *sidecarURL)
	client.Timeout = 30 * time.Second
	return proxy.ServeMCPStdio(ctx, client, version(), c.Stdin, c.Stdout)
}
