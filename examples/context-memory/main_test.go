package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The demo packs the corrected fact first and within its budget.
func TestRun(t *testing.T) {
	var out bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"-budget", "160"}, &out))
	s := out.String()
	prompt, audit, ok := strings.Cut(s, "\n\naudit ")
	require.True(t, ok, s)
	require.Contains(t, prompt, "<context>")
	require.Contains(t, prompt, "Borealis", "the newer fact is packed")
	require.Less(t, strings.Index(prompt, "Borealis"), strings.Index(prompt+"Atlas", "Atlas"), "before the older one, if that fits at all")
	require.Regexp(t, `prompt \d+ \+ selected \d+ tokens of 160`, audit)
}
