package memory

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"strings"
	"time"
	"unicode"

	"github.com/temporalstore/temporalstore-go/matrixark"
)

// timeLayout is ISO-8601 in UTC as Python's isoformat writes it, so mem0
// clients parse it on any Python version.
const timeLayout = "2006-01-02T15:04:05.000000-07:00"

func isoTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{matrixark.ErrInvalid}, args...)...)
}

// checkName applies the Engine's rule for a tenant or a scope id: at most
// 512 bytes, no whitespace, no colon (keys are joined with ':').
func checkName(what, v string) error {
	switch {
	case len(v) > matrixark.MaxNameBytes:
		return invalid("%s longer than %d bytes", what, matrixark.MaxNameBytes)
	case strings.ContainsFunc(v, unicode.IsSpace):
		return invalid("%s must not contain whitespace", what)
	case strings.ContainsRune(v, ':'):
		return invalid("%s must not contain ':'", what)
	}
	return nil
}

func checkTenant(t string) error {
	if t == "" {
		return invalid("tenant is required")
	}
	return checkName("tenant", t)
}

// normalize trims the ids and checks them; an empty id is absent, one that
// trims to empty is invalid.
func (s Scope) normalize() (Scope, error) {
	for _, f := range []struct {
		name string
		v    *string
	}{{"user_id", &s.UserID}, {"agent_id", &s.AgentID}, {"run_id", &s.RunID}} {
		if *f.v == "" {
			continue
		}
		*f.v = strings.TrimSpace(*f.v)
		if *f.v == "" {
			return Scope{}, invalid("%s must not be empty", f.name)
		}
		if err := checkName(f.name, *f.v); err != nil {
			return Scope{}, err
		}
	}
	return s, nil
}

func (s Scope) empty() bool { return s.UserID == "" && s.AgentID == "" && s.RunID == "" }

// idKeys are the metadata keys a memory's ids live in; metadata never
// keeps them.
var idKeys = [...]string{"user_id", "agent_id", "run_id", "actor_id"}

// cleanMetadata copies m without its id keys; nil when nothing is left.
func cleanMetadata(m map[string]any) (map[string]any, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := maps.Clone(m)
	for _, k := range idKeys {
		delete(out, k)
	}
	if len(out) == 0 {
		return nil, nil
	}
	if _, err := json.Marshal(out); err != nil {
		return nil, invalid("metadata: %v", err)
	}
	return out, nil
}

// parseExpiration is the instant a memory stops being visible, in ms (0:
// never): a date expires at the end of that day, UTC; a time without a
// zone is UTC.
func parseExpiration(s string) (int64, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, nil
	}
	if d, err := time.Parse(time.DateOnly, s); err == nil {
		return d.AddDate(0, 0, 1).UnixMilli(), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UnixMilli(), nil
		}
	}
	return 0, invalid("expiration_date %q: want YYYY-MM-DD or an ISO-8601 time", s)
}

// matcher is a compiled Filter.
type matcher struct {
	scope       Scope
	actor, role *string
	meta        map[string][]byte // key → canonical JSON of the wanted value
	showExpired bool
}

// compile merges the Filter's ids into its scope and requires one of them.
func compile(f Filter) (matcher, error) {
	sc, err := f.Scope.normalize()
	if err != nil {
		return matcher{}, err
	}
	m := matcher{showExpired: f.ShowExpired}
	str := func(k string, v any) (string, error) {
		s, ok := v.(string)
		if !ok {
			return "", invalid("filters.%s must be a string", k)
		}
		return s, nil
	}
	var fromFilters Scope
	for k, v := range f.Filters {
		var err error
		switch k {
		case "user_id":
			fromFilters.UserID, err = str(k, v)
		case "agent_id":
			fromFilters.AgentID, err = str(k, v)
		case "run_id":
			fromFilters.RunID, err = str(k, v)
		case "actor_id", "role":
			var s string
			if s, err = str(k, v); err == nil {
				if k == "role" {
					m.role = &s
				} else {
					m.actor = &s
				}
			}
		default:
			var b []byte
			if b, err = json.Marshal(v); err != nil {
				err = invalid("filters.%s: %v", k, err)
			}
			if m.meta == nil {
				m.meta = map[string][]byte{}
			}
			m.meta[k] = b
		}
		if err != nil {
			return matcher{}, err
		}
	}
	if fromFilters, err = fromFilters.normalize(); err != nil {
		return matcher{}, err
	}
	for _, f := range []struct {
		dst *string
		v   string
	}{
		{&sc.UserID, fromFilters.UserID}, {&sc.AgentID, fromFilters.AgentID}, {&sc.RunID, fromFilters.RunID}} {
		if *f.dst == "" {
			*f.dst = f.v
		}
	}
	if sc.empty() {
		return matcher{}, ErrNoIdentifier
	}
	m.scope = sc
	return m, nil
}

func (m *matcher) match(r *record, nowMs int64) bool {
	switch {
	case m.scope.UserID != "" && r.UserID != m.scope.UserID,
		m.scope.AgentID != "" && r.AgentID != m.scope.AgentID,
		m.scope.RunID != "" && r.RunID != m.scope.RunID,
		m.actor != nil && r.ActorID != *m.actor,
		m.role != nil && r.Role != *m.role,
		!m.showExpired && expired(r, nowMs):
		return false
	}
	for k, want := range m.meta {
		v, ok := r.Metadata[k]
		if !ok {
			return false
		}
		got, err := json.Marshal(v)
		if err != nil || !bytes.Equal(got, want) {
			return false
		}
	}
	return true
}

func expired(r *record, nowMs int64) bool { return r.ExpiresMs > 0 && nowMs >= r.ExpiresMs }

// limit applies a default and the Engine's maximum.
func limit(n, def int) (int, error) {
	switch {
	case n == 0:
		return def, nil
	case n < 0 || n > matrixark.MaxLimit:
		return 0, invalid("limit must be between 1 and %d", matrixark.MaxLimit)
	}
	return n, nil
}
