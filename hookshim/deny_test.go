//go:build unix

package hookshim_test

import (
	"testing"
	"time"

	"github.com/heirloom-dev/heirloom/hookshim"
)

// shimDenyReply is the sidecar's refusal of a spawn (PreToolUse of the Agent tool).
const shimDenyReply = `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"}}`

// shimSpawnInput is a PreToolUse of the Agent tool.
const shimSpawnInput = `{"session_id":"s1","cwd":"/work/app","hook_event_name":"PreToolUse","tool_name":"Agent","tool_use_id":"toolu_1","tool_input":{"description":"d","prompt":"p","subagent_type":"general-purpose"}}`

// TestShimKeepsDeny: the shim prints the sidecar's refusal of a spawn as it is, and wrapping a
// command whose reply allows the call keeps heirloom's deny, with the command's other fields.
func TestShimKeepsDeny(t *testing.T) {
	side := newShimSidecar(t, shimDenyReply, nil)
	t.Run("Direct", func(t *testing.T) {
		s := &hookshim.Shim{URL: side.URL, Timeout: 10 * time.Second}
		stdout, stderr, code := runWrappedShim(t, s, shimSpawnInput)
		if code != 0 || stdout != shimDenyReply+"\n" || stderr != "" {
			t.Fatalf("got code %d stdout %q stderr %q, want 0 and the deny as it is", code, stdout, stderr)
		}
	})
	t.Run("Wrapped", func(t *testing.T) {
		cmd := shimScript(t, `cat >/dev/null
printf '%s\n' '{"systemMessage":"theirs","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"allow"}}'`)
		stdout, stderr, code := runWrappedShim(t, wrappedShim(side.URL, cmd), shimSpawnInput)
		want := `{"systemMessage":"theirs","hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"heirloom refused this sub-agent: depth 2 exceeds spawn.max_depth 1"}}` + "\n"
		if code != 0 || stdout != want || stderr != "" {
			t.Fatalf("got code %d\nstdout %s\nstderr %q\nwant 0 and\n%s", code, stdout, stderr, want)
		}
	})
}
