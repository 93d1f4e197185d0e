package object

import "fmt"

// Kind is an object's type.
type Kind uint8

// Kinds. Numbers are stable: checkpoints store them.
const (
	KindHash Kind = 1
	KindSet  Kind = 2
	KindZSet Kind = 3
	KindList Kind = 4
)

// String is the kind's name as Redis's TYPE gives it.
func (k Kind) String() string {
	switch k {
	case KindHash:
		return "hash"
	case KindSet:
		return "set"
	case KindZSet:
		return "zset"
	case KindList:
		return "list"
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Object is one collection under Key. Exactly the field of its Kind is set.
type Object struct {
	Key  []byte
	Kind Kind
	// Expiry is when the object expires (Unix ms); 0 for never.
	Expiry int64
	// Ver is the log index of the last record that changed the object,
	// for WATCH. It is not part of the image: a checkpoint's objects
	// start at the checkpoint's applied index.
	Ver uint64

	Hash map[string][]byte
	Set  map[string]struct{}
	ZSet *ZSet
	List *List
}

// New returns an empty object of kind k under key (copied).
func New(k Kind, key []byte) *Object {
	o := &Object{Key: append([]byte(nil), key...), Kind: k}
	switch k {
	case KindHash:
		o.Hash = map[string][]byte{}
	case KindSet:
		o.Set = map[string]struct{}{}
	case KindZSet:
		o.ZSet = NewZSet()
	case KindList:
		o.List = &List{}
	}
	return o
}

// Len is the number of elements.
func (o *Object) Len() int {
	switch o.Kind {
	case KindHash:
		return len(o.Hash)
	case KindSet:
		return len(o.Set)
	case KindZSet:
		return o.ZSet.Len()
	case KindList:
		return o.List.Len()
	}
	return 0
}

// Expired reports whether the object has expired at now (Unix ms).
func (o *Object) Expired(now int64) bool { return o.Expiry != 0 && o.Expiry <= now }
