package filestore_test

import (
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
	"github.com/iac-code-agui/iac-code-agui/internal/state/filestore"
	"github.com/iac-code-agui/iac-code-agui/internal/state/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) state.Store { return filestore.New(t.TempDir()) })
}
