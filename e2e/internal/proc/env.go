package proc

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
)

// Environ turns env into KEY=VALUE pairs sorted by key, for exec.Cmd.Env.
func Environ(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for _, k := range slices.Sorted(maps.Keys(env)) {
		out = append(out, k+"="+env[k])
	}
	return out
}

// Override applies a test's changes to env: each key of changes is set to
// its value, or removed from env when its value is "".
func Override(env, changes map[string]string) {
	for k, v := range changes {
		if v == "" {
			delete(env, k)
		} else {
			env[k] = v
		}
	}
}

// Loopback is the NO_PROXY list SetProxy sets: loopback hosts stay direct.
const Loopback = "127.0.0.1,localhost,::1"

// SetProxy sets HTTPS_PROXY and HTTP_PROXY (in both cases) in env to
// proxyURL, and NO_PROXY to Loopback, so that a harness's requests to any
// other host reach the stand-in at proxyURL (as CONNECTs it logs and
// refuses) instead of the network.
func SetProxy(env map[string]string, proxyURL string) {
	for _, k := range []string{"HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"} {
		env[k] = proxyURL
	}
	env["NO_PROXY"], env["no_proxy"] = Loopback, Loopback
}

// ProxyFor returns the root URL ("http://HOST:PORT") of a stand-in's API
// base URL (such as "http://HOST:PORT/v1"), where stray requests are sent
// as to a proxy. It fails on a URL without a host.
func ProxyFor(baseURL string) (string, error) {
	u, err := url.Parse(baseURL)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("provider URL %q: want http://HOST:PORT/v1", baseURL)
	}
	return u.Scheme + "://" + u.Host, nil
}

// WriteJSON writes v to path as indented JSON with a final newline and
// file mode perm, creating missing directories (private ones, 0o700: they
// are in a test's temp dirs).
func WriteJSON(path string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("marshal %s: %w", filepath.Base(path), err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create dir of %s: %w", path, err)
	}
	if err := os.WriteFile(path, append(b, '\n'), perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
