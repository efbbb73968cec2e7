// Package storetest checks that a state.Store keeps the contract the
// adapter relies on: not found, round trip of the schema-1 document,
// conditional saves that never lose an update, refusal of invalid
// documents, and concurrent writers of one thread. Every store (file,
// memory, Redis) runs it, as testing/fstest serves file systems.
//
// It owns only these checks; it must not depend on a particular store.
package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// Writers is how many goroutines race on one thread in the concurrency
// check.
const Writers = 50

// Run checks the contract on fresh stores made by open (each call must
// return an empty store).
func Run(t *testing.T, open func(t *testing.T) state.Store) {
	t.Run("NotFound", func(t *testing.T) { notFound(t, open(t)) })
	t.Run("RoundTrip", func(t *testing.T) { roundTrip(t, open(t)) })
	t.Run("ConditionalSave", func(t *testing.T) { conditional(t, open(t)) })
	t.Run("InvalidDocument", func(t *testing.T) { invalid(t, open(t)) })
	t.Run("ConcurrentWriters", func(t *testing.T) { concurrent(t, open(t)) })
}

// Thread returns a valid new document for id.
func Thread(id string) *state.Thread {
	user := "user-1"
	return state.NewThread(id, "/work/ws", &user, "exec-1", "inv-1")
}

func notFound(t *testing.T, s state.Store) {
	if _, rev, err := s.Load(context.Background(), "thread-none"); !errors.Is(err, state.ErrNotFound) || rev != state.NoRevision {
		t.Fatalf("Load of a missing thread: %q %v, want ErrNotFound", rev, err)
	}
	if _, _, err := s.Load(context.Background(), ""); !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("Load of the empty id: %v, want ErrUnavailable", err)
	}
}

func roundTrip(t *testing.T, s state.Store) {
	ctx := context.Background()
	in := Thread("thread-rt")
	in.RunDigests["run-1"] = "d1"
	in.Execution.Pending["perm-1"] = state.Pending{Value: map[string]any{"inputId": "perm-1", "kind": "permission", "secret": "x"}}
	rev, err := s.Save(ctx, in, state.NoRevision)
	if err != nil || rev == state.NoRevision {
		t.Fatalf("Save: %q %v", rev, err)
	}
	out, got, err := s.Load(ctx, "thread-rt")
	if err != nil || got != rev {
		t.Fatalf("Load: rev %q (saved %q) %v", got, rev, err)
	}
	want, _ := state.Encode(in)
	have, _ := state.Encode(out)
	if string(want) != string(have) {
		t.Fatalf("document changed in the store:\n%s\nwant\n%s", have, want)
	}
	if _, leaked := out.Execution.Pending["perm-1"].Value["secret"]; leaked {
		t.Fatal("a key outside the projection allowlist was stored")
	}
}

func conditional(t *testing.T, s state.Store) {
	ctx := context.Background()
	r1, err := s.Save(ctx, Thread("thread-c"), state.NoRevision)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Save(ctx, Thread("thread-c"), state.NoRevision); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("create over an existing document: %v, want ErrConflict", err)
	}
	a, b := Thread("thread-c"), Thread("thread-c")
	a.RunDigests["run-a"] = "da"
	b.RunDigests["run-b"] = "db"
	r2, err := s.Save(ctx, a, r1)
	if err != nil || r2 == r1 {
		t.Fatalf("first writer: %q %v", r2, err)
	}
	if _, err := s.Save(ctx, b, r1); !errors.Is(err, state.ErrConflict) {
		t.Fatalf("second writer on a stale revision: %v, want ErrConflict", err)
	}
	now, rev, err := s.Load(ctx, "thread-c")
	if err != nil || rev != r2 || now.RunDigests["run-a"] != "da" || now.RunDigests["run-b"] != "" {
		t.Fatalf("after the race: %q %v %v", rev, now.RunDigests, err)
	}
}

func invalid(t *testing.T, s state.Store) {
	bad := Thread("thread-bad")
	bad.ContextID = ""
	if _, err := s.Save(context.Background(), bad, state.NoRevision); !errors.Is(err, state.ErrInvalidDocument) {
		t.Fatalf("Save of an invalid document: %v, want ErrInvalidDocument", err)
	}
	if _, _, err := s.Load(context.Background(), "thread-bad"); !errors.Is(err, state.ErrNotFound) {
		t.Fatalf("the invalid document was stored: %v", err)
	}
}

// concurrent has Writers goroutines each add its own run id to one thread,
// reloading and re-applying on every conflict: all of them must be there.
func concurrent(t *testing.T, s state.Store) {
	ctx := context.Background()
	if _, err := s.Save(ctx, Thread("thread-w"), state.NoRevision); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, Writers)
	for i := range Writers {
		wg.Go(func() {
			for {
				doc, rev, err := s.Load(ctx, "thread-w")
				if err != nil {
					errs <- err
					return
				}
				doc.RunDigests[fmt.Sprintf("run-%d", i)] = "d"
				_, err = s.Save(ctx, doc, rev)
				if errors.Is(err, state.ErrConflict) {
					continue
				}
				if err != nil {
					errs <- err
				}
				return
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	doc, _, err := s.Load(ctx, "thread-w")
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.RunDigests) != Writers {
		t.Fatalf("%d of %d writers' updates survived", len(doc.RunDigests), Writers)
	}
}
