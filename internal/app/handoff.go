package app

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/iac-code-agui/iac-code-agui/internal/config"
	"github.com/iac-code-agui/iac-code-agui/internal/demoagent"
	"github.com/iac-code-agui/iac-code-agui/internal/fence"
	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// configDir is iac-code's configuration root: IAC_CODE_CONFIG_DIR, else
// ~/.iac-code (protocol.md §8.1, §8.9).
func configDir(getenv func(string) string) string {
	dir := getenv("IAC_CODE_CONFIG_DIR")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		return filepath.Join(home, ".iac-code")
	}
	if rest, ok := strings.CutPrefix(dir, "~"); ok {
		if home, err := os.UserHomeDir(); err == nil {
			dir = home + rest
		}
	}
	abs, err := filepath.Abs(os.ExpandEnv(dir))
	if err != nil {
		return dir
	}
	return abs
}

// writerFence is the session-handoff writer fence: on only when
// IAC_CODE_HANDOFF_SHARED_DIR is set (protocol.md §8.9).
func writerFence(getenv func(string) string) *fence.Fence {
	return fence.FromEnv(getenv, configDir(getenv))
}

// demoHandoff is the embedded agent's session-handoff service: with the
// fence on, it reads and writes this adapter's thread files (the file
// store only; with Redis there are none and it refuses every identity).
func demoHandoff(cfg *config.Config, getenv func(string) string, f *fence.Fence) *demoagent.HandoffOptions {
	if !f.Enabled() {
		return nil
	}
	return &demoagent.HandoffOptions{
		SharedDir:  getenv(fence.SharedDirEnv),
		PrivateDir: filepath.Join(configDir(getenv), "handoff-prepared"),
		Fence:      f,
		ThreadFile: func(threadID string) (string, error) {
			if storeKind(cfg) != config.StateStoreFile {
				return "", errors.New("thread files exist only with the file store")
			}
			key, err := state.FileKey(threadID)
			if err != nil {
				return "", err
			}
			// cfg.StateDir is read when called: the demo's default state
			// directory is set after the agent starts.
			return filepath.Join(cfg.StateDir, "threads", key+".json"), nil
		},
	}
}
