package opencode

import "github.com/heirloom-dev/heirloom/adapters"

// PasswordEnv is the environment variable holding an OpenCode server's password, in OpenCode's
// environment and, for a server configured without one, in heirloom's.
const PasswordEnv = "OPENCODE_SERVER_PASSWORD"

// Registration is OpenCode's entry in heirloom's registry. OpenCode has no hooks heirloom
// receives: its events arrive through a Client following each configured server's event
// stream, and its plugin asks POST /api/inject.
func Registration() adapters.Registration {
	return adapters.Registration{Name: Harness, Installer: Installer{}, Stream: newStream}
}

// newStream is OpenCode's adapters.NewStream: a Client for the server at t.URL, its password
// t.Secret or else PasswordEnv's, following the instance of t.Directory.
func newStream(t adapters.StreamTarget, o adapters.StreamOptions) adapters.Stream {
	c := NewClient(t.URL, o.Sink)
	c.Password, c.Directory, c.Logger = o.Secret(t, PasswordEnv), t.Directory, o.Logger
	return c
}
