package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/config"
	"github.com/heirloom-dev/heirloom/proxy"
)

// The habits every subcommand shares: -h and --help print its usage on stdout and exit 0; a
// mistake prints why on stderr and exits 2; a client command finds the sidecar where the server
// listens (see sidecar) and takes --url; a session key may be the short id `heirloom sessions`
// shows (see resolveSession).

// parseArgs parses args into fs. -h, -help or --help (before any "--") prints fs's usage on
// stdout and returns errHelp; a flag it cannot parse returns errUsage, after fs printed why.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if adapters.WantsHelp(args) {
		fs.SetOutput(stdout)
		fs.Usage()
		return errHelp
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return errHelp
		}
		return errUsage
	}
	return nil
}

// parseFlags is parseArgs that also refuses positional arguments.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	if err := parseArgs(fs, args, stdout); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return errUsage
	}
	return nil
}

// urlFlag declares --url on a client command's flags.
func urlFlag(fs *flag.FlagSet) *string {
	return fs.String("url", "", "the sidecar's URL (default: $HEIRLOOM_URL, else where the configuration says it listens: $HEIRLOOM_LISTEN, the config file's listen, "+adapters.DefaultSidecarURL+")")
}

// sidecar returns a client of the running sidecar's API. Its URL is flagURL when set, else
// HEIRLOOM_URL, else the address the server's own configuration listens on (HEIRLOOM_LISTEN,
// the config file's listen, as `heirloom serve` reads them; a wildcard address is reached on
// loopback); its token is HEIRLOOM_TOKEN, else the configuration's. A configuration that does
// not load is reported, as serve would report it, unless the URL and token are given.
func sidecar(env []string, flagURL string) (*proxy.Client, error) {
	c := &proxy.Client{URL: firstNonEmpty(flagURL, lookup(env, "HEIRLOOM_URL", "")), Token: lookup(env, "HEIRLOOM_TOKEN", ""), Timeout: 5 * time.Second}
	if c.URL != "" && c.Token != "" {
		return c, nil
	}
	loaded, err := loadClientConfig(env)
	if err != nil {
		if c.URL != "" {
			return c, nil // the address is given; a broken config file is serve's to report
		}
		return nil, fmt.Errorf("finding the sidecar: %w (or give --url, or set HEIRLOOM_URL)", err)
	}
	if c.URL == "" {
		c.URL = listenURL(loaded.Config.Listen)
	}
	if c.Token == "" {
		c.Token = loaded.Config.Token
	}
	return c, nil
}

// loadClientConfig loads the configuration as serve does without flags: defaults, the config
// file (HEIRLOOM_CONFIG, else the default path, skipped when absent) and the environment.
func loadClientConfig(env []string) (*config.Loaded, error) {
	home, _ := os.UserHomeDir()
	in := config.Input{Home: home, Env: env}
	if p := lookup(env, "HEIRLOOM_CONFIG", ""); p != "" {
		in.ConfigPath, in.ConfigRequired = p, true
	} else {
		in.ConfigPath = filepath.Join(lookup(env, "XDG_CONFIG_HOME", filepath.Join(home, ".config")), "heirloom", "config.yaml")
	}
	return config.Load(in)
}

// listenURL is the URL a client reaches a server listening on addr at: a wildcard or empty
// host is reached on loopback.
func listenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return adapters.DefaultSidecarURL
	}
	switch host {
	case "", "0.0.0.0":
		host = "127.0.0.1"
	case "::":
		host = "::1"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// resolveSession returns the full key of the session key names in scope: key itself when a
// session has it, else the one session whose id key shortens (the ID column of `heirloom
// sessions`) or starts. None, or several, is an error saying so.
func resolveSession(ctx context.Context, client *proxy.Client, key, scope string) (string, error) {
	q := url.Values{}
	setIf(q, "scope", scope)
	_, err := client.Get(ctx, "/api/sessions/"+url.PathEscape(key), q, nil)
	var apiErr *proxy.Error
	switch {
	case err == nil:
		return key, nil
	case !errors.As(err, &apiErr) || apiErr.Code != proxy.ECodeNotFound:
		return "", explain(err)
	}
	full, err := matchShort(key, "session", func(prefix string) ([]string, error) {
		q := url.Values{"prefix": {prefix}, "limit": {strconv.Itoa(prefixLimit)}}
		setIf(q, "scope", scope)
		var list proxy.SessionsReply
		if _, err := client.Get(ctx, "/api/sessions", q, &list); err != nil {
			return nil, explain(err)
		}
		ids := make([]string, 0, len(list.Sessions))
		for _, s := range list.Sessions {
			ids = append(ids, s.ID)
		}
		return ids, nil
	})
	var nf *notFoundError
	if errors.As(err, &nf) && scope == "" {
		nf.hint = " (in the configured scope; OpenClaw sessions are in their agent's: --scope main)"
	}
	return full, err
}

// resolveSessionFlag resolves a filter's session key in place when it is set (see
// resolveSession). A key no stored session has or shortens is kept as given: a filter may name a
// session heirloom did not store (a run's parent it never saw), or one not started yet (watch).
func resolveSessionFlag(ctx context.Context, client *proxy.Client, key *string, scope string) error {
	if *key == "" {
		return nil
	}
	full, err := resolveSession(ctx, client, *key, scope)
	var nf *notFoundError
	switch {
	case errors.As(err, &nf):
		return nil
	case err != nil:
		return err
	}
	*key = full
	return nil
}

// notFoundError is a key that names no record, as given or shortened.
type notFoundError struct {
	what, id string
	hint     string
}

func (e *notFoundError) Error() string { return fmt.Sprintf("%s %s not found%s", e.what, e.id, e.hint) }

// matchShort finds the one id that short shortens (shortID) or starts, among those list gives
// for a prefix: short itself, and when none matches and the table may have shortened a part
// before the last, what every such id starts with (searchPrefix). what names the kind of record
// in errors.
func matchShort(short, what string, list func(prefix string) ([]string, error)) (string, error) {
	var found []string
	for _, prefix := range slices.Compact([]string{short, searchPrefix(short)}) {
		ids, err := list(prefix)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			if strings.HasPrefix(id, short) || shortID(id) == short {
				found = append(found, id)
			}
		}
		if len(found) > 0 {
			break
		}
	}
	switch len(found) {
	case 0:
		return "", &notFoundError{what: what, id: short}
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s names %d %ss (%s): give more of its id", short, len(found), what, strings.Join(found, ", "))
}
