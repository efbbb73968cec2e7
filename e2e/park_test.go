package e2e

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/a2a"
	"github.com/iac-code-agui/iac-code-agui/internal/adapter"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/request"
	"github.com/iac-code-agui/iac-code-agui/internal/server"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
)

// TestOfficialClientParkedStreams runs every scenario of run.mjs with
// @ag-ui/client 1.0.0 against streams that are all parked (written by the
// adapter on a hijacked connection, protocol.md §4.1). The binary parks
// only beyond 256 open streams and has no option for it, so the adapter
// runs in this process here: the same server, adapter, file store and
// embedded agent the binary wires, over real loopback HTTP.
func TestOfficialClientParkedStreams(t *testing.T) {
	ensureClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	agent, err := demoagent.Start(ctx, "127.0.0.1:0", demoagent.Options{Token: "up"})
	if err != nil {
		t.Fatal(err)
	}
	defer agent.Close()
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ws := filepath.Join(root, "workspace")
	if err := os.MkdirAll(ws, 0o700); err != nil {
		t.Fatal(err)
	}
	store := filestore.New(t.TempDir())
	ad := adapter.New(adapter.Options{
		Store:        store,
		Upstream:     adapter.A2A(a2a.New(agent.URL, "up")),
		AllowedRoots: request.AllowedRoots([]string{root}),
	})
	srv := httptest.NewServer(server.New(server.Options{Adapter: ad, Version: "e2e", ParkAbove: -1}))
	defer srv.Close()
	runOfficialClient(t, srv.URL+"/", ws)
}
