package openclaw

import "github.com/heirloom-dev/heirloom/adapters"

// Registration is OpenClaw's entry in heirloom's registry: heirloom's plugin inside the Gateway
// posts to POST /hooks/openclaw and asks POST /api/inject, with session keys that name their
// memory scope. The Gateway's own events arrive through a Client.
func Registration() adapters.Registration {
	return adapters.Registration{Name: Harness, Plugin: Adapter{}, Installer: Installer{}}
}
