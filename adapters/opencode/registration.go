package opencode

import "github.com/heirloom-dev/heirloom/adapters"

// Registration is OpenCode's entry in heirloom's registry. OpenCode has no hooks heirloom
// receives: its events arrive through a Client following the server's event stream, and its
// plugin asks POST /api/inject.
func Registration() adapters.Registration {
	return adapters.Registration{Name: Harness, Installer: Installer{}}
}
