package config

import (
	"errors"
	"maps"
	"math"
	"reflect"
	"sort"
	"strings"
	"time"

	"github.com/go-viper/mapstructure/v2"
	"github.com/knadh/koanf/v2"
)

// source is one layer's values, already checked against the schema.
type source struct {
	values  map[string]any    // leaf key → value
	origins map[string]string // leaf key → "file <path>", "env HEIRLOOM_X" or "flag --x"
}

// check keeps the entries of flat (values by dotted key) that name a leaf and
// decode into its field, and returns an *Error for every other entry. origin
// names the source of a key. A known key or section with a nil value (a YAML
// key with no value) and an empty section are dropped: they leave the keys at
// the lower layer's values. An unknown key is an error whatever its value.
func check(flat map[string]any, origin func(key string) string) (source, []error) {
	src := source{values: make(map[string]any), origins: make(map[string]string)}
	var errs []error
	reported := make(map[string]bool)
	flat = groupMaps(flat)
	names := make([]string, 0, len(flat))
	for key := range flat {
		names = append(names, key)
	}
	sort.Strings(names)
	for _, key := range names {
		v := flat[key]
		if l, ok := keys.byKey[key]; ok {
			if v == nil {
				continue
			}
			if err := decodeOne(key, v); err != nil {
				e := typeError(l, v, origin(key))
				if l.typ == reflect.SliceOf(serverType) {
					// Say which item field is wrong; the list itself is not shown (passwords).
					e.Value, e.Msg = nil, "is not "+typeName(l.typ)+": "+err.Error()
				}
				errs = append(errs, e)
				continue
			}
			src.values[key] = v
			src.origins[key] = origin(key)
			continue
		}
		if keys.sections[key] {
			if !absent(v) {
				errs = append(errs, &Error{Key: key, Source: origin(key), Value: v, Msg: "is not a mapping"})
			}
			continue
		}
		if above, ok := keys.leafAbove(key); ok {
			if !reported[above] {
				reported[above] = true
				errs = append(errs, typeError(keys.byKey[above], map[string]any{}, origin(key)))
			}
			continue
		}
		unknown := keys.unknownRoot(key)
		if !reported[unknown] {
			reported[unknown] = true
			errs = append(errs, &Error{Key: unknown, Source: origin(key), Err: ErrUnknownKey})
		}
	}
	return src, errs
}

// groupMaps returns flat with the entries below a map-typed leaf (koanf
// flattens "headers: {X-A: b}" to "...headers.X-A") gathered back into one
// map value under the leaf's key. An entry whose name holds a "." (a nested
// mapping) is left alone, so check reports it as a type error of the leaf.
func groupMaps(flat map[string]any) map[string]any {
	var out map[string]any
	for key, v := range flat {
		above, ok := keys.leafAbove(key)
		if !ok || keys.byKey[above].typ.Kind() != reflect.Map {
			continue
		}
		name := key[len(above)+1:]
		if strings.Contains(name, ".") {
			continue
		}
		if out == nil {
			out = maps.Clone(flat)
		}
		delete(out, key)
		m, _ := out[above].(map[string]any)
		if m == nil {
			m = make(map[string]any)
			out[above] = m
		}
		m[name] = v
	}
	if out == nil {
		return flat
	}
	return out
}

// absent reports whether a section's value sets nothing: null or {}.
func absent(v any) bool {
	m, ok := v.(map[string]any)
	return v == nil || ok && len(m) == 0
}

// decodeOne decodes a single value into a zero Config through the same path
// Load uses for the merged tree.
func decodeOne(key string, v any) error {
	k := koanf.New(".")
	if err := k.Set(key, v); err != nil {
		return err
	}
	var c Config
	return unmarshal(k, &c)
}

// typeError reports that v does not fit the field of l. The token's value is
// never included.
func typeError(l leaf, v any, source string) *Error {
	e := &Error{Key: l.key, Source: source, Value: v, Msg: "is not " + typeName(l.typ)}
	if secret[l.key] {
		e.Value, e.Msg = nil, "value is not "+typeName(l.typ)
	}
	return e
}

// typeName describes what a field of type t accepts.
func typeName(t reflect.Type) string {
	switch {
	case t == durationType:
		return `a duration such as "1500ms"`
	case t.Kind() == reflect.String:
		return "a string"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		return "an integer"
	case t.Kind() == reflect.Bool:
		return "a boolean (true or false)"
	case t == headersType:
		return "a mapping of header names to strings"
	case t == reflect.SliceOf(serverType):
		return "a list of servers, each a URL or {url, password, directory}"
	case t.Kind() == reflect.Slice:
		return "a list of strings"
	default:
		return "a " + t.String()
	}
}

