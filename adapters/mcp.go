package adapters

import "strings"

// heirloom's own MCP tools, as the harnesses name them, and the mark its replies start with: a
// turn that is a call of one of them or a reply of one is heirloom's own traffic.

// MCPServerName is the name heirloom's MCP server is registered under in every harness.
const MCPServerName = "heirloom"

// MCPTools are the names of heirloom's MCP tools (DESIGN §4).
var MCPTools = []string{"session_search", "session_transcript", "session_lineage", "session_digest", "subagent_runs"}

// ToolReplyMark starts the text of every reply of heirloom's MCP tools ("[heirloom
// session_search] …"), so that a transcript's copy of one is recognised whatever the harness
// records of the call.
const ToolReplyMark = "[heirloom "

// IsHeirloomTool reports whether a harness's tool name is one of heirloom's MCP tools: Claude
// Code names them mcp__heirloom__<tool>, OpenCode and OpenClaw heirloom_<tool>.
func IsHeirloomTool(name string) bool {
	for _, prefix := range []string{"mcp__" + MCPServerName + "__", MCPServerName + "_"} {
		if rest, ok := strings.CutPrefix(name, prefix); ok {
			for _, t := range MCPTools {
				if rest == t {
					return true
				}
			}
		}
	}
	return false
}

// OwnTraffic reports whether a tool turn is heirloom's own MCP traffic: a call of one of its
// tools, or a reply of one. The search index leaves such turns out, so an agent's searches do
// not find its own queries, nor copies of earlier results.
func OwnTraffic(t Turn) bool {
	return t.Role == "tool" && (IsHeirloomTool(t.Tool) || strings.HasPrefix(strings.TrimSpace(t.Text), ToolReplyMark))
}
