package proxy

import (
	"fmt"
	"time"
)

// ParseWhen reads a search's since or until as people and agents write it: empty (none), a
// duration back from now ("24h", "30m"), a date ("2026-11-20"), a local time
// ("2026-11-20T15:04") or an RFC 3339 time. The error says what it wants.
func ParseWhen(s string, now time.Time) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, "2006-01-02T15:04", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q: want a duration (24h), a date (2026-11-20) or an RFC 3339 time", s)
}
