package command

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// equalCommands compares commands treating nil and empty byte slices alike,
// as the format does.
func equalCommands(t *testing.T, want []Command, got []Decoded) {
	t.Helper()
	require.Len(t, got, len(want))
	for i := range want {
		w, g := want[i], got[i]
		require.Equal(t, w.Op, g.Op, "command %d", i)
		require.Equal(t, w.Flags, g.Flags)
		require.Equal(t, w.Time, g.Time)
		require.Equal(t, w.Expiry, g.Expiry)
		require.True(t, bytes.Equal(w.Key, g.Key), "command %d key", i)
		require.Len(t, g.Args, len(w.Args))
		for j := range w.Args {
			require.True(t, bytes.Equal(w.Args[j], g.Args[j]), "command %d arg %d", i, j)
		}
	}
}

var samples = []Command{
	{Op: 1, Time: 1_764_460_800_000, Key: []byte("user:42"), Args: [][]byte{[]byte("value")}},
	{Op: 2, Flags: 1<<63 | 5, Time: -1, Expiry: 1_764_460_900_000, Key: []byte("k")},
	{Op: 0xffff, Key: nil, Args: [][]byte{nil, {}, bytes.Repeat([]byte{0xab}, 70_000)}},
	{Op: 7, Time: 0, Expiry: -5, Key: bytes.Repeat([]byte("x"), 300), Args: [][]byte{[]byte("a"), []byte("bb"), []byte("ccc")}},
}

func TestRoundTrip(t *testing.T) {
	for i, c := range samples {
		rec := Append(nil, &c)
		got, err := Decode(rec)
		require.NoError(t, err, "sample %d", i)
		equalCommands(t, []Command{c}, got)
		// Arguments alias the record rather than copy it.
		start, end := uintptr(unsafe.Pointer(unsafe.SliceData(rec))), uintptr(unsafe.Pointer(unsafe.SliceData(rec)))+uintptr(len(rec))
		for j, a := range got[0].Args {
			if len(a) == 0 {
				continue
			}
			p := uintptr(unsafe.Pointer(unsafe.SliceData(a)))
			require.True(t, p >= start && p+uintptr(len(a)) <= end, "sample %d arg %d is not in the record", i, j)
		}
	}
	for _, cs := range [][]Command{nil, samples[:1], samples} {
		rec := AppendBatch([]byte("prefix"), cs)[len("prefix"):]
		got, err := Decode(rec)
		require.NoError(t, err)
		equalCommands(t, cs, got)
	}
}

// A 64-byte value under a 16-byte key costs 14 bytes of record around its
// 80 bytes of payload.
func TestRecordOverhead(t *testing.T) {
	c := Command{Op: 1, Time: 1_764_460_800_000, Key: bytes.Repeat([]byte("k"), 16), Args: [][]byte{bytes.Repeat([]byte("v"), 64)}}
	require.Equal(t, 80+14, len(Append(nil, &c)))
}

func TestDecodeRefusesBadInput(t *testing.T) {
	good := Append(nil, &samples[3])
	batch := AppendBatch(nil, samples[:2])
	cases := []struct {
		name string
		rec  []byte
		want error
	}{
		{"empty", nil, ErrMalformed},
		{"one byte", []byte{Version}, ErrMalformed},
		{"newer version", append([]byte{Version + 1}, good[1:]...), ErrVersion},
		{"version zero", append([]byte{0}, good[1:]...), ErrVersion},
		{"unknown kind", append([]byte{Version, 9}, good[2:]...), ErrMalformed},
		{"trailing byte", append(append([]byte{}, good...), 0), ErrMalformed},
		{"batch trailing byte", append(append([]byte{}, batch...), 0), ErrMalformed},
		{"huge batch count", []byte{Version, kindBatch, 0xff, 0xff, 0xff, 0xff, 0x0f}, ErrMalformed},
		{"huge arg count", []byte{Version, kindCommand, 1, 0, 0, 0, 0, 0xff, 0xff, 0x03}, ErrMalformed},
		{"op past 16 bits", []byte{Version, kindCommand, 0x80, 0x80, 0x04, 0, 0, 0, 0, 0}, ErrMalformed},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(tc.rec)
			require.ErrorIs(t, err, tc.want)
		})
	}
	// Every strict prefix of a record is refused, never misread.
	for _, rec := range [][]byte{good, batch} {
		for n := range len(rec) {
			_, err := Decode(rec[:n])
			require.ErrorIs(t, err, ErrMalformed, "prefix %d of %d", n, len(rec))
		}
	}
}

