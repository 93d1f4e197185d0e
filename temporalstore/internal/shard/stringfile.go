package shard

import (
	"bytes"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// StringFile is a string value whose record the log keeps in a file of
// its own (storage.RecordFiles), open: a surface sends the value from the
// file instead of reading the record whole and copying it out.
type StringFile struct {
	File *storage.RecordFile
	// Offset and Len are where the value lies in the file.
	Offset, Len int64
}

// OpenString looks key up as AppendString does, for a value kept in a
// file of its own, and returns the file and where the value lies in it.
// ok is false for anything else (no such key, an expired one, another
// type, a value the log holds itself, a log without files): the caller
// reads the key as usual. The caller closes the file.
func (s *Shard) OpenString(key []byte) (sf StringFile, ok bool, err error) {
	rf, files := s.log.(storage.RecordFiles)
	if !files || s.held {
		return StringFile{}, false, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var found *storage.RecordFile
	defer func() {
		if r := recover(); r != nil {
			if found != nil {
				found.Close()
			}
			sf, ok, err = StringFile{}, false, s.contained(r)
		}
	}()
	if s.closed {
		return StringFile{}, false, ErrClosed
	}
	var sp command.Span
	m := keyMatch{s: s, key: key, keyOnly: true}
	match := func(e keyindex.Entry) bool {
		if isObject(e) || isSpilled(e) || loc(e) != (command.Loc{}) {
			return m.match(e) // the usual path's
		}
		if _, _, held := s.heldRecord(e.Addr); held {
			return m.match(e) // read from memory, as the usual path does
		}
		head, size, err := rf.ReadHead(e.Addr)
		if err != nil {
			m.err = err
			return false
		}
		if int64(len(head)) == size {
			// A record the log holds itself, cached for the usual
			// path's read to find rather than read again.
			s.cacheRecord(e.Addr, head)
			return m.match(e)
		}
		f, isFile, err := rf.OpenRecord(e.Addr)
		if err != nil {
			m.err = err
			return false
		}
		if !isFile {
			return m.match(e)
		}
		span, err := command.StringSpan(f.Head, int(f.Size))
		if err != nil || !bytes.Equal(span.Key, key) {
			f.Close()
			if err != nil {
				return m.match(e) // read whole, as StringAt would
			}
			return false
		}
		found, sp = f, span
		return true
	}
	if _, hit := s.index.Get(hashKey(key), match); !hit || found == nil {
		return StringFile{}, false, m.err
	}
	if sp.Expiry != 0 && sp.Expiry <= s.opts.Now().UnixMilli() {
		found.Close()
		return StringFile{}, false, nil
	}
	return StringFile{File: found, Offset: int64(sp.Offset), Len: int64(sp.Len)}, true, nil
}
