package api

// Aggregate is one aggregator's result. KindFAgg takes one aggregator in
// Command.Aggregator or several, over one read of the window, in
// Command.Aggregators: the original's sum, avg, min, max, first, last and
// count, and
//
//	sumf, avgf, minf, maxf  the values as float64 (decimal or float syntax)
//	p50, p90, p99, pNN.N    a percentile of the numeric values, from a
//	                        DDSketch (1% relative accuracy), mergeable
//	distinct                distinct values (exact up to 4,096, HyperLogLog
//	                        beyond)
//	top:K                   the K most frequent values with their counts
//	decay:H                 Σ value × 2^(−age/H), H a half-life in ms and
//	                        age the point's age at the engine's clock
type Aggregate struct {
	Name string
	// Int is an integer aggregator's result; Float a float one's (IsFloat).
	Int     int64
	Float   float64
	IsFloat bool
	// Top is top:K's values, most frequent first (ties by value).
	Top []TopValue
}

// TopValue is a value and how many points of the window hold it.
type TopValue struct {
	Value []byte
	Count int64
}
