package config

import (
	"fmt"
	"io"
	"strings"
)

// WriteTo writes every key of the effective configuration, sorted, one per
// line as "key: value  # origin", for `heirloom config show`. Values are YAML
// scalars. A set token is written as (set), never its value. It implements
// io.WriterTo.
func (l *Loaded) WriteTo(w io.Writer) (int64, error) {
	values := flatten(&l.Config)
	var b strings.Builder
	for _, key := range keys.sortedKeys() {
		value := formatValue(values[key])
		if key == "token" && l.Config.Token != "" {
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
