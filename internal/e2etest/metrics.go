package e2etest

import (
	"strconv"
	"strings"
)

// Sample returns the value of the line of a Prometheus text exposition
// (GET /metrics) that starts with series and a space, or -1 when there is
// none or its value is not a number. series is the metric's name with its
// labels as exposed, e.g. `iac_code_agui_runs_total{code="",kind="new"}`.
func Sample(body, series string) float64 {
	for l := range strings.SplitSeq(body, "\n") {
		if v, ok := strings.CutPrefix(l, series+" "); ok {
			f, err := strconv.ParseFloat(v, 64)
			if err != nil {
				return -1
			}
			return f
		}
	}
	return -1
}
