package server

import (
	"net/http"

	"github.com/iac-code-agui/iac-code-agui/internal/console"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// patternConsoleRoots is the console's one read-only call besides the
// protocol: the allowed workspace roots, which the console shows when a
// workspace is refused as outside them (docs/decisions.md, "The console
// shows the allowed roots"). The error envelope never names a path the
// client did not send (protocol.md §2.4), so the roots come from here.
const patternConsoleRoots = "GET " + console.Path + "/workspace-roots"

// consoleRoots answers {"allowedRoots":[…]}. The roots are server paths,
// so the route sits behind the bearer token when one is configured.
func (h *Handler) consoleRoots(w http.ResponseWriter, r *http.Request) {
	if !h.authorized(r) {
		writeError(w, requestLang(r), http.StatusUnauthorized, "UNAUTHORIZED", i18n.MsgUnauthorized)
		return
	}
	roots := h.opts.Adapter.AllowedRoots()
	if roots == nil {
		roots = []string{}
	}
	writeJSON(w, http.StatusOK, map[string][]string{"allowedRoots": roots})
}
