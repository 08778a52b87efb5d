package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/knadh/koanf/providers/confmap"
	"github.com/knadh/koanf/v2"
)

// Input is everything Load reads. Load touches no process state: the caller
// passes the environment and flags in.
type Input struct {
	// Home is the user's home directory, for defaults and "~/" expansion.
	// Empty leaves "~/" paths unexpanded, which Validate rejects.
	Home string

	// Env holds "KEY=VALUE" pairs, as os.Environ returns them. XDG_DATA_HOME
	// picks the default data directory. HEIRLOOM_<KEY> sets a key, written
	// upper-case with "__" for each "." (HEIRLOOM_LOG__LEVEL is log.level);
	// lists are comma-separated. HEIRLOOM_URL, HEIRLOOM_HOOK_TIMEOUT and
	// HEIRLOOM_CONFIG belong to other parts of the program and are ignored;
	// any other HEIRLOOM_* variable that names no key is an error.
	Env []string

	// ConfigPath is the YAML file to read. Empty means none.
	ConfigPath string

	// ConfigRequired is true when the user named the file (--config or
	// HEIRLOOM_CONFIG): then a missing file is an error. When false, a
	// missing file is skipped; any other read error is still an error.
	ConfigRequired bool

	// Flags maps configuration keys (e.g. "log.level") to the values of the
	// flags the user actually set, as typed. Flags are named by FlagName.
	Flags map[string]string
}

// Loaded is a loaded and validated configuration.
type Loaded struct {
	// Config is the effective configuration.
	Config Config

	// Origins maps every key to where its effective value came from:
	// "default", "file <path>", "env HEIRLOOM_X" or "flag --x".
	Origins map[string]string
}

// Load builds the configuration from built-in defaults, then the YAML file,
// then HEIRLOOM_* variables, then flags, each overriding the one before, and
// validates the result. "~/" at the start of data_dir and of each transcript
// root is expanded to in.Home.
//
// Errors are *Error values, several joined with errors.Join when more than
// one key is wrong; each names the key, its source and the bad value. A
// missing required file unwraps to fs.ErrNotExist.
func Load(in Input) (*Loaded, error) {
	def := Default(in.Home, lookupEnv(in.Env, "XDG_DATA_HOME"))
	var errs []error

	file, err := readFile(in.ConfigPath, in.ConfigRequired)
	if err != nil {
		errs = append(errs, err)
	}
	env, envErrs := envSource(in.Env)
	errs = append(errs, envErrs...)
	flags, flagErrs := flagSource(in.Flags)
	errs = append(errs, flagErrs...)
	if len(errs) > 0 {
		return nil, join(errs)
	}

	k := koanf.New(".")
	origins := make(map[string]string, len(keys.leaves))
	if err := k.Load(confmap.Provider(flatten(&def), "."), nil); err != nil {
		return nil, fmt.Errorf("config: load defaults: %w", err)
	}
	for _, l := range keys.leaves {
		origins[l.key] = "default"
	}
	for _, src := range []source{file, env, flags} {
		if err := k.Load(confmap.Provider(src.values, "."), nil); err != nil {
			return nil, fmt.Errorf("config: merge: %w", err)
		}
		for key, o := range src.origins {
			origins[key] = o
		}
	}

	var c Config
	if err := unmarshal(k, &c); err != nil {
		return nil, fmt.Errorf("config: decode merged configuration: %w", err)
	}
	c.DataDir = expandHome(c.DataDir, in.Home)
	// hook_read_bytes came after max_read_bytes, which configs written before it may have set
	// below its default: when only max_read_bytes is given, a hook reads at most that.
	cc := &c.Adapters.ClaudeCode
	if origins["adapters.claude_code.hook_read_bytes"] == "default" && cc.MaxReadBytes > 0 && cc.MaxReadBytes < cc.HookReadBytes {
		cc.HookReadBytes = cc.MaxReadBytes
		origins["adapters.claude_code.hook_read_bytes"] = "default, lowered to max_read_bytes"
	}
	for _, roots := range [][]string{c.Adapters.ClaudeCode.TranscriptRoots, c.Adapters.Codex.TranscriptRoots} {
		for i := range roots {
			roots[i] = expandHome(roots[i], in.Home)
		}
	}

	if problems := c.problems(); len(problems) > 0 {
		errs := make([]error, len(problems))
		for i, p := range problems {
			if o := origins[p.Key]; o != "default" {
				p.Source = o
			}
			errs[i] = p
		}
		return nil, join(errs)
	}
	return &Loaded{Config: c, Origins: origins}, nil
}

// readFile reads, parses and checks the file at path. A missing file is an
// empty source unless required. The error is an *Error or several joined.
func readFile(path string, required bool) (source, error) {
	if path == "" {
		return source{}, nil
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) && !required {
		return source{}, nil
	} else if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return source{}, &Error{Source: "file " + path, Err: err}
	}
	src, errs := parseFile(data, path)
	if len(errs) > 0 {
		return source{}, join(errs)
	}
	return src, nil
}

// flagSource checks the flags the user set.
func flagSource(flags map[string]string) (source, []error) {
	flat := make(map[string]any, len(flags))
	for key, v := range flags {
		flat[key] = v
	}
	return check(flat, func(key string) string { return "flag --" + FlagName(key) })
}

// lookupEnv returns the value of the first name=value pair in env, like
// os.Getenv.
func lookupEnv(env []string, name string) string {
	for _, kv := range env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// join returns the only error of errs as it is, or all of them joined.
func join(errs []error) error {
	if len(errs) == 1 {
		return errs[0]
	}
	return errors.Join(errs...)
}
