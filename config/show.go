package config

import (
	"fmt"
	"io"
	"strings"
)

// WriteTo writes every key of the effective configuration, sorted, one per
// line as "key: value  # origin", for `heirloom config show`. Values are YAML
// scalars. A set secret is written as (set), never its value. It implements
// io.WriterTo.
func (l *Loaded) WriteTo(w io.Writer) (int64, error) {
	values := flatten(&l.Config)
	var b strings.Builder
	for _, key := range keys.sortedKeys() {
		value := formatValue(values[key])
		if m, ok := values[key].(map[string]string); ok && secret[key] {
			masked := make(map[string]string, len(m))
			for name := range m {
				masked[name] = "(set)"
			}
			value = formatValue(masked)
		} else if secret[key] && value != `""` {
			value = "(set)"
		}
		origin := l.Origins[key]
		if origin == "" {
			origin = "default"
		}
		fmt.Fprintf(&b, "%s: %s  # %s\n", key, value, origin)
	}
	n, err := io.WriteString(w, b.String())
	return int64(n), err
}

// secret are the keys whose values config show and errors never print; of a
// mapping, only the names are shown (header values often carry credentials).
var secret = map[string]bool{
	"token":                                 true,
	"adapters.openclaw.token":               true,
	"adapters.claude_code.upstream.token":   true,
	"adapters.claude_code.upstream.headers": true,
	"condense.token":                        true,
}
