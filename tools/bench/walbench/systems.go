package walbench

// systemsFor builds the selected systems; bbolt uses the given batch
// setting.
func systemsFor(names []string, batch bboltBatch) map[string]system {
	m := map[string]system{}
	for _, n := range names {
		switch n {
		case SystemOurs:
			m[n] = system{name: n, open: openOurs, envelope: oursEnvelope}
		case SystemEtcd:
			m[n] = system{name: n, open: openEtcd, envelope: etcdEnvelope}
		case SystemBbolt:
			m[n] = system{name: n, open: openBolt(batch)}
		}
	}
	return m
}
