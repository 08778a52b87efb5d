package openclaw

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
)

// jsonObject is a JSON object that keeps its keys in order, so a config file is rewritten with
// its settings where they were.
type jsonObject struct {
	keys []string
	vals map[string]any // nil, bool, json.Number, string, []any, *jsonObject
}

func newJSONObject() *jsonObject { return &jsonObject{vals: map[string]any{}} }

// map1 returns an object with one key.
func map1(k string, v any) *jsonObject {
	o := newJSONObject()
	o.set(k, v)
	return o
}

func (o *jsonObject) has(k string) bool { _, ok := o.vals[k]; return ok }

func (o *jsonObject) get(k string) (any, bool) { v, ok := o.vals[k]; return v, ok }

// set replaces k's value in place, or appends k.
func (o *jsonObject) set(k string, v any) {
	if _, ok := o.vals[k]; !ok {
		o.keys = append(o.keys, k)
	}
	o.vals[k] = v
}

// parseJSON decodes one strict-JSON value, objects as *jsonObject and numbers as json.Number.
// A repeated key keeps its first position and its last value, as JavaScript does.
func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := parseJSONValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the top-level value")
	}
	return v, nil
}

func parseJSONValue(dec *json.Decoder) (any, error) {
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
		o := newJSONObject()
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, _ := kt.(string)
			v, err := parseJSONValue(dec)
			if err != nil {
				return nil, err
			}
			o.set(k, v)
		}
		_, err := dec.Token()
		return o, err
	case '[':
		list := []any{}
		for dec.More() {
			v, err := parseJSONValue(dec)
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

// encodeJSON encodes v; indent "" means compact.
func encodeJSON(v any, indent string) []byte {
	var b bytes.Buffer
	encodeJSONValue(&b, v, indent, 0)
	return b.Bytes()
}

func encodeJSONValue(b *bytes.Buffer, v any, indent string, depth int) {
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
	case *jsonObject:
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
			encodeJSONString(b, k)
			b.WriteString(colon)
			encodeJSONValue(b, x.vals[k], indent, depth+1)
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
			encodeJSONValue(b, e, indent, depth+1)
		}
		newline(depth)
		b.WriteByte(']')
	case string:
		encodeJSONString(b, x)
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
	default: // not produced by parseJSON; encoded as encoding/json would
		enc, _ := json.Marshal(x)
		b.Write(enc)
	}
}

// encodeJSONString writes s as a JSON string without HTML escaping (URLs keep their '&').
func encodeJSONString(b *bytes.Buffer, s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s)
	b.Write(bytes.TrimSuffix(sb.Bytes(), []byte("\n")))
}

// indentPattern finds the indentation of a file's first indented line.
var indentPattern = regexp.MustCompile(`\n([ \t]+)\S`)

// detectIndent returns the indentation unit a JSON text uses, "  " when it shows none.
func detectIndent(text []byte) string {
	if m := indentPattern.FindSubmatch(text); m != nil {
		return string(m[1])
	}
	return "  "
}
