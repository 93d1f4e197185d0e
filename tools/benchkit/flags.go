package benchkit

import (
	"strconv"
	"strings"
)

// EnvBool reports whether an environment value reads as true ("1", "true",
// ...); anything else, including an unparsable value, is false.
func EnvBool(v string) bool {
	b, err := strconv.ParseBool(strings.TrimSpace(v))
	return err == nil && b
}

// SplitList splits a comma-separated flag or environment value, dropping
// blanks.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// IntList parses a comma-separated list of integers.
func IntList(v string) ([]int, error) {
	var out []int
	for _, s := range SplitList(v) {
		n, err := strconv.Atoi(s)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
