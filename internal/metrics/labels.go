package metrics

import "github.com/iac-code-agui/iac-code-agui/internal/projection"

// The adapter passes only its own constants, but labels are bounded here
// as well: a label value that came from upstream data (an input kind) or a
// future caller's mistake must not create one series per request.

// Run kinds and outcomes of adapter.Observer, repeated here so that this
// package does not depend on the adapter.
const (
	kindNew      = "new"
	kindResume   = "resume"
	kindGuidance = "guidance"
)

func runKind(k string) string {
	if k == kindNew || k == kindResume || k == kindGuidance {
		return k
	}
	return other
}

func runOutcome(o string) string {
	switch o {
	case "success", "interrupt", "error", "disconnected":
		return o
	}
	return other
}

// inputKind bounds an input kind label to projection.Kinds: the
// projection comes from A2A, so its kind is not trusted to be one of them.
func inputKind(k string) string {
	if projection.Kind(k).Known() {
		return k
	}
	return other
}

// errorCode keeps a public error code (upper-case letters, digits and
// underscores, as every code of protocol.md §2.6–§2.7) and "" (no error);
// anything else counts as "other".
func errorCode(c string) string {
	if len(c) > 40 {
		return other
	}
	for i := 0; i < len(c); i++ {
		b := c[i]
		if (b < 'A' || b > 'Z') && (b < '0' || b > '9') && b != '_' {
			return other
		}
	}
	return c
}
