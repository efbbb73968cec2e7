package tracing

import (
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/propagation"
)

// propagators reads OTEL_PROPAGATORS: tracecontext and baggage are
// supported, none turns propagation off, and the default is
// tracecontext,baggage (the specification's).
func propagators(v string, log *slog.Logger) propagation.TextMapPropagator {
	if strings.TrimSpace(v) == "" {
		v = "tracecontext,baggage"
	}
	var list []propagation.TextMapPropagator
	seen := map[string]bool{}
	for _, name := range strings.Split(v, ",") {
		name = strings.ToLower(strings.TrimSpace(name))
		if seen[name] {
			continue
		}
		seen[name] = true
		switch name {
		case "tracecontext":
			list = append(list, propagation.TraceContext{})
		case "baggage":
			list = append(list, propagation.Baggage{})
		case "none":
			return propagation.NewCompositeTextMapPropagator()
		case "":
		default:
			log.Warn("OTEL_PROPAGATORS value not supported; ignored", "propagator", name)
		}
	}
	return propagation.NewCompositeTextMapPropagator(list...)
}
