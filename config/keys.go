package config

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// leaf is one configuration key that holds a value.
type leaf struct {
	key   string       // dotted koanf key, e.g. "log.level"
	typ   reflect.Type // Go type of the field
	index []int        // field index path from Config
}

// schema describes the keys of Config, derived once from its koanf tags.
type schema struct {
	leaves   []leaf          // in declaration order
	byKey    map[string]leaf // leaves by key
	sections map[string]bool // keys that hold a nested mapping, e.g. "log"
	depth    int             // parts in the longest key
}

// keys is the schema of Config. It is read-only after package init.
var keys = newSchema()

func newSchema() *schema {
	s := &schema{byKey: make(map[string]leaf), sections: make(map[string]bool)}
	s.walk(reflect.TypeFor[Config](), "", nil)
	return s
}

func (s *schema) walk(t reflect.Type, prefix string, index []int) {
	for i := range t.NumField() {
		f := t.Field(i)
		key := prefix + f.Tag.Get("koanf")
		idx := append(append([]int(nil), index...), i)
		if f.Type.Kind() == reflect.Struct {
			s.sections[key] = true
			s.walk(f.Type, key+".", idx)
			continue
		}
		l := leaf{key: key, typ: f.Type, index: idx}
		s.leaves = append(s.leaves, l)
		s.byKey[key] = l
		s.depth = max(s.depth, len(idx))
		if f.Type.Kind() == reflect.Map {
			s.depth = max(s.depth, len(idx)+1) // a map's entries are one level below its key
		}
	}
}

// sortedKeys returns every leaf key in sorted order.
func (s *schema) sortedKeys() []string {
	out := make([]string, 0, len(s.leaves))
	for _, l := range s.leaves {
		out = append(out, l.key)
	}
	sort.Strings(out)
	return out
}

// leafAbove returns the leaf key that is a proper prefix of key, as for
// "listen.host" when a file gives listen a mapping.
func (s *schema) leafAbove(key string) (string, bool) {
	for i := strings.LastIndexByte(key, '.'); i > 0; i = strings.LastIndexByte(key[:i], '.') {
		if _, ok := s.byKey[key[:i]]; ok {
			return key[:i], true
		}
	}
	return "", false
}

// unknownRoot returns the shortest prefix of key that is neither a section
// nor a leaf, so a misspelt section is reported once, as "inherti" rather
// than "inherti.tail_chars".
func (s *schema) unknownRoot(key string) string {
	for i := strings.IndexByte(key, '.'); i >= 0; {
		if !s.sections[key[:i]] {
			return key[:i]
		}
		j := strings.IndexByte(key[i+1:], '.')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return key
}

// flatten returns every leaf of c by key. Slices and maps are copied.
func flatten(c *Config) map[string]any {
	v := reflect.ValueOf(c).Elem()
	out := make(map[string]any, len(keys.leaves))
	for _, l := range keys.leaves {
		x := v.FieldByIndex(l.index).Interface()
		switch xs := x.(type) {
		case []string:
			x = append([]string{}, xs...)
		case map[string]string:
			x = maps.Clone(xs)
		}
		out[l.key] = x
	}
	return out
}

// FlagName returns the command-line flag for a configuration key: dots and
// underscores become dashes, so "data_dir" is "data-dir" and "log.level" is
// "log-level". Register flags under these names so origins and errors name
// them as the user typed them.
func FlagName(key string) string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(key)
}

// envName returns the environment variable for a configuration key:
// HEIRLOOM_ plus the upper-cased key with "__" for each ".".
func envName(key string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(key, ".", "__"))
}

// formatValue renders a leaf value as a YAML scalar, flow list or flow
// mapping: strings and durations double-quoted, numbers and booleans bare, map
// entries sorted by name.
func formatValue(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	case time.Duration:
		return strconv.Quote(v.String())
	case int:
		return strconv.Itoa(v)
	case int64:
		return strconv.FormatInt(v, 10)
	case bool:
		return strconv.FormatBool(v)
	case []string:
		q := make([]string, len(v))
		for i, s := range v {
			q[i] = strconv.Quote(s)
		}
		return "[" + strings.Join(q, ", ") + "]"
	case map[string]string:
		names := slices.Sorted(maps.Keys(v))
		q := make([]string, len(names))
		for i, name := range names {
			q[i] = strconv.Quote(name) + ": " + strconv.Quote(v[name])
		}
		return "{" + strings.Join(q, ", ") + "}"
	case []OpenCodeServer:
		q := make([]string, len(v))
		for i, srv := range v {
			q[i] = "{url: " + strconv.Quote(srv.URL)
			if srv.Password != "" {
				q[i] += `, password: "(set)"`
			}
			if srv.Directory != "" {
				q[i] += ", directory: " + strconv.Quote(srv.Directory)
			}
			q[i] += "}"
		}
		return "[" + strings.Join(q, ", ") + "]"
	default:
		return fmt.Sprint(v)
	}
}
