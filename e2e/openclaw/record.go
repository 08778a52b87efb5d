package openclaw

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// RedactedKeys are the frame fields whose string values a recording never
// keeps: connect's auth.token and device.signature, hello-ok's device tokens,
// passwords.
var RedactedKeys = map[string]string{
	"token":          "<REDACTED-GATEWAY-TOKEN>",
	"deviceToken":    "<REDACTED-DEVICE-TOKEN>",
	"bootstrapToken": "<REDACTED-BOOTSTRAP-TOKEN>",
	"password":       "<REDACTED-PASSWORD>",
	"signature":      "<REDACTED-ED25519-SIG-base64url>",
	"recoveryScope":  "<REDACTED>",
}

// RecordingHome stands in for a Gateway's private HOME in recordings, as in
// ../shared/fixtures (its state dir becomes /home/dev/.openclaw).
const RecordingHome = "/home/dev"

// Redactions returns the literal strings a recording of g's frames must not
// keep, with what stands in for them: the Gateway token, and the private
// HOME (a temp dir of this machine).
func (g *Gateway) Redactions() map[string]string {
	return map[string]string{
		g.Token: RedactedKeys["token"],
		g.Home:  RecordingHome,
	}
}

// WriteRecording writes frames to path (creating its directory) as a JSON
// array, one frame a line, in the shape of
// ../shared/fixtures/openclaw/live/spawn.all-frames.json, after redacting
// them: the string values of RedactedKeys at any depth are replaced, and so
// is every occurrence of a key of replace in any string (longest first).
// Object keys come out sorted.
func WriteRecording(path string, frames []RecordedFrame, replace map[string]string) error {
	var buf bytes.Buffer
	buf.WriteString("[\n")
	for i, f := range frames {
		line, err := redactFrame(f, replace)
		if err != nil {
			return fmt.Errorf("frame %d: %w", i, err)
		}
		buf.Write(line)
		if i < len(frames)-1 {
			buf.WriteByte(',')
		}
		buf.WriteByte('\n')
	}
	buf.WriteString("]\n")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("create dir of %s: %w", path, err)
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// redactFrame returns f, redacted, as one line of JSON.
func redactFrame(f RecordedFrame, replace map[string]string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(f.Frame))
	dec.UseNumber()
	var frame any
	if err := dec.Decode(&frame); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	olds := make([]string, 0, len(replace))
	for k := range replace {
		if k != "" {
			olds = append(olds, k)
		}
	}
	slices.SortFunc(olds, func(a, b string) int { return cmp.Compare(len(b), len(a)) })
	pairs := make([]string, 0, 2*len(olds))
	for _, k := range olds {
		pairs = append(pairs, k, replace[k])
	}
	out := map[string]any{"dir": f.Dir, "t": f.T, "frame": redact(frame, strings.NewReplacer(pairs...))}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimRight(buf.Bytes(), "\n"), nil
}

// redact returns v with RedactedKeys' values replaced and r applied to every
// string.
func redact(v any, r *strings.Replacer) any {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok {
				if stand, secret := RedactedKeys[k]; secret && s != "" {
					x[k] = stand
					continue
				}
			}
			x[k] = redact(val, r)
		}
		return x
	case []any:
		for i := range x {
			x[i] = redact(x[i], r)
		}
		return x
	case string:
		return r.Replace(x)
	default:
		return v
	}
}

// ReadRecording reads a recording written by WriteRecording.
func ReadRecording(path string) ([]RecordedFrame, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var frames []RecordedFrame
	if err := json.Unmarshal(b, &frames); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return frames, nil
}
