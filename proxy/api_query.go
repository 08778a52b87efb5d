package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/heirloom-dev/heirloom/adapters"
	"github.com/heirloom-dev/heirloom/kv"
)

// Limits on how many records one API reply lists.
const (
	defaultListLimit       = 100  // sessions and runs, when no limit is given
	defaultTranscriptLimit = 200  // turns, when no limit is given
	maxLimit               = 1000 // the most any list reply holds
)

// params are a request's query parameters: each known, given at most once, valid UTF-8 without
// NUL. An empty value counts as not given.
type params map[string]string

// parseParams reads r's query, allowing only the names listed. Anything else is a 400 invalid
// error naming the parameter.
func parseParams(r *http.Request, allowed ...string) (params, error) {
	vals, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, Errorf(ECodeInvalid, "query: "+err.Error())
	}
	return parseValues(vals, allowed...)
}

// parseValues is parseParams over a parsed query, for a route that takes some parameter more
// than once and removes it from vals first (GET /api/events' type).
func parseValues(vals url.Values, allowed ...string) (params, error) {
	names := make([]string, 0, len(vals))
	for name := range vals {
		names = append(names, name)
	}
	slices.Sort(names)
	p := params{}
	for _, name := range names {
		vs := vals[name]
		switch {
		case !slices.Contains(allowed, name):
			return nil, Errorf(ECodeInvalid, fmt.Sprintf("unknown parameter %q: want one of %s", name, strings.Join(allowed, ", ")))
		case len(vs) > 1:
			return nil, Errorf(ECodeInvalid, fmt.Sprintf("%s: given %d times, want once", name, len(vs)))
		case !utf8.ValidString(vs[0]) || strings.ContainsRune(vs[0], 0):
			return nil, Errorf(ECodeInvalid, name+": not valid text")
		}
		p[name] = vs[0]
	}
	return p, nil
}

// scope returns the scope parameter, or def when it is not given.
func (p params) scope(def string) string {
	if v := p["scope"]; v != "" {
		return v
	}
	return def
}

// limit returns the limit parameter, def when it is not given, or a 400 unless it is a whole
// number from 1 to maxLimit.
func (p params) limit(def int) (int, error) {
	v, ok := p["limit"]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > maxLimit {
		return 0, Errorf(ECodeInvalid, fmt.Sprintf("limit: got %q, want a whole number from 1 to %d", v, maxLimit))
	}
	return n, nil
}

// seq returns the named parameter as a transcript position, 0 when not given.
func (p params) seq(name string) (uint64, error) {
	v := p[name]
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return 0, Errorf(ECodeInvalid, fmt.Sprintf("%s: got %q, want a turn number from 0", name, v))
	}
	return n, nil
}

// bool returns the named parameter as true or false (false when not given).
func (p params) bool(name string) (bool, error) {
	v := p[name]
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, Errorf(ECodeInvalid, fmt.Sprintf("%s: got %q, want true or false", name, v))
	}
	return b, nil
}

// oneOf returns the named parameter ("" when not given), or a 400 unless it is one of values.
func (p params) oneOf(name string, values ...string) (string, error) {
	v := p[name]
	if v != "" && !slices.Contains(values, v) {
		return "", Errorf(ECodeInvalid, fmt.Sprintf("%s: got %q, want one of %s", name, v, strings.Join(values, ", ")))
	}
	return v, nil
}

// pathKey returns the {key} path value: a session id, or a 400 when it cannot be one.
func pathKey(r *http.Request) (string, error) {
	key := r.PathValue("key")
	if key == "" || !utf8.ValidString(key) || strings.ContainsRune(key, 0) {
		return "", Errorf(ECodeInvalid, "session key: not valid text")
	}
	return key, nil
}

// harnessParam returns the harness parameter: "" when not given, else one of
// adapters.KnownHarnesses, or a 400 naming them (a filter on a harness heirloom does not know
// would match nothing, silently).
func (s *Server) harnessParam(p params) (string, error) {
	return checkHarness(p["harness"], "harness")
}

// checkHarness returns name when it is "" or one of adapters.KnownHarnesses, else a 400 for
// field.
func checkHarness(name, field string) (string, error) {
	if name != "" && !slices.Contains(adapters.KnownHarnesses, name) {
		return "", Errorf(ECodeInvalid, fmt.Sprintf("%s: got %q, want one of %s", field, name, strings.Join(adapters.KnownHarnesses, ", ")))
	}
	return name, nil
}

// runStatuses are heirloom's own words for a run's status. A runs filter takes them, and the
// words a harness reported for a finished run (kept as given) when some run has one.
var runStatuses = []string{kv.RunPending, kv.RunRunning, kv.RunCompleted, kv.RunFailed, kv.RunInterrupted, kv.RunRefused}
