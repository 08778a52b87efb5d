// Package opencode decodes OpenCode's server events and REST responses into the vocabulary of
// package adapters.
//
// Everything in decode.go and rest.go is pure: bytes in, events out, no I/O and no state, so a
// frame decodes the same whether it arrives live, again as a "sync" copy on /global/event, or
// as part of a resync over REST. OpenCode (`opencode serve`, 1.18.x) streams one JSON object
// per SSE data line on GET /event, {"id","type","properties"}; GET /global/event wraps each as
// {"directory","project","payload"}. GET /session and GET /session/{id}/message return the
// state those events describe, which a client reads back after every (re)connect because
// OpenCode ignores Last-Event-ID.
//
// Sessions name their parent (parentID) and the task tool names the child session it started
// (state.metadata.sessionId), so nothing here pairs or guesses. Transcript records are message
// parts, keyed by part id: OpenCode sends a part again each time it changes, and each version
// replaces the previous one.
package opencode

// Harness is the name of the harness, as in adapters.Event.Harness.
const Harness = "opencode"
