package memory

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

// Key families. A tenant holds no ':' and an id is a canonical UUID, so no
// tenant's or memory's prefix is another's.
const (
	famItem = "mem:id:"   // {t}:{uuid} → record
	famHist = "mem:hist:" // {t}:{uuid}:{be64 ms}{be32 seq} → HistoryRow
	famHash = "mem:md5:"  // {t}:{be64 h64(scope)}{md5}{uuid} → 1: the Infer dedup index
)

// sourcePrefix starts the source_ref (and source id) of a memory's text in
// the Engine.
const sourcePrefix = "mem:"

func tenantPrefix(fam, t string) []byte {
	k := make([]byte, 0, len(fam)+len(t)+1+64)
	k = append(k, fam...)
	k = append(k, t...)
	return append(k, ':')
}

func itemKey(t, id string) []byte { return append(tenantPrefix(famItem, t), id...) }

func histPrefix(t, id string) []byte {
	return append(append(tenantPrefix(famHist, t), id...), ':')
}

// histKey orders a memory's rows by write time, then by sequence within a
// millisecond: a forward scan is oldest first.
func histKey(t, id string, ms int64, seq uint32) []byte {
	k := binary.BigEndian.AppendUint64(histPrefix(t, id), uint64(ms))
	return binary.BigEndian.AppendUint32(k, seq)
}

// hashPrefix is the dedup entries of one text in one scope. The scope is
// hashed; Infer confirms a hit against the item, so a collision costs a
// read, never a dropped memory.
func hashPrefix(t string, s Scope, sum [16]byte) []byte {
	k := binary.BigEndian.AppendUint64(tenantPrefix(famHash, t), h64.Sum(s.UserID+"\x00"+s.AgentID+"\x00"+s.RunID))
	return append(k, sum[:]...)
}

func hashKey(t string, s Scope, sum [16]byte, id string) []byte {
	return append(hashPrefix(t, s, sum), id...)
}

// newUUID is a random (version 4) UUID in its canonical form.
func newUUID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	var out [36]byte
	hex.Encode(out[0:8], b[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], b[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], b[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], b[8:10])
	out[23] = '-'
	hex.Encode(out[24:], b[10:])
	return string(out[:]), nil
}

// parseID is id as a canonical (lower-case) UUID, or false: anything else
// names no memory.
func parseID(id string) (string, bool) {
	if len(id) != 36 {
		return "", false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return "", false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return "", false
			}
		}
	}
	return strings.ToLower(id), true
}
