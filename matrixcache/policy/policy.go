package policy

import "errors"

// Policy is a replacement policy for one cache shard: it tracks which keys
// are resident, what each costs, and decides which keys to admit and which
// to evict. It holds no values.
//
// Contract:
//
//   - Keys are 64-bit hashes of the cache keys. Two cache keys with the same
//     hash are one key to the policy.
//   - Every entry has a cost of at least 1 (bytes, or 1 to count entries);
//     Cost is the sum over resident entries, pinned ones included, and
//     Capacity bounds it. After a call to Admit that returns a nil error,
//     Cost() <= Capacity().
//   - Access records a lookup. It returns true, and counts as a hit, only if
//     the key is resident. It never allocates. A miss records nothing:
//     Admit counts the request of a key it inserts, so a cache calls Access
//     on every lookup and Admit when it fills a miss (or on a blind write).
//   - Admit inserts or updates a key. It appends the keys it evicted to
//     victims and returns the slice, in eviction order, so the caller can
//     demote them to the next tier; the admitted key itself is never in
//     victims. A nil error means the key is resident after the call.
//     [ErrRejected] means the policy chose not to keep it (if it was
//     resident before, it no longer is). [ErrTooLarge], [ErrNoRoom] and
//     [ErrInvalidCost] leave the policy unchanged and evict nothing.
//   - Pinned entries are never evicted: Pin and Unpin are counted (an entry
//     is pinned until every Pin has been matched by an Unpin). A pinned entry
//     still counts toward Cost. When the entries that are not pinned cannot
//     make room for a new cost, Admit returns [ErrNoRoom] and the cache then
//     refuses the write or spills it to the next tier.
//   - Remove (invalidation, expiry) is O(1), and so are Access, Pin and
//     Unpin; Admit is O(1) per victim.
//   - SetCapacity evicts down to the new capacity; if pinned entries keep
//     Cost above it, it evicts every entry that is not pinned and returns
//     [ErrNoRoom].
//
// Implementations are not safe for concurrent use: callers serialise access,
// typically with one policy per cache shard used under the shard's lock.
type Policy interface {
	// Access records a lookup of key and reports whether it is resident.
	Access(key uint64) bool
	// Slot returns where resident key's node lives (NoSlot if it is not
	// resident), and AccessSlot is Access given that slot: it skips the key
	// index, and falls back to it when the slot no longer holds the key.
	Slot(key uint64) int32
	AccessSlot(key uint64, slot int32) bool
	// Admit inserts key with the given cost, or updates the cost of a
	// resident key, evicting as needed. Evicted keys are appended to victims.
	Admit(key uint64, cost int64, victims []uint64) ([]uint64, error)
	// AdmitSlot is Admit given the slot Slot returned for key (NoSlot when
	// the caller knows none), and returns the key's slot after the call
	// (NoSlot unless it is resident). A slot that no longer holds the key
	// falls back to the key index, as in AccessSlot.
	AdmitSlot(key uint64, slot int32, cost int64, victims []uint64) ([]uint64, int32, error)
	// Remove drops key without counting it as an eviction and reports whether
	// it was resident. It removes a pinned entry too.
	Remove(key uint64) bool
	// Contains reports whether key is resident, without recording an access.
	Contains(key uint64) bool
	// Pin protects a resident key from eviction and reports whether the key
	// was resident.
	Pin(key uint64) bool
	// Unpin releases one Pin of key and reports whether the key was pinned.
	Unpin(key uint64) bool
	// Len is the number of resident entries.
	Len() int
	// Cost is the total cost of the resident entries.
	Cost() int64
	// Capacity is the maximum total cost.
	Capacity() int64
	// SetCapacity changes the capacity and evicts down to it, appending the
	// evicted keys to victims.
	SetCapacity(capacity int64, victims []uint64) ([]uint64, error)
}

// Errors returned by Admit and SetCapacity. Match them with errors.Is.
var (
	// ErrInvalidCost is returned for a cost below 1.
	ErrInvalidCost = errors.New("policy: cost must be at least 1")
	// ErrTooLarge is returned for an entry whose cost exceeds the capacity.
	ErrTooLarge = errors.New("policy: entry larger than capacity")
	// ErrNoRoom is returned when pinned entries leave no room for the entry
	// (Admit) or keep the cost above the capacity (SetCapacity).
	ErrNoRoom = errors.New("policy: pinned entries leave no room")
	// ErrRejected is returned when the admission policy preferred the
	// entries already resident: the key is not resident after the call.
	ErrRejected = errors.New("policy: entry rejected by admission")
)

var (
	_ Policy = (*TinyLFU)(nil)
	_ Policy = (*SLRU)(nil)
	_ Policy = (*FIFO)(nil)
	_ Policy = (*ARC)(nil)
)
