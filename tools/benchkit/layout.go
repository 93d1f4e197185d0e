package benchkit

import "log/slog"

// Layout decides a run's CPU layout. With split, it takes SplitCPUs and
// binds this process to the side self picks (the servers' CPUs where the
// process serves, the load generator's where it loads); without, or where
// the CPUs cannot be split, everything shares every CPU and the Split is
// zero. It returns the layout's description for the report.
func Layout(split bool, self func(Split) []int, log *slog.Logger) (Split, string, error) {
	shared := "shared: servers and load generator on every CPU"
	if !split {
		return Split{}, shared, nil
	}
	sp, ok := SplitCPUs()
	if !ok {
		log.Warn("cannot split the CPUs (one CPU, or no taskset); servers and load share them")
		return Split{}, shared, nil
	}
	if err := PinSelf(self(sp)); err != nil {
		return Split{}, "", err
	}
	layout := "split: " + sp.String()
	log.Info("CPU layout", "layout", layout)
	return sp, layout, nil
}
