package benchkit

import (
	"io"
	"log/slog"
)

// NewProgress returns a logger for progress lines, written as logfmt text to
// w (normally os.Stderr, keeping stdout for the table and summary line).
// Times are shown to the millisecond.
func NewProgress(w io.Writer) *slog.Logger {
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey && len(groups) == 0 {
				return slog.String(slog.TimeKey, a.Value.Time().Format("15:04:05.000"))
			}
			return a
		},
	}))
}
