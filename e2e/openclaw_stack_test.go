package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/heirloom-dev/heirloom/e2e/chatapi"
	"github.com/heirloom-dev/heirloom/e2e/openclaw"
)

// clawStack is what a live OpenClaw test runs against: the real Gateway with heirloom's plugin
// installed by `heirloom install openclaw` (pointing at heirloom's address), a real `heirloom
// serve` following the Gateway, a connection subscribed to the Gateway's events (Rec) and one
// to drive it (Op).
type clawStack struct {
	G       *openclaw.Gateway
	HL      *serveProc
	Rec, Op *openclaw.Client
}

// startClawStack starts a clawStack whose model is api, with config merged into the Gateway's
// (nil for none) and env added to heirloom's (KEY=VALUE). heirloom's output is logged when t
// fails.
func startClawStack(t *testing.T, api *chatapi.Server, config map[string]any, env ...string) *clawStack {
	t.Helper()
	// The Gateway's port and token are fixed first, so heirloom can be told them; the plugin is
	// installed into the Gateway's state before it starts, pointing at heirloom's address.
	gwAddr, heirloomAddr := freeAddr(t), freeAddr(t)
	var gwPort int
	if _, err := fmt.Sscanf(gwAddr, "127.0.0.1:%d", &gwPort); err != nil {
		t.Fatal(err)
	}
	g := openclaw.New(t, openclaw.Options{ProviderURL: api.BaseURL(), Port: gwPort, Config: config})
	install := exec.Command(heirloomBin(t), "install", "openclaw", "--url", "http://"+heirloomAddr)
	install.Env = g.Environ()
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("heirloom install openclaw: %v\n%s", err, out)
	}
	g.Start(t, t.Context())
	hl := startServe(t, serveOptions{Home: t.TempDir(), Addr: heirloomAddr, Env: append([]string{
		"HEIRLOOM_ADAPTERS__OPENCLAW__URL=" + g.WSURL(),
		"OPENCLAW_GATEWAY_TOKEN=" + g.Token,
		"HEIRLOOM_LOG__LEVEL=debug",
	}, env...)})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("heirloom serve output:\n%s", hl.Logs())
		}
	})
	waitFor(t, "heirloom to connect to the Gateway", func() bool { return strings.Contains(hl.Logs(), "connected to OpenClaw") })
	rec := g.Connect(t, t.Context())
	if err := rec.Subscribe(t.Context()); err != nil {
		t.Fatal(err)
	}
	return &clawStack{G: g, HL: hl, Rec: rec, Op: g.Connect(t, t.Context())}
}
