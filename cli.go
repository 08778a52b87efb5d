package main

import (
	"bytes"
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
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/config"
	"github.com/heirloom-dev/heirloom/proxy"
)

// The habits every subcommand shares: -h and --help print its usage on stdout and exit 0; a
// mistake prints why on stderr and exits 2; a client command finds the sidecar where the server
// listens (see sidecar) and takes --url; a session key may be the short id `heirloom sessions`
// shows (see resolveSession).

// parseArgs parses args into fs. -h, -help or --help as a flag (not a flag's value, nor after
// "--") prints fs's usage on stdout and returns errHelp; a flag it cannot parse returns
// errUsage, after fs printed why on its output.
func parseArgs(fs *flag.FlagSet, args []string, stdout io.Writer) error {
	out := fs.Output()
	var said bytes.Buffer
	fs.SetOutput(&said)
	err := fs.Parse(args)
	fs.SetOutput(out)
	switch {
	case errors.Is(err, flag.ErrHelp):
		_, _ = stdout.Write(said.Bytes())
		return errHelp
	case err != nil:
		_, _ = out.Write(said.Bytes())
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

// parseKeyArgs parses a command line of flags, one session KEY, then more flags, and returns
// KEY; none is a mistake, said on fs's output.
func parseKeyArgs(fs *flag.FlagSet, args []string, stdout io.Writer) (string, error) {
	if err := parseArgs(fs, args, stdout); err != nil {
		return "", err
	}
	if fs.NArg() == 0 {
		fmt.Fprintf(fs.Output(), "%s: session KEY required\n", fs.Name())
		return "", errUsage
	}
	key := fs.Arg(0)
	return key, parseFlags(fs, fs.Args()[1:], stdout) // flags after KEY
}

// urlFlag declares --url on a client command's flags.
func urlFlag(fs *flag.FlagSet) *string {
	return fs.String("url", "", "the sidecar's URL (default: $HEIRLOOM_URL, else where the configuration says it listens: $HEIRLOOM_LISTEN, the config file's listen, "+adapters.DefaultSidecarURL+")")
}

// sidecar returns a client of the running sidecar's API. Its URL is flagURL when set, else
// HEIRLOOM_URL, else the address the server's own configuration listens on (HEIRLOOM_LISTEN,
// the config file's listen, as `heirloom serve` reads them; a wildcard address is reached on
// loopback), else the default. Its token is HEIRLOOM_TOKEN, else the configuration's, which goes
// only to the address the configuration names or to loopback. A configuration that does not
// load (a harness may start `heirloom mcp` with no HOME) leaves the defaults: doctor says why.
func sidecar(env []string, flagURL string) *proxy.Client {
	c := &proxy.Client{URL: firstNonEmpty(flagURL, lookup(env, "HEIRLOOM_URL", "")), Token: lookup(env, "HEIRLOOM_TOKEN", ""), Timeout: 5 * time.Second}
	if c.URL != "" && c.Token != "" {
		return c
	}
	given := c.URL != ""
	var cfgListen, cfgToken string
	if loaded, err := loadClientConfig(env); err == nil {
		cfgListen, cfgToken = loaded.Config.Listen, loaded.Config.Token
	} else {
		cfgListen = lookup(env, "HEIRLOOM_LISTEN", "")
	}
	if c.URL == "" {
		c.URL = adapters.DefaultSidecarURL
		if cfgListen != "" {
			c.URL = listenURL(cfgListen)
		}
	}
	if c.Token == "" && cfgToken != "" && (!given || loopbackURL(c.URL)) {
		c.Token = cfgToken
	}
	return c
}

// loopbackURL reports whether u's host is a loopback address (or localhost).
func loopbackURL(u string) bool {
	p, err := url.Parse(u)
	if err != nil {
		return false
	}
	host := p.Hostname()
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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

// minPrefix is the shortest start of an id taken for the id: a shorter one would name a record
// by a letter or two (and `sessions delete x` delete one).
const minPrefix = 6

// matchShort finds the one id that short shortens (shortID: the ID column of the tables) or
// starts (minPrefix characters at least), among those list gives for a prefix: short itself,
// and when none matches and the table may have shortened a part before the last, what every
// such id starts with (searchPrefix). An id short shortens to exactly wins over ids short only
// starts: a session's short id starts its sub-agents' ids too. what names the kind of record in
// errors.
func matchShort(short, what string, list func(prefix string) ([]string, error)) (string, error) {
	var exact, starts []string
	for _, prefix := range slices.Compact([]string{short, searchPrefix(short)}) {
		ids, err := list(prefix)
		if err != nil {
			return "", err
		}
		for _, id := range ids {
			switch {
			case shortID(id) == short:
				exact = append(exact, id)
			case strings.HasPrefix(id, short) && utf8.RuneCountInString(short) >= minPrefix:
				starts = append(starts, id)
			}
		}
		if len(exact)+len(starts) > 0 {
			break
		}
	}
	found := exact
	if len(found) == 0 {
		found = starts
	}
	switch len(found) {
	case 0:
		return "", &notFoundError{what: what, id: short}
	case 1:
		return found[0], nil
	}
	return "", fmt.Errorf("%s names %d %ss (%s): give more of its id", short, len(found), what, strings.Join(found, ", "))
}
