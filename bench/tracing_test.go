package bench

import (
	"context"
	"strconv"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/tracing"
)

// BenchmarkRelayTracingOff compares the relay without any tracing wiring
// ("none", the build before tracing existed) with the wiring of a gateway
// whose tracing is off ("off": OTEL_TRACES_EXPORTER unset, every wrapper
// passed through tracing.Setup's answer, as internal/app does), on long
// runs (-deltas, per-event cost) and on short ones (20 deltas, per-run
// cost). The two must not differ beyond the noise (docs/benchmarks.md).
func BenchmarkRelayTracingOff(b *testing.B) {
	off := tracing.Setup(context.Background(), func(string) string { return "" }, tracing.Options{})
	if off.Enabled() {
		b.Fatal("tracing on without OTEL_TRACES_EXPORTER")
	}
	for _, n := range []int{*benchDeltas, 20} {
		for _, c := range []struct {
			name string
			tr   *tracing.Tracing
			wire bool
		}{{"none", nil, false}, {"off", off, true}} {
			b.Run(c.name+"/deltas="+strconv.Itoa(n), func(b *testing.B) {
				e := newRelayEnvTraced(b, upstreamOptions{deltas: n}, c.wire, c.tr)
				ctx := context.Background()
				b.ReportAllocs()
				i := 0
				for b.Loop() {
					i++
					res, err := e.run(ctx, threadName("trace-"+c.name, i), "run", false)
					if err != nil {
						b.Fatal(err)
					}
					if err := res.check(n); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(b.Elapsed().Seconds()*1e9/(float64(n)*float64(b.N)), "ns/event")
			})
		}
	}
}
