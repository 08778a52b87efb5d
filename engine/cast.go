package engine

import (
	"github.com/heirloom-dev/heirloom/inject"
	"github.com/heirloom-dev/heirloom/kv"
)

// castOptions are the configured limits of a cast: the level-1 limit, and the retention and the
// default scope the footer names.
func (e *Engine) castOptions() inject.CastOptions {
	return inject.CastOptions{MaxTokens: e.Config.Runs.MaxResultTokens, Retention: e.Config.Runs.ResultRetention, Scope: e.Scope}
}

// CastRun returns run r as a model or a person reads it (inject.CastRun), with the configured
// limits, in at most maxChars UTF-16 units (zero or negative: Config.MaxContextChars, a hook
// reply's cap); with full, its result as stored, whole, whatever its size (`heirloom runs
// show`). A level-2 summary is used when the run holds one: nothing here waits for a model.
func (e *Engine) CastRun(r kv.Run, maxChars int, full bool) string {
	o := e.castOptions()
	o.MaxChars, o.Full = maxChars, full
	if o.MaxChars <= 0 {
		o.MaxChars = e.Config.MaxContextChars
	}
	return inject.CastRun(r, o)
}
