package raftbench

import (
	"bytes"
	"fmt"
	"maps"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixraft"
)

func put(index uint64, key, value string) matrixraft.Command {
	return matrixraft.Command{Index: index, Data: append(append([]byte{byte(len(key))}, key...), value...)}
}

// all returns every key and value of s.
func (s *kvState) all() map[string]string {
	out := map[string]string{}
	for _, sh := range s.shards {
		for k, v := range sh.m {
			out[k] = string(v)
		}
	}
	return out
}

// restored is the state a snapshot restores.
func restored(t *testing.T, snap []byte) map[string]string {
	r := newKVState()
	require.NoError(t, r.Restore(bytes.NewReader(snap)))
	return r.all()
}

// TestKVStateCapture takes a capture of the benchmark's state machine,
// changes the state before writing the capture, and requires the capture
// to restore the state of its moment, as Snapshot would have written it.
func TestKVStateCapture(t *testing.T) {
	tests := []struct {
		name  string
		after func(t *testing.T, s *kvState)
	}{
		{"nothing", func(*testing.T, *kvState) {}},
		{"overwrites and new keys", func(_ *testing.T, s *kvState) {
			var cmds []matrixraft.Command
			for i := range 3000 {
				cmds = append(cmds, put(uint64(1000+i), fmt.Sprintf("%08d", i%900), fmt.Sprint("new", i)))
			}
			s.Apply(cmds)
		}},
		{"a second capture, then writes", func(t *testing.T, s *kvState) {
			_, err := s.CaptureSnapshot()
			require.NoError(t, err)
			s.Apply([]matrixraft.Command{put(2000, "00000001", "x")})
		}},
		{"restore, then writes", func(t *testing.T, s *kvState) {
			other := newKVState()
			other.Apply([]matrixraft.Command{put(1, "z", "26")})
			var b bytes.Buffer
			require.NoError(t, other.Snapshot(&b))
			require.NoError(t, s.Restore(&b))
			s.Apply([]matrixraft.Command{put(2, "00000001", "y")})
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newKVState()
			var cmds []matrixraft.Command
			for i := range 600 {
				cmds = append(cmds, put(uint64(i+1), fmt.Sprintf("%08d", i), fmt.Sprint("v", i)))
			}
			cmds = append(cmds, matrixraft.Command{Index: 601, Data: []byte{200, 'x'}}) // malformed: skipped
			s.Apply(cmds)
			want := maps.Clone(s.all())
			var plain bytes.Buffer
			require.NoError(t, s.Snapshot(&plain))
			require.Equal(t, want, restored(t, plain.Bytes()))

			c, err := s.CaptureSnapshot()
			require.NoError(t, err)
			tt.after(t, s)
			var b bytes.Buffer
			n, err := c.WriteTo(&b)
			require.NoError(t, err)
			require.Equal(t, int64(b.Len()), n)
			require.Equal(t, plain.Len(), b.Len())
			require.Equal(t, want, restored(t, b.Bytes()))
		})
	}
}
