package benchkit

import (
	"context"
	"fmt"
)

// Alternate runs every system in turn, repeats times over:
// a, b, c, a, b, c, ... so that drift in the machine (page cache, disk
// state, thermal) hits every system alike. run is called with the repeat
// number (0-based) and the system's name; the first error stops the loop and
// is returned wrapped with both. A cancelled ctx stops it before the next
// run.
func Alternate(ctx context.Context, repeats int, systems []string, run func(ctx context.Context, repeat int, system string) error) error {
	for r := range repeats {
		for _, s := range systems {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := run(ctx, r, s); err != nil {
				return fmt.Errorf("%s, repeat %d: %w", s, r+1, err)
			}
		}
	}
	return nil
}