func TestAppendDoesNotAllocateWithRoom(t *testing.T) {
	buf := make([]byte, 0, 1<<10)
	c := samples[0]
	allocs := testing.AllocsPerRun(100, func() { buf = Append(buf[:0], &c) })
	require.Zero(t, allocs)
}

// Decode never panics, and what it accepts re-encodes to a record that
// decodes to the same commands.
func FuzzDecode(f *testing.F) {
	for i := range samples {
		f.Add(Append(nil, &samples[i]))
	}
	f.Add(AppendBatch(nil, samples))
	f.Add(AppendBatch(nil, nil))
	f.Add([]byte{Version, kindBatch, 2})
	f.Fuzz(func(t *testing.T, rec []byte) {
		got, err := Decode(rec)
		if err != nil {
			return
		}
		cs := make([]Command, len(got))
		for i := range got {
			cs[i] = got[i].Command
		}
		var again []byte
		if rec[1] == kindCommand {
			again = Append(nil, &cs[0])
		} else {
			again = AppendBatch(nil, cs)
		}
		back, err := Decode(again)
		require.NoError(t, err)
		equalCommands(t, cs, back)
		for i := range cs {
			require.Equal(t, len(Append(nil, &cs[i]))-2, Size(&cs[i]))
		}
		// DecodeOne agrees with Decode on every position and offset.
		for i := range got {
			locs := []Loc{{Pos: i}, {Offset: got[i].Offset}}
			if got[i].Offset != 0 {
				locs = append(locs, Loc{Offset: got[i].Offset, Count: len(got)})
			}
			for _, l := range locs {
				one, n, err := DecodeOne(rec, l)
				require.NoError(t, err)
				require.Equal(t, len(got), n)
				equalCommands(t, cs[i:i+1], []Decoded{one})
				require.Equal(t, got[i].Offset, one.Offset)
				key, n, err := KeyAt(rec, l)
				require.NoError(t, err)
				require.Equal(t, len(got), n)
				require.Equal(t, string(cs[i].Key), string(key))
				requireStringAt(t, rec, l, &cs[i], len(got))
			}
		}
		_, _, err = DecodeOne(rec, Loc{Pos: len(got)})
		require.ErrorIs(t, err, ErrMalformed)
		_, _, err = KeyAt(rec, Loc{Pos: len(got)})
		require.ErrorIs(t, err, ErrMalformed)
		_, _, err = KeyAt(rec, Loc{Offset: len(rec)})
		require.ErrorIs(t, err, ErrMalformed)
	})
}

// requireStringAt checks StringAt against the command c at l in rec, a
// record of n commands.
func requireStringAt(t *testing.T, rec []byte, l Loc, c *Command, n int) {
	t.Helper()
	v, got, err := StringAt(rec, l)
	require.NoError(t, err)
	if l.Offset == 0 {
		require.Equal(t, n, got)
	} else {
		require.Equal(t, l.Count, got, "located by offset, the header is not read")
	}
	require.Equal(t, string(c.Key), string(v.Key))
	require.Equal(t, c.Expiry, v.Expiry)
	if len(c.Args) == 0 {
		require.Nil(t, v.Arg)
	} else {
		require.Equal(t, string(c.Args[0]), string(v.Arg))
	}
}

// KeyAt never panics on any record, position and offset.
func FuzzKeyAt(f *testing.F) {
	f.Add(AppendBatch(nil, samples), 1, 0, 0)
	f.Add(AppendBatch(nil, samples), 0, 9, 0)
	f.Add(AppendBatch(nil, samples), 0, 9, 3)
	f.Add(Append(nil, &samples[0]), 0, 0, 0)
	f.Add([]byte{Version, kindBatch, 2}, 1, 0, 0)
	f.Fuzz(func(t *testing.T, rec []byte, pos, off, count int) {
		l := Loc{Pos: pos, Offset: off, Count: count}
		if v, _, err := StringAt(rec, l); err == nil {
			require.True(t, len(v.Key)+len(v.Arg) <= len(rec))
		}
		_, _, _ = DecodeOne(rec, l) // decoded or refused, never a panic
		key, _, err := KeyAt(rec, l)
		if err != nil {
			return
		}
		// Accepted: the key lies inside the record.
		if len(key) > 0 {
			require.True(t, len(key) <= len(rec))
		}
	})
}

