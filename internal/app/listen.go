package app

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"syscall"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// listen opens the HTTP port. A port that is taken gets a hint about
// --port instead of the bare bind error a newcomer cannot act on.
func listen(addr string) (net.Listener, error) {
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &config.Error{Msg: i18n.MsgPortInUse, Args: []any{addr}}
	}
	return ln, err
}

// demoStateDir is where the embedded demo agent's threads are kept when no
// state directory was configured: apart from ~/.iac-code, the real
// iac-code's folder, so trying the demo leaves nothing in a user's real
// configuration (docs/decisions.md). The demo agent forgets its tasks on
// exit anyway, so these files only matter within one run.
func demoStateDir() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "iac-code-agui", "demo-state")
	}
	return filepath.Join(os.TempDir(), "iac-code-agui-demo-state")
}
