package app

import (
	"errors"
	"net"
	"strings"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/i18n"
)

// TestBusyPortNamesPortFlag: a taken port is reported with a hint about
// --port, in the user's language, instead of the bare bind error.
func TestBusyPortNamesPortFlag(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	addr := taken.Addr().String()
	_, err = listen(addr)
	var ce *config.Error
	if !errors.As(err, &ce) {
		t.Fatalf("got %v, want a *config.Error", err)
	}
	if got := ce.Localized(i18n.EN); got != "The address "+addr+" is already in use; choose another port with --port (or IAC_CODE_AGUI_PORT)." {
		t.Fatalf("message %q", got)
	}
	if got := ce.Localized(i18n.DE); !strings.Contains(got, addr) || !strings.Contains(got, "--port") || strings.HasPrefix(got, "The address") {
		t.Fatalf("German message %q", got)
	}
}

// TestDemoAgentHelp: `demo-agent --help` prints the demo agent's own help.
func TestDemoAgentHelp(t *testing.T) {
	var out, errb strings.Builder
	if code := Main([]string{"demo-agent", "--help"}, func(string) string { return "" }, &out, &errb); code != 0 ||
		!strings.HasPrefix(out.String(), "Run the embedded demo agent alone") || strings.Contains(out.String(), "--state-dir") {
		t.Fatalf("demo-agent --help: %d %q", code, out.String())
	}
}
