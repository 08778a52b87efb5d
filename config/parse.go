package config

import (
	"github.com/knadh/koanf/parsers/yaml"
	"github.com/knadh/koanf/providers/rawbytes"
	"github.com/knadh/koanf/v2"
)

// Parse parses the bytes of a YAML configuration file and returns its values
// by dotted key, e.g. "log.level". name (the file's path) names the source in
// errors. Every key must be a configuration key and every value must fit its
// field; a key with no value (null) is left out, as if it were absent. An
// empty document yields an empty map.
//
// Errors are *Error values, joined when there are several.
func Parse(data []byte, name string) (map[string]any, error) {
	src, errs := parseFile(data, name)
	if len(errs) > 0 {
		return nil, join(errs)
	}
	return src.values, nil
}

// parseFile parses and checks a YAML file's bytes; name is its path.
func parseFile(data []byte, name string) (source, []error) {
	origin := "file " + name
	k := koanf.New(".")
	if err := k.Load(rawbytes.Provider(data), yamlParser{}); err != nil {
		return source{}, []error{&Error{Source: origin, Err: err}}
	}
	return check(k.All(), func(string) string { return origin })
}

// yamlParser is koanf's YAML parser with nesting cut below the deepest key.
type yamlParser struct{}

// Unmarshal parses b and replaces every mapping nested as deep as the longest
// key with a one-entry stand-in. Such a mapping is the value of a key at
// least that long, so it is an error under that key whatever it holds;
// cutting it keeps koanf's key indexing, which is quadratic in depth, cheap
// on hostile input.
func (yamlParser) Unmarshal(b []byte) (map[string]any, error) {
	m, err := yaml.Parser().Unmarshal(b)
	if err != nil {
		return nil, err
	}
	for k, v := range m {
		m[k] = cut(v, 1)
	}
	return m, nil
}

// Marshal is not used; it is here to satisfy koanf.Parser.
func (yamlParser) Marshal(m map[string]any) ([]byte, error) { return yaml.Parser().Marshal(m) }

// cut returns v, a value depth levels below the document, with the mappings
// as deep as the longest key (or deeper) replaced by a stand-in.
func cut(v any, depth int) any {
	switch m := v.(type) {
	case map[string]any:
		if depth >= keys.depth {
			return map[string]any{"-": true}
		}
		for k, x := range m {
			m[k] = cut(x, depth+1)
		}
	case map[any]any:
		if depth >= keys.depth {
			return map[string]any{"-": true}
		}
		for k, x := range m {
			m[k] = cut(x, depth+1)
		}
	}
	return v
}
