package main

import (
	"fmt"
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// bar is a progress bar on stderr, or nothing (a nil *bar) when none is
// drawn: its methods do nothing then.
type bar struct{ pb *progressbar.ProgressBar }

// isTerminal reports whether w is a character device (a terminal), so that
// a bar redrawn in place does not fill a log file or a pipe.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// newBar starts a bar of total units (bytes when bytes is set, items
// otherwise; a negative total draws a spinner), on stderr when it is a
// terminal or --progress is given; nil otherwise. The bar shows the rate
// and the estimated time left.
func (a *app) newBar(desc string, total int64, bytes bool) *bar {
	if !a.progress && !isTerminal(a.stderr) {
		return nil
	}
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(a.stderr),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionShowCount(),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionShowElapsedTimeOnFinish(),
		progressbar.OptionOnCompletion(func() { fmt.Fprintln(a.stderr) }),
	}
	if bytes {
		opts = append(opts, progressbar.OptionShowBytes(true), progressbar.OptionShowTotalBytes(true))
	} else {
		opts = append(opts, progressbar.OptionShowIts(), progressbar.OptionSetItsString("keys"))
	}
	return &bar{progressbar.NewOptions64(total, opts...)}
}

// set moves the bar to done of total (a total <= 0 keeps the bar's).
func (b *bar) set(done, total int64) {
	if b == nil {
		return
	}
	if total > 0 && total != b.pb.GetMax64() {
		b.pb.ChangeMax64(total)
	}
	_ = b.pb.Set64(done)
}

// add moves the bar n units on.
func (b *bar) add(n int64) {
	if b == nil {
		return
	}
	// Past the total (keys written meanwhile), the total grows with it.
	if st := b.pb.State(); b.pb.GetMax64() > 0 && st.CurrentNum+n > b.pb.GetMax64() {
		b.pb.ChangeMax64(st.CurrentNum + n)
	}
	_ = b.pb.Add64(n)
}

// finish completes the bar (done), or leaves it where it is (failed).
func (b *bar) finish(done bool) {
	if b == nil {
		return
	}
	if done && b.pb.GetMax64() > 0 {
		_ = b.pb.Finish() // draws the full bar, then a line break
		return
	}
	_ = b.pb.Exit() // a line break after the bar as it is
}
