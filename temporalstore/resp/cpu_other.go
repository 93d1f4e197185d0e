//go:build !unix

package resp

import "time"

// processCPU is not known here: INFO cpu is then empty.
func processCPU() (user, sys time.Duration, ok bool) { return 0, 0, false }
