package openclaw

import "github.com/heirloom-dev/heirloom/adapters"

// TokenEnv is the environment variable holding the Gateway's auth token, in OpenClaw's
// environment and, for a Gateway configured without one, in heirloom's.
const TokenEnv = "OPENCLAW_GATEWAY_TOKEN"

// Registration is OpenClaw's entry in heirloom's registry: heirloom's plugin inside the Gateway
// posts to POST /hooks/openclaw and asks POST /api/inject, with session keys that name their
// memory scope. The Gateway's own events arrive through a Client, which also describes sessions
// to the engine.
func Registration() adapters.Registration {
	return adapters.Registration{Name: Harness, Plugin: Adapter{}, Installer: Installer{}, Stream: newStream, RunsByChild: true}
}

// newStream is OpenClaw's adapters.NewStream: a Client for the Gateway at t.URL with token
// t.Secret, or else TokenEnv's, naming itself with heirloom's version.
func newStream(t adapters.StreamTarget, o adapters.StreamOptions) adapters.Stream {
	c := NewClient(t.URL, o.Sink)
	c.Token, c.Version, c.Logger = o.Secret(t, TokenEnv), o.Version, o.Logger
	return c
}
