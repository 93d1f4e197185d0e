package soakbench

import (
	"fmt"
	"image/color"
	"math"
	"os"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
)

var (
	boundColor  = color.RGBA{R: 200, A: 255}
	warmupColor = color.Gray{Y: 140}
)

// writePNG draws the run as three panels, one above the other: RSS, p99
// per class and requests/s, each over the minutes since the load started,
// with the end of warm-up marked.
func writePNG(path string, rep *report) error {
	panels := []*plot.Plot{rssPanel(rep), p99Panel(rep), opsPanel(rep)}
	for _, p := range panels {
		p.X.Label.Text = "minutes since the load started"
		p.X.Min = 0
		p.Legend.Top = true
		p.Add(plotter.NewGrid())
	}
	const width, height = 10 * vg.Inch, 13 * vg.Inch
	img := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(96))
	dc := draw.New(img)
	tiles := draw.Tiles{Rows: len(panels), Cols: 1, PadX: vg.Millimeter, PadY: 4 * vg.Millimeter,
		PadTop: 2 * vg.Millimeter, PadBottom: 2 * vg.Millimeter, PadLeft: 2 * vg.Millimeter, PadRight: 4 * vg.Millimeter}
	grid := make([][]*plot.Plot, len(panels))
	for i, p := range panels {
		grid[i] = []*plot.Plot{p}
	}
	canvases := plot.Align(grid, tiles, dc)
	for i, p := range panels {
		p.Draw(canvases[i][0])
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := (vgimg.PngCanvas{Canvas: img}).WriteTo(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

func minutes(s Sample) float64 { return s.ElapsedS / 60 }

// series is one line of a panel: the samples' x (minutes) and f's y,
// skipping the samples where keep says no.
func series(samples []Sample, f func(Sample) float64, keep func(float64) bool) plotter.XYs {
	var xys plotter.XYs
	for _, s := range samples {
		if y := f(s); keep(y) {
			xys = append(xys, plotter.XY{X: minutes(s), Y: y})
		}
	}
	return xys
}

func every(float64) bool      { return true }
func positive(y float64) bool { return y > 0 && !math.IsInf(y, 0) }
func dashes() []vg.Length     { return []vg.Length{vg.Points(5), vg.Points(3)} }
func thin() vg.Length         { return vg.Points(1) }
func styled(l *plotter.Line, i int) {
	l.LineStyle.Color = plotutil.Color(i)
	l.LineStyle.Width = vg.Points(1.5)
}

// addLine adds xys as a line named name (no legend entry when empty) and
// returns it; nil when there are no points.
func addLine(p *plot.Plot, name string, xys plotter.XYs, style func(*plotter.Line)) *plotter.Line {
	if len(xys) == 0 {
		return nil
	}
	l, err := plotter.NewLine(xys)
	if err != nil {
		return nil // NaN or Inf points, which series keeps out
	}
	style(l)
	p.Add(l)
	if name != "" {
		p.Legend.Add(name, l)
	}
	return l
}

// markWarmup draws a vertical line at the end of warm-up from lo to hi.
func markWarmup(p *plot.Plot, rep *report, lo, hi float64) {
	x := rep.Plan.WarmupS / 60
	addLine(p, "end of warm-up", plotter.XYs{{X: x, Y: lo}, {X: x, Y: hi}}, func(l *plotter.Line) {
		l.LineStyle.Color, l.LineStyle.Width, l.LineStyle.Dashes = warmupColor, thin(), dashes()
	})
}

func rssPanel(rep *report) *plot.Plot {
	p := plot.New()
	p.Title.Text = "server RSS"
	p.Legend.Left = true // the line starts low and rises to the right
	p.Y.Label.Text = "MB"
	p.Y.Min = 0
	rss := series(rep.Samples, func(s Sample) float64 { return s.RSSMB }, every)
	addLine(p, "RSS", rss, func(l *plotter.Line) { styled(l, 0) })
	top := 1.0
	for _, xy := range rss {
		top = max(top, xy.Y)
	}
	if warm := rep.Verdict.RSSWarmMB; warm > 0 && len(rss) > 0 {
		limit := warm * rep.Config.RSSGrowth
		top = max(top, limit)
		addLine(p, fmt.Sprintf("bound: %.2f× the RSS at the end of warm-up", rep.Config.RSSGrowth),
			plotter.XYs{{X: rep.Plan.WarmupS / 60, Y: limit}, {X: rss[len(rss)-1].X, Y: limit}}, func(l *plotter.Line) {
				l.LineStyle.Color, l.LineStyle.Width, l.LineStyle.Dashes = boundColor, thin(), dashes()
			})
	}
	markWarmup(p, rep, 0, top)
	p.Y.Max = top * 1.1
	return p
}

func p99Panel(rep *report) *plot.Plot {
	p := plot.New()
	p.Title.Text = "p99 latency per class, each sample interval"
	p.Y.Label.Text = "ms (log scale)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, c := range rep.Classes {
		xys := series(rep.Samples, func(s Sample) float64 { return s.Classes[c.Name].P99Ms }, positive)
		for _, xy := range xys {
			lo, hi = min(lo, xy.Y), max(hi, xy.Y)
		}
		addLine(p, c.Name, xys, func(l *plotter.Line) { styled(l, i+1) })
	}
	if lo > hi { // no latency at all: keep the log axis valid
		lo, hi = 0.1, 1
	}
	// Whole decades, so that the log axis has ticks at both ends even
	// when every latency falls within one decade.
	p.Y.Min = math.Pow(10, math.Floor(math.Log10(lo)))
	p.Y.Max = math.Pow(10, math.Ceil(math.Log10(hi)))
	if p.Y.Max <= p.Y.Min {
		p.Y.Max = p.Y.Min * 10
	}
	markWarmup(p, rep, p.Y.Min, p.Y.Max)
	return p
}

func opsPanel(rep *report) *plot.Plot {
	p := plot.New()
	p.Title.Text = fmt.Sprintf("requests/s (offered %.0f/s in all)", rep.Config.Rate)
	p.Y.Label.Text = "requests/s"
	p.Y.Min = 0
	top := 1.0
	total := series(rep.Samples, func(s Sample) float64 { return s.OpsPerSec }, every)
	for _, xy := range total {
		top = max(top, xy.Y)
	}
	addLine(p, "all classes", total, func(l *plotter.Line) { styled(l, 0); l.LineStyle.Color = color.Black })
	for i, c := range rep.Classes {
		addLine(p, c.Name, series(rep.Samples, func(s Sample) float64 { return s.Classes[c.Name].OpsPerSec }, every),
			func(l *plotter.Line) { styled(l, i+1) })
	}
	markWarmup(p, rep, 0, top)
	p.Y.Max = top * 1.15
	return p
}
