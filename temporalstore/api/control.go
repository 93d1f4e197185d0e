package api

import "strings"

// Control state kinds: per-key counters in time buckets (a bucket starts
// at At, or at At rounded down to PrecisionMs), the distinct values added
// per bucket (exact up to 4096 a bucket, a HyperLogLog sketch beyond), a
// first/last selection, and windowed reads over them, so that "at most N
// in the last hour" is one round trip. TYPE names the key "controlstate".
// A write with a TTL sets the whole key's expiry to now + TTL (sliding).
const (
	// KindCIncr adds Delta at At (CONTROLSTATEINCR, ...INCROPT).
	KindCIncr Kind = "csincr"
	// KindCChange adds Value to the distinct values at At
	// (CONTROLSTATECHANGE).
	KindCChange Kind = "cschange"
	// KindCCount sums the amounts of Start..End into Int
	// (CONTROLSTATECOUNT).
	KindCCount Kind = "cscount"
	// KindCQuery aggregates Start..End with Aggregator into Int:
	// sum|count|"" the amounts' sum, events|len the buckets, min, max,
	// first, last over the buckets' sums, change the distinct values
	// (CONTROLSTATEQUERY).
	KindCQuery Kind = "csquery"
	// KindCDetail returns Start..End's buckets as Points, each sum in
	// decimal, the first Count with HasCount (CONTROLSTATEDETAIL).
	KindCDetail Kind = "csdetail"
	// KindCSetAndGet adds Delta at At to Family's state of Key, then
	// aggregates Start..End as KindCQuery, in one round trip. With
	// RequestID, a repeat of the same id within ControlDedupWindow adds
	// nothing and returns the current aggregate (HSETANDGET[OPT], ...).
	// Without Start and End it only adds (CONTROLSTATEHSET, ...).
	KindCSetAndGet Kind = "cssetandget"
	// KindCFamilyQuery is KindCQuery on Family's state of Key (HQUERY,
	// CPCQUERY, FOLQUERY, ...).
	KindCFamilyQuery Kind = "csfamilyquery"
	// KindCSelect sets Key's selection to Value occurring at At (0: now):
	// with SelectLast the latest occurrence is kept, else the earliest
	// (FOLSET, SELECTIONSET).
	KindCSelect Kind = "csselect"
	// KindCSelection returns the selection's value (FOLQUERY key,
	// SELECTIONQUERY key).
	KindCSelection Kind = "csselection"
	// KindCTake is a quota: it adds Delta at At (0: now) only if the sum
	// of Key's last Window (ending at At) stays within Limit. Applied says
	// whether it did; Int is the window's sum after; RetryAfter, when
	// refused, is how long until enough of the window has aged out
	// (QUOTATAKE). With RequestID, a take whose id was applied within
	// ControlDedupWindow is answered applied again and adds nothing, so a
	// retried take counts once; a refused take records no id. An applied
	// take drops Key's counter buckets from before its window, which no
	// later take (at a later At) sees: a busy quota key stays the size of
	// its window.
	KindCTake Kind = "cstake"
	// KindCPace paces Key to Limit events a Window, evenly (the generic
	// cell rate algorithm): an event of cost Delta (0 counts as 1) is
	// allowed when it keeps to that rate, with bursts of up to Count
	// events (HasCount; default 1). Applied says whether it was; when
	// not, RetryAfter is when it would be (PACE), or 0 for a cost above
	// the burst, which is never allowed.
	KindCPace Kind = "cspace"
)

// ParseFamily reads a family by its names: h (or counter), cpc (or
// distinct), fol (or selection).
func ParseFamily(s string) (string, bool) {
	switch strings.ToLower(s) {
	case "h", "counter":
		return "h", true
	case "cpc", "distinct":
		return "cpc", true
	case "fol", "selection":
		return "fol", true
	}
	return "", false
}

// Control state views, the original's manager and debug commands.
const (
	// KindCManager reads Family's state of Key (h unless Family is cpc)
	// as field, value pairs in Values, by the operation in Count:
	// ManagerQuery the sums
	// at the timestamps in Args; ManagerFieldList "key_list", the
	// timestamps of Start..End comma-joined; ManagerFieldCount "size",
	// their number; ManagerAllData every bucket of Start..End, timestamp →
	// sum; any other a summary: h_events and h_sum of the counter family,
	// cpc_events and cpc_sum of the distinct family, and fol_value,
	// fol_occur_time_ms and fol_type of the key's selection
	// (CONTROLSTATEMANAGER). Start and End both 0 mean every bucket.
	KindCManager Kind = "csmanager"
	// KindCDebug returns Key's raw state over Start..End as field, value
	// pairs: "<ts>" → the bucket's sum, "change:<ts>" → its distinct
	// values, and "selection", "selection_occur_time_ms",
	// "selection_type" (CONTROLSTATEDEBUG).
	KindCDebug Kind = "csdebug"
)