// unmarshal decodes k into c strictly: keys must match a koanf tag exactly,
// unused keys are errors, and the only conversions are the hooks below.
func unmarshal(k *koanf.Koanf, c *Config) error {
	return k.UnmarshalWithConf("", c, koanf.UnmarshalConf{DecoderConfig: &mapstructure.DecoderConfig{
		// A custom DecoderConfig replaces koanf's default hooks, so the
		// duration hook is added back here.
		DecodeHook: mapstructure.ComposeDecodeHookFunc(
			strictHook,
			mapstructure.StringToTimeDurationHookFunc(),
			listHook,
			serversHook,
			headersHook,
			mapstructure.StringToIntHookFunc(),
			mapstructure.StringToInt64HookFunc(),
			mapstructure.StringToBoolHookFunc(),
		),
		ErrorUnused: true,
		MatchName:   func(mapKey, fieldName string) bool { return mapKey == fieldName },
		TagName:     "koanf",
	}})
}

var durationType = reflect.TypeFor[time.Duration]()

// strictHook refuses the conversions mapstructure would otherwise make
// silently: a bare number as a duration (it would mean nanoseconds), a
// fractional or out-of-range number as an integer.
func strictHook(from, to reflect.Type, data any) (any, error) {
	switch {
	case to == durationType:
		if from.Kind() != reflect.String && from != durationType {
			return nil, errors.New("a duration must be a string such as \"1500ms\"")
		}
	case to.Kind() == reflect.Int || to.Kind() == reflect.Int64:
		switch from.Kind() {
		case reflect.Float32, reflect.Float64:
			f := reflect.ValueOf(data).Float()
			if f != math.Trunc(f) || f < math.MinInt64 || f >= math.MaxInt64 {
				return nil, errors.New("not an integer")
			}
			return int64(f), nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			if reflect.ValueOf(data).Uint() > math.MaxInt64 {
				return nil, errors.New("integer out of range")
			}
		}
	}
	return data, nil
}

// listHook splits a string into a list on commas, trimming spaces around
// each item, so HEIRLOOM_ADAPTERS__CLAUDE_CODE__TRANSCRIPT_ROOTS="/a, /b"
// is ["/a", "/b"]. An empty string is an empty list.
func listHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to != reflect.TypeFor[[]string]() {
		return data, nil
	}
	s := reflect.ValueOf(data).String()
	if strings.TrimSpace(s) == "" {
		return []string{}, nil
	}
	items := strings.Split(s, ",")
	for i := range items {
		items[i] = strings.TrimSpace(items[i])
	}
	return items, nil
}

var serverType = reflect.TypeFor[OpenCodeServer]()

// serversHook lets an OpenCode server be given by its URL alone: a string item in a file's list,
// or a comma-separated list of URLs in HEIRLOOM_ADAPTERS__OPENCODE__SERVERS.
func serversHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String {
		return data, nil
	}
	s := strings.TrimSpace(reflect.ValueOf(data).String())
	switch to {
	case serverType:
		return map[string]any{"url": s}, nil
	case reflect.SliceOf(serverType):
		var out []map[string]any
		for _, u := range strings.Split(s, ",") {
			if u = strings.TrimSpace(u); u != "" {
				out = append(out, map[string]any{"url": u})
			}
		}
		return out, nil
	}
	return data, nil
}

var headersType = reflect.TypeFor[map[string]string]()

// headersHook reads a string as comma-separated Name=value pairs, so
// HEIRLOOM_ADAPTERS__CLAUDE_CODE__UPSTREAM__HEADERS="X-A=1, X-B=2" is
// {X-A: 1, X-B: 2}. A value keeps any "=" after the first. An empty string is
// an empty mapping.
func headersHook(from, to reflect.Type, data any) (any, error) {
	if from.Kind() != reflect.String || to != headersType {
		return data, nil
	}
	out := map[string]string{}
	for _, pair := range strings.Split(reflect.ValueOf(data).String(), ",") {
		if strings.TrimSpace(pair) == "" {
			continue
		}
		name, value, ok := strings.Cut(pair, "=")
		if !ok || strings.TrimSpace(name) == "" {
			return nil, errors.New("not a list of Name=value pairs")
		}
		out[strings.TrimSpace(name)] = strings.TrimSpace(value)
	}
	return out, nil
}
