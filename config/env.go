package config

import (
	"sort"
	"strings"

	"github.com/knadh/koanf/providers/env/v2"
)

// envPrefix starts every variable that sets a configuration key.
const envPrefix = "HEIRLOOM_"

// ignoredEnv are HEIRLOOM_* variables that other parts of the program read
// (the hook shim, the command line); they set no configuration key.
var ignoredEnv = map[string]bool{
	"HEIRLOOM_URL":               true,
	"HEIRLOOM_HOOK_TIMEOUT":      true,
	"HEIRLOOM_UPSTREAM_TIMEOUT":  true, // the shim's wrapped-command timeout
	"HEIRLOOM_MAX_CONTEXT_CHARS": true, // the shim's cap on a merged reply
	"HEIRLOOM_CONFIG":            true,
}

// envSource reads the HEIRLOOM_* variables of environ. A variable must be
// the exact upper-case form of a key (see envName); any other, apart from
// ignoredEnv, is an error naming it.
func envSource(environ []string) (source, []error) {
	vars, _ := env.Provider("", env.Opt{ // Read of an env provider never fails.
		Prefix: envPrefix,
		TransformFunc: func(name, value string) (string, any) {
			if ignoredEnv[name] {
				return "", nil
			}
			return name, value
		},
		EnvironFunc: func() []string { return environ },
	}).Read()

	names := make([]string, 0, len(vars))
	for name := range vars {
		names = append(names, name)
	}
	sort.Strings(names)

	var errs []error
	flat := make(map[string]any, len(vars))
	byKey := make(map[string]string, len(vars))
	for _, name := range names {
		key := strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, envPrefix)), "__", ".")
		if _, below := keys.leafAbove(key); below || envName(key) != name {
			// A map is set whole (HEIRLOOM_..._HEADERS="A=1,B=2"), never entry by entry.
			errs = append(errs, &Error{Source: "env " + name, Err: ErrUnknownKey})
			continue
		}
		flat[key] = vars[name]
		byKey[key] = name
	}
	src, checkErrs := check(flat, func(key string) string { return "env " + byKey[key] })
	return src, append(errs, checkErrs...)
}
