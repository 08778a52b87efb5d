// Package soak runs the real heirloom binary under a mixed load for minutes and reports how it
// held up (issue 16, item 5). The load, all on loopback:
//
//   - Claude Code: Sessions sessions at once, each a run of hooks POSTed to /hooks/claude-code
//     as Claude Code 2.1.197 sends them (SessionStart, prompts with tool calls, sub-agents with
//     SubagentStart/Stop and the Agent tool's Pre/PostToolUse, Stop, sometimes a compaction,
//     SessionEnd), with the transcript written to disk before each hook, as Claude Code does.
//   - OpenCode: a stand-in `opencode serve` (GET /event server-sent events with heartbeats, the
//     REST calls a resync makes) replaying the recorded stream of
//     adapters/opencode/testdata with new ids and text each time round.
//   - OpenClaw: a stand-in Gateway (adapters/openclaw/gatewaytest) replaying the recorded
//     Gateway conversation of adapters/openclaw/testdata/live the same way.
//   - Searches (POST /api/sessions/search), MCP tool calls (/mcp), the plugins' /api/inject,
//     and live feed consumers (GET /api/events), one of which reconnects every 15–25 s.
//   - Restarts: the OpenCode and Gateway stand-ins go down for 0.5–3 s in turn and come back on
//     the same port; heirloom must reconnect and resync.
//
// Every Interval it samples heirloom's RSS (/proc/<pid>/status), goroutines and counters
// (/metrics) and the latency of every path, and it measures RSS idle before the load and idle
// after it. A run fails (Report.Violations) when RSS or goroutines grow without bound or break
// their caps (CheckGrowth), goroutines outlive the load, a call fails, more than 1% of hook
// replies keep the harness waiting, a stream stops being stored, or heirloom does not reconnect
// to a restarted upstream.
//
// TestSoak runs it for two minutes in the suite; SOAK_DURATION=30m runs the long one. The
// command e2e/cmd/soak runs it with flags. docs/benchmarks.md ("Soak") has the figures.
package soak
