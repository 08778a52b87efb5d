// Package jsonconfig edits harnesses' JSON configuration files the way a person would: keys
// stay in their order, the file keeps its indentation, a change is written atomically after a
// backup, and a file that is not strict JSON (comments, JSON5) is left alone for the caller to
// explain.
package jsonconfig

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Object is a JSON object that keeps its keys in order, so a config file is rewritten with
// its settings where they were. Make one with NewObject or Parse.
type Object struct {
	keys []string
	vals map[string]any // nil, bool, json.Number, string, []any, *Object, or any value encoding/json encodes
}

// NewObject returns an empty object.
func NewObject() *Object { return &Object{vals: map[string]any{}} }

// Object1 returns an object with one key.
func Object1(k string, v any) *Object {
	o := NewObject()
	o.Set(k, v)
	return o
}

// Has reports whether o has key k.
func (o *Object) Has(k string) bool { _, ok := o.vals[k]; return ok }

// Get returns k's value.
func (o *Object) Get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

// Set replaces k's value in place, or appends k.
func (o *Object) Set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// Delete removes k, keeping the other keys in order.
func (o *Object) Delete(k string) {
	if _, ok := o.vals[k]; !ok {
		return
	}
	delete(o.vals, k)
	o.keys = slices.DeleteFunc(o.keys, func(x string) bool { return x == k })
}

// Keys returns o's keys, in order.
func (o *Object) Keys() []string { return slices.Clone(o.keys) }

// Len is how many keys o has.
func (o *Object) Len() int { return len(o.keys) }

// Child returns parent[key] as an object, adding an empty one when it is absent or null; name
// is the key's path, for the error when the value is not an object.
func Child(parent *Object, key, name string) (*Object, error) {
	v, ok := parent.Get(key)
	if !ok || v == nil {
		o := NewObject()
		parent.Set(key, o)
		return o, nil
	}
	o, ok := v.(*Object)
	if !ok {
		return nil, fmt.Errorf("%s is not an object", name)
	}
	return o, nil
}

// Parse decodes one strict-JSON value, objects as *Object and numbers as json.Number.
// A repeated key keeps its first position and its last value, as JavaScript does.
func Parse(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return v, nil
}

func parseValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := NewObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			o.Set(k, v)
		}
		_, err := dec.Token()
		return o, err
	case '[':
		list := []any{}
		for dec.More() {
			v, err := parseValue(dec)
			if err != nil {
				return nil, err
			}
			list = append(list, v)
		}
		_, err := dec.Token()
		return list, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// Encode encodes v; indent "" means compact.
func Encode(v any, indent string) []byte {
	var b bytes.Buffer
	encodeValue(&b, v, indent, 0)
	return b.Bytes()
}

func encodeValue(b *bytes.Buffer, v any, indent string, depth int) {
	newline := func(d int) {
		if indent != "" {
			b.WriteByte('\n')
			b.WriteString(strings.Repeat(indent, d))
		}
	}
	colon := ":"
	if indent != "" {
		colon = ": "
	}
	switch x := v.(type) {
	case *Object:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		b.WriteByte('{')
		for i, k := range x.keys {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			encodeString(b, k)
			b.WriteString(colon)
			encodeValue(b, x.vals[k], indent, depth+1)
		}
		newline(depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			newline(depth + 1)
			encodeValue(b, e, indent, depth+1)
		}
		newline(depth)
		b.WriteByte(']')
	case string:
		encodeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		if x {
			b.WriteString("true")
		} else {
			b.WriteString("false")
		}
	case nil:
		b.WriteString("null")
	default: // not produced by Parse; encoded as encoding/json would
		enc, _ := json.Marshal(x)
		b.Write(enc)
	}
}

// encodeString writes s as a JSON string without HTML escaping (URLs keep their '&').
func encodeString(b *bytes.Buffer, s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimSuffix(sb.Bytes(), []byte("\n")))
}

// DetectIndent returns the indentation unit a JSON text uses: that of its first indented line
// with something on it, "  " when it shows none. (A scan, not a regexp: the hook process links
// this package, and a package-level regexp is compiled at every process start.)
func DetectIndent(text []byte) string {
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		n := 0
		for n < len(line) && (line[n] == ' ' || line[n] == '\t') {
			n++
		}
		if n > 0 && n < len(line) && line[n] != '\r' {
			return string(line[:n])
		}
	}
	return "  "
}
