package report

import (
	"fmt"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
)

// textWidth is the width of s in the plots' font at size.
func textWidth(s string, size vg.Length) vg.Length {
	sty := text.Style{Font: font.From(plot.DefaultFont, size), Handler: plot.DefaultTextHandler}
	return sty.Width(s)
}

// fitLabels keeps names as a figure's labels when each is at most width
// wide at size; otherwise the labels are the numbers 1 … n, and key says
// which name each stands for (for the caption): a long network name
// slanted across a figure covers its neighbours and the axis.
func fitLabels(names []string, width, size vg.Length) (labels []string, key string) {
	fits := true
	for _, n := range names {
		if textWidth(n, size) > width {
			fits = false
			break
		}
	}
	if fits {
		return names, ""
	}
	parts := make([]string, len(names))
	labels = make([]string, len(names))
	for i, n := range names {
		labels[i] = strconv.Itoa(i + 1)
		parts[i] = fmt.Sprintf("%d = %s", i+1, n)
	}
	return labels, " Labels: " + strings.Join(parts, "; ") + "."
}

// legendLabels are fitLabels for the legend of an 8-inch-wide figure:
// names of at most 2 inches at the legend's 12 points, so that the
// legend covers little of the lines.
func legendLabels(names []string) (labels []string, key string) {
	return fitLabels(names, 2*vg.Inch, vg.Points(12))
}

// seriesDashes tells the lines of series i apart from those of the same
// colour: solid for the first round of plotutil's colours, dashed
// after.
func seriesDashes(i int) []vg.Length {
	return plotutil.Dashes(i / len(plotutil.DefaultColors))
}

// axisLabels are fitLabels for the nominal x axis of a figure width
// wide with n slots (less an inch for the y axis), at the ticks' 10
// points, with a tenth of each slot left between neighbours.
func axisLabels(names []string, width vg.Length) (labels []string, key string) {
	slot := (width - vg.Inch) / vg.Length(max(len(names), 1))
	return fitLabels(names, 0.9*slot, vg.Points(10))
}
