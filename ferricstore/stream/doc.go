// Package stream is Redis's stream data type as a value: entries under
// rising IDs, trimming, consumer groups with their pending entries lists,
// claims and lag, with Redis 7's rules and error texts.
//
// A Stream does no I/O and reads no clock: every call that depends on the
// time takes it, and XADD's ID is resolved before it is added, so that a
// log of resolved calls replays into the same stream. The commands'
// argument parsing and reply shapes are the caller's; this package keeps
// the state and its transitions.
//
//	s := stream.New()
//	id, _ := s.NextID(nowMs, true, stream.ID{}, false) // XADD s * ...
//	_ = s.Add(id, [][]byte{[]byte("f"), []byte("v")})
//	g, _ := s.CreateGroup("g", stream.ID{}, stream.UnknownEntriesRead)
//	got := s.ReadNew(g, "alice", 10, false, int64(nowMs)) // XREADGROUP >
//	g.Ack([]stream.ID{got[0].ID})                          // XACK
//
// IDs parse as Redis parses them (ParseID for range bounds, ParseStrictID
// and ParseAddID for explicit IDs), decimal numbers included as C's
// strtoull reads them. A Stream is not safe for concurrent use.
package stream
