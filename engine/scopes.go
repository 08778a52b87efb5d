package engine

import (
	"cmp"
	"slices"
	"strings"

	"github.com/heirloom-dev/heirloom/kv"
)

// A session lives in the memory scope its key names. A sub-agent may live in another scope than
// its parent (OpenClaw: sessions_spawn with agentId puts the child under another agent): the
// child's record names its parent's scope (kv.Session.ParentScope) and the parent's run names
// the child's (kv.Run.ChildScope). Lineage is recorded across scopes always; context crosses
// only where the parent's scope allows it (Config.CrossScope).

// keyScope returns the memory scope session key names under harness (OpenClaw: its agent id),
// or fallback when the harness's keys name none.
func (e *Engine) keyScope(harness, key, fallback string) string {
	if key == "" {
		return fallback
	}
	if p := e.harness(harness).Plugin; p != nil {
		if s := p.ScopeOf(key); s != "" {
			return s
		}
	}
	return fallback
}

// otherScope returns scope when it is not own, else "": the form of kv.Session.ParentScope and
// kv.Run.ChildScope.
func otherScope(scope, own string) string {
	if scope == own {
		return ""
	}
	return scope
}

// childScope returns the memory scope of r's sub-agent.
func childScope(r kv.Run) string {
	return cmp.Or(r.ChildScope, r.Scope)
}

// mayInherit reports whether a sub-agent in scope child may be handed the context of a parent in
// scope parent: always within one scope; across scopes when Config.CrossScope names the
// parent's scope (in any case: OpenClaw lowercases agent ids), or "*".
func (e *Engine) mayInherit(parent, child string) bool {
	return parent == child || slices.ContainsFunc(e.Config.CrossScope, func(s string) bool {
		return s == "*" || strings.EqualFold(strings.TrimSpace(s), parent)
	})
}
