package flowhttp

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"slices"
	"strings"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// decodeBody reads r's body (already bounded) into v; see decodeFrom.
func decodeBody(r *http.Request, v any) error { return decodeFrom(r.Body, v) }

// decodeFrom reads one JSON value from rd into v. Unknown fields and
// anything after the value are refused, so that a misspelt option is an
// error rather than a default; an empty body is {}.
func decodeFrom(rd io.Reader, v any) error {
	dec := json.NewDecoder(rd)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		if errors.Is(err, io.EOF) {
			return nil
		}
		return decodeErr(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return decodeErr(err)
		}
		return invalid("the body holds more than one JSON value")
	}
	return nil
}

// decodeErr is a decoding failure's answer: 413 past the body limit, 400
// otherwise.
func decodeErr(err error) error {
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return err
	}
	return invalid("bad JSON body: %v", err)
}

// decodeRaw reads one item of a batch.
func decodeRaw(raw json.RawMessage, v any) error {
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(raw, []byte("null")) {
		return invalid("an item must be a JSON object")
	}
	return decodeFrom(bytes.NewReader(raw), v)
}

// bytesArg reads a bytes option given as name (a string, taken as its
// UTF-8 bytes) or as name_base64 (standard base64); present reports
// whether either was given.
func bytesArg(name string, s, b64 *string) (b []byte, present bool, err error) {
	switch {
	case s != nil && b64 != nil:
		return nil, false, invalid("give %s or %s_base64, not both", name, name)
	case s != nil:
		return []byte(*s), true, nil
	case b64 != nil:
		b, err := base64.StdEncoding.DecodeString(*b64)
		if err != nil {
			return nil, false, invalid("%s_base64 is not standard base64: %v", name, err)
		}
		return b, true, nil
	}
	return nil, false, nil
}

// maxActive is max_active_ms: a count of ms or the string "infinity"
// (any case), which Inf reports.
type maxActive struct {
	Ms  int64
	Inf bool
}

func (m *maxActive) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		if !strings.EqualFold(s, "infinity") {
			return invalid("max_active_ms must be a number of ms or \"infinity\"")
		}
		*m = maxActive{Inf: true}
		return nil
	}
	var n int64
	if err := json.Unmarshal(b, &n); err != nil {
		return invalid("max_active_ms must be a number of ms or \"infinity\"")
	}
	*m = maxActive{Ms: n}
	return nil
}

// attrs turns the attributes object into the record's list, sorted by
// key: a JSON object has no order, and an idempotent create compares
// the lists.
func attrs(m map[string]string) []flow.Attr {
	if len(m) == 0 {
		return nil
	}
	out := make([]flow.Attr, 0, len(m))
	for k, v := range m {
		out = append(out, flow.Attr{Key: k, Value: v})
	}
	slices.SortFunc(out, func(a, b flow.Attr) int { return strings.Compare(a.Key, b.Key) })
	return out
}

// required reports a missing option.
func required(name string) error { return invalid("%s is required", name) }
