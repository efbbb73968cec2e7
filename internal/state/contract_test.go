package state_test

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

func TestFileStoreContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) state.Store {
		s := state.NewFileStore(t.TempDir())
		// Before the directory goes: the store may be making spares.
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) state.Store { return state.NewMemStore() })
}