// DecodeOne and KeyAt find every command of a batch by position and by
// the offset BatchOffset and Size compute, without allocating for a key.
func TestDecodeOne(t *testing.T) {
	rec := AppendBatch(nil, samples)
	off := BatchOffset(len(samples))
	for i := range samples {
		for _, l := range []Loc{{Pos: i}, {Offset: off}} {
			c, n, err := DecodeOne(rec, l)
			require.NoError(t, err)
			require.Equal(t, len(samples), n)
			equalCommands(t, samples[i:i+1], []Decoded{c})
			require.Equal(t, off, c.Offset)
			key, n, err := KeyAt(rec, l)
			require.NoError(t, err)
			require.Equal(t, len(samples), n)
			require.Equal(t, string(samples[i].Key), string(key))
			require.Zero(t, testing.AllocsPerRun(10, func() { _, _, _ = KeyAt(rec, l) }))
			requireStringAt(t, rec, l, &samples[i], len(samples))
			require.Zero(t, testing.AllocsPerRun(10, func() { _, _, _ = StringAt(rec, l) }))
		}
		require.Equal(t, len(Append(nil, &samples[i]))-2, Size(&samples[i]))
		off += Size(&samples[i])
	}
	require.Equal(t, len(rec), off, "the sizes add up to the record")
	one := Append(nil, &samples[0])
	_, _, err := DecodeOne(one, Loc{Offset: 2})
	require.ErrorIs(t, err, ErrMalformed, "no offsets in a one-command record")
	c, n, err := DecodeOne(one, Loc{})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	equalCommands(t, samples[:1], []Decoded{c})
	for _, bad := range [][]byte{nil, {9, kindCommand}, {Version, 7}, rec[:len(rec)/2]} {
		_, _, err := DecodeOne(bad, Loc{Pos: len(samples) - 1})
		require.Error(t, err)
	}
}

func TestIsOne(t *testing.T) {
	one := Append(nil, &Command{Op: 1, Key: []byte("k"), Args: [][]byte{[]byte("v")}})
	batch := AppendBatch(nil, []Command{{Op: 1, Key: []byte("a")}, {Op: 1, Key: []byte("b")}})
	require.True(t, IsOne(one))
	require.False(t, IsOne(batch))
	require.False(t, IsOne(nil))
	require.False(t, IsOne([]byte{Version}))
	require.False(t, IsOne(append([]byte{9}, one[1:]...)), "another version")
}

// StringSpan finds from a record's head what StringAt finds in the whole
// record, or refuses it.
func FuzzStringSpan(f *testing.F) {
	for i := range samples {
		f.Add(Append(nil, &samples[i]), 8)
	}
	f.Add(Append(nil, &Command{Op: 1, Key: []byte("k"), Args: [][]byte{bytes.Repeat([]byte("v"), 300)}}), 20)
	f.Add(AppendBatch(nil, samples), 4096)
	f.Fuzz(func(t *testing.T, rec []byte, headLen int) {
		head := rec[:max(0, min(headLen, len(rec)))]
		sp, err := StringSpan(head, len(rec))
		if err != nil {
			return
		}
		v, _, err := StringAt(rec, Loc{})
		require.NoError(t, err, "StringSpan took a record StringAt refuses")
		require.Equal(t, string(v.Key), string(sp.Key))
		require.Equal(t, v.Expiry, sp.Expiry)
		require.Equal(t, string(v.Arg), string(rec[sp.Offset:sp.Offset+sp.Len]))
	})
}

func TestStringSpan(t *testing.T) {
	value := bytes.Repeat([]byte("v"), 10_000)
	rec := Append(nil, &Command{Op: 1, Expiry: 77, Key: []byte("key"), Args: [][]byte{value}})
	sp, err := StringSpan(rec[:64], len(rec))
	require.NoError(t, err)
	require.Equal(t, "key", string(sp.Key))
	require.Equal(t, int64(77), sp.Expiry)
	require.Equal(t, value, rec[sp.Offset:sp.Offset+sp.Len])
	for name, c := range map[string]struct {
		head []byte
		size int
	}{
		"key past the head": {rec[:6], len(rec)},
		"a batch":           {AppendBatch(nil, samples)[:64], len(AppendBatch(nil, samples))},
		"bytes after":       {rec[:64], len(rec) + 1},
		"two arguments":     {Append(nil, &Command{Op: 1, Key: []byte("k"), Args: [][]byte{value, value}})[:64], 2*len(value) + 16},
	} {
		_, err := StringSpan(c.head, c.size)
		require.ErrorIs(t, err, ErrMalformed, name)
	}
}
