package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmbeddedAgentBackupDir: IAC_CODE_CONFIG_BACKUP_DIR reaches the
// embedded agent, which writes the session of a turn there
// (docs/demo-agent.md, "Shared backup directory").
func TestEmbeddedAgentBackupDir(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "backup")
	t.Setenv("PATH", t.TempDir()) // the embedded agent
	r := startMain(t, map[string]string{"IAC_CODE_AGUI_ALLOWED_CWDS": root, "IAC_CODE_CONFIG_BACKUP_DIR": dir})
	r.waitHealthy(t)
	if evs := r.runNormalTurn(t, root); evs[len(evs)-1]["type"] != "RUN_FINISHED" {
		t.Fatalf("turn: %v", evs[len(evs)-1])
	}
	ents, err := os.ReadDir(dir)
	if err != nil || len(ents) != 1 {
		t.Fatalf("backup dir: %v %v", ents, err)
	}
	var f struct {
		ContextID, SessionID, Cwd string
	}
	raw, _ := os.ReadFile(filepath.Join(dir, ents[0].Name()))
	if err := json.Unmarshal(raw, &f); err != nil || !strings.HasPrefix(f.ContextID, "agui-") || ents[0].Name() != f.SessionID+".json" || f.Cwd != filepath.Join(root, "ws") {
		t.Fatalf("session file %s: %v", raw, err)
	}
}
