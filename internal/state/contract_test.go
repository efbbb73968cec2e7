package state_test

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

func TestMemStoreContract(t *testing.T) {
	storetest.Run(t, func(*testing.T) state.Store { return state.NewMemStore() })
}
