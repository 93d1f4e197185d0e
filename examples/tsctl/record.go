package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"unicode/utf8"
)

// record is one key in export's JSON Lines format (see the package doc).
// Byte strings are held as Go strings of the raw bytes; encode and decode
// apply the line's encoding.
type record struct {
	Key  string `json:"key"`
	Type string `json:"type"`
	// Encoding is "base64" when every byte string of the line is base64,
	// empty when they are UTF-8 text.
	Encoding string `json:"encoding,omitempty"`
	// TTLMillis is the time to live left at export; 0: none.
	TTLMillis int64 `json:"ttl_ms,omitempty"`

	Value   *string           `json:"value,omitempty"`   // string
	Fields  map[string]string `json:"fields,omitempty"`  // hash
	Members []string          `json:"members,omitempty"` // set
	Scores  []scored          `json:"scores,omitempty"`  // zset
	Items   []string          `json:"items,omitempty"`   // list
	Points  []point           `json:"points,omitempty"`  // series
	Entries []streamEntry     `json:"entries,omitempty"` // stream
}

type scored struct {
	Member string `json:"member"`
	Score  score  `json:"score"`
}

// score is a zset score: a JSON number, or "inf" / "-inf", which JSON
// numbers cannot hold.
type score float64

func (s score) MarshalJSON() ([]byte, error) {
	switch f := float64(s); {
	case math.IsInf(f, 1):
		return []byte(`"inf"`), nil
	case math.IsInf(f, -1):
		return []byte(`"-inf"`), nil
	default:
		return strconv.AppendFloat(nil, f, 'g', -1, 64), nil
	}
}

func (s *score) UnmarshalJSON(b []byte) error {
	var str string
	if json.Unmarshal(b, &str) == nil {
		f, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return fmt.Errorf("score %q: %w", str, err)
		}
		*s = score(f)
		return nil
	}
	var f float64
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	*s = score(f)
	return nil
}

// String is the score as ZADD reads it.
func (s score) String() string {
	return strconv.FormatFloat(float64(s), 'g', -1, 64)
}

type point struct {
	TS    int64  `json:"ts"`
	Value string `json:"value"`
}

type streamEntry struct {
	ID string `json:"id"`
	// Fields are the entry's field-value pairs, flattened in order.
	Fields []string `json:"fields"`
}

// byteStrings calls fn on a pointer to every byte string of r, the key
// first. A stream entry's ID is text, not one of them.
func (r *record) byteStrings(fn func(*string) error) error {
	if err := fn(&r.Key); err != nil {
		return err
	}
	if r.Value != nil {
		if err := fn(r.Value); err != nil {
			return err
		}
	}
	if r.Fields != nil {
		out := make(map[string]string, len(r.Fields))
		for f, v := range r.Fields {
			if err := fn(&f); err != nil {
				return err
			}
			if err := fn(&v); err != nil {
				return err
			}
			out[f] = v
		}
		r.Fields = out
	}
	lists := [][]string{r.Members, r.Items}
	for i := range r.Scores {
		if err := fn(&r.Scores[i].Member); err != nil {
			return err
		}
	}
	for i := range r.Points {
		if err := fn(&r.Points[i].Value); err != nil {
			return err
		}
	}
	for i := range r.Entries {
		lists = append(lists, r.Entries[i].Fields)
	}
	for _, l := range lists {
		for i := range l {
			if err := fn(&l[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// clone is a copy of r that shares no slice or map with it.
func (r *record) clone() *record {
	c := *r
	if r.Value != nil {
		v := *r.Value
		c.Value = &v
	}
	c.Fields = maps.Clone(r.Fields)
	c.Members = slices.Clone(r.Members)
	c.Scores = slices.Clone(r.Scores)
	c.Items = slices.Clone(r.Items)
	c.Points = slices.Clone(r.Points)
	c.Entries = slices.Clone(r.Entries)
	for i := range c.Entries {
		c.Entries[i].Fields = slices.Clone(c.Entries[i].Fields)
	}
	return &c
}

// marshal is r's line (without its newline): text when every byte string
// is valid UTF-8, base64 otherwise.
func (r *record) marshal() ([]byte, error) {
	text := true
	_ = r.byteStrings(func(s *string) error {
		text = text && utf8.ValidString(*s)
		return nil
	})
	if text {
		return json.Marshal(r)
	}
	c := r.clone()
	c.Encoding = "base64"
	_ = c.byteStrings(func(s *string) error {
		*s = base64.StdEncoding.EncodeToString([]byte(*s))
		return nil
	})
	return json.Marshal(c)
}

// unmarshal parses a line into r, raw bytes in its strings.
func (r *record) unmarshal(line []byte) error {
	if err := json.Unmarshal(line, r); err != nil {
		return err
	}
	switch r.Encoding {
	case "":
		return nil
	case "base64":
		return r.byteStrings(func(s *string) error {
			b, err := base64.StdEncoding.DecodeString(*s)
			*s = string(b)
			return err
		})
	}
	return fmt.Errorf("unknown encoding %q", r.Encoding)
}
