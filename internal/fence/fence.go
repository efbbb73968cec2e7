// Package fence owns the session-handoff writer fence (protocol.md §8.9):
// the cross-process barrier files <config>/handoff-control/<sha256(key)>.json
// and .lock that the adapter and the A2A session-handoff service share, so
// that no process writes a thread after its session was handed to another
// sandbox. The document's members are the ones iac-code's handoff service
// reads and writes (phase, epoch, writerCounter, sourceCounter, operations,
// targetOwner, migrationId, commitId); members it does not know are kept.
//
// It owns those two files per key, the lock discipline (gofrs/flock, held
// only for one check-and-write) and the validation of a physical execution
// owner. It must not know threads, HTTP or the AG-UI and A2A formats: the
// adapter calls Write and Admit around its saves and admissions, the demo
// agent calls the handoff side (Quiesce, WaitCommit, Authorize).
package fence

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"
)

// Version is the session-handoff protocol version.
const Version = "session-handoff-v1"

// SharedDirEnv enables the fence (and names the shared handoff store).
const SharedDirEnv = "IAC_CODE_HANDOFF_SHARED_DIR"

// Phases of a key's barrier.
const (
	PhaseActive        = "ACTIVE"
	PhasePreparing     = "PREPARING"
	PhaseQuiesced      = "QUIESCED"
	PhasePrepared      = "PREPARED"
	PhaseWaitingCommit = "WAITING_COMMIT"
)

var (
	// ErrFrozen: the key is being handed over (or was handed over); nothing
	// may be written or admitted here.
	ErrFrozen = errors.New("fence: the session is awaiting handoff authorization")
	// ErrStale: the writer loaded the thread under an older epoch; another
	// physical owner writes it now.
	ErrStale = errors.New("fence: a stale writer cannot write a newer physical owner")
	// ErrOwner: the admission's owner is missing, invalid or not the bound
	// one.
	ErrOwner = errors.New("fence: an authenticated physical execution owner is required")
	// ErrUnverifiable: the barrier file cannot be read as a barrier.
	ErrUnverifiable = errors.New("fence: the private writer barrier is unverifiable")
)

// Fence is the barrier directory of one process' config dir. A nil *Fence
// is the disabled fence: every method allows everything.
type Fence struct {
	root string
}

// New returns the fence rooted at dir (<config>/handoff-control).
func New(dir string) *Fence { return &Fence{root: dir} }

// FromEnv returns the fence of configDir when IAC_CODE_HANDOFF_SHARED_DIR
// is set, else nil (disabled), as the original.
func FromEnv(getenv func(string) string, configDir string) *Fence {
	if getenv(SharedDirEnv) == "" {
		return nil
	}
	return New(filepath.Join(configDir, "handoff-control"))
}

// Enabled reports whether the fence is on.
func (f *Fence) Enabled() bool { return f != nil }

// Root is the barrier directory ("" when disabled).
func (f *Fence) Root() string {
	if f == nil {
		return ""
	}
	return f.root
}

// ThreadKey is the fence key of an AG-UI thread.
func ThreadKey(threadID string) string { return "thread:" + threadID }

func (f *Fence) paths(key string) (string, string) {
	sum := sha256.Sum256([]byte(key))
	d := hex.EncodeToString(sum[:])
	return filepath.Join(f.root, d+".json"), filepath.Join(f.root, d+".lock")
}

// doc is a barrier document; unknown members are kept as they are.
type doc map[string]any

func (d doc) phase() string { s, _ := d["phase"].(string); return s }

func (d doc) num(k string) int64 {
	n, _ := d[k].(json.Number)
	v, _ := n.Int64()
	return v
}

func (d doc) ops() map[string]any { m, _ := d["operations"].(map[string]any); return m }

// epoch is the writer epoch: the source's counter while it prepares, the
// writer counter otherwise.
func (d doc) epoch() int64 {
	if d.phase() == PhasePreparing {
		return d.num("sourceCounter")
	}
	return d.num("writerCounter")
}

func read(path string) (doc, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return doc{"phase": PhaseActive, "epoch": json.Number("0"), "writerCounter": json.Number("0"), "operations": map[string]any{}}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnverifiable, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var d doc
	if err := dec.Decode(&d); err != nil || d == nil || d.ops() == nil {
		return nil, ErrUnverifiable
	}
	switch d.phase() {
	case PhaseActive, PhasePreparing, PhaseQuiesced, PhasePrepared, PhaseWaitingCommit:
	default:
		return nil, ErrUnverifiable
	}
	counters := []string{"epoch", "writerCounter"}
	if _, ok := d["sourceCounter"]; ok || d.phase() == PhasePreparing {
		counters = append(counters, "sourceCounter")
	}
	for _, k := range counters {
		n, ok := d[k].(json.Number)
		v, err := n.Int64()
		if !ok || err != nil || v < 0 {
			return nil, ErrUnverifiable
		}
	}
	if d.phase() == PhasePreparing && d.num("writerCounter") != d.num("sourceCounter")+1 {
		return nil, ErrUnverifiable
	}
	return d, nil
}

func write(path string, d doc) error {
	b, err := json.Marshal(d)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	name := tmp.Name()
	_, err = tmp.Write(append(b, '\n'))
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(name, path)
	}
	if err != nil {
		_ = os.Remove(name)
		return err
	}
	if dir, derr := os.Open(filepath.Dir(path)); derr == nil {
		_ = dir.Sync()
		_ = dir.Close()
	}
	return nil
}

// locked runs fn on the key's document under its cross-process lock; fn
// returns whether the document changed and must be written.
func (f *Fence) locked(key string, fn func(doc) (bool, error)) error {
	if err := os.MkdirAll(f.root, 0o700); err != nil {
		return err
	}
	path, lockPath := f.paths(key)
	l := flock.New(lockPath, flock.SetPermissions(0o600))
	if err := l.Lock(); err != nil {
		return err
	}
	defer func() { _ = l.Unlock() }()
	d, err := read(path)
	if err != nil {
		return err
	}
	changed, err := fn(d)
	if err != nil || !changed {
		return err
	}
	return write(path, d)
}

// Epoch is the key's current writer epoch (0 when disabled).
func (f *Fence) Epoch(key string) (int64, error) {
	if f == nil {
		return 0, nil
	}
	var e int64
	err := f.locked(key, func(d doc) (bool, error) { e = d.epoch(); return false, nil })
	return e, err
}

// Owner is the key's bound physical owner (nil when none or disabled).
func (f *Fence) Owner(key string) (map[string]any, error) {
	if f == nil {
		return nil, nil
	}
	var o map[string]any
	err := f.locked(key, func(d doc) (bool, error) { o, _ = d["targetOwner"].(map[string]any); return false, nil })
	return o, err
}

// Write runs save under the key's lock when the writer's epoch (the one it
// loaded the thread under) is still current and the key is not frozen by
// a handoff: a save is serialised with every other process' write of the
// key. Holding the lock for the write, instead of registering an operation
// in the document as iac-code does, leaves nothing behind when a process
// dies mid-write (docs/decisions.md).
func (f *Fence) Write(key string, actorEpoch int64, save func() error) error {
	if f == nil {
		return save()
	}
	return f.locked(key, func(d doc) (bool, error) {
		if actorEpoch != d.epoch() {
			return false, ErrStale
		}
		switch d.phase() {
		case PhaseQuiesced, PhasePrepared, PhaseWaitingCommit:
			return false, ErrFrozen
		}
		return false, save()
	})
}

// Admit binds the admission's physical owner to the key (protocol.md
// §8.9): the key must be active (not being handed over), and an owner
// bound before must be the same one. owner is the canonical form
// (CanonicalOwner).
func (f *Fence) Admit(key string, owner map[string]any) error {
	if f == nil {
		return nil
	}
	if owner == nil {
		return ErrOwner
	}
	return f.locked(key, func(d doc) (bool, error) {
		if d.phase() != PhaseActive {
			return false, ErrFrozen
		}
		if cur, ok := d["targetOwner"].(map[string]any); ok {
			if !sameJSON(cur, owner) {
				return false, ErrOwner
			}
			return false, nil
		}
		d["targetOwner"] = owner
		return true, nil
	})
}

// Quiesce freezes the key for the handoff migrationID at epoch on the
// source (the A2A prepare step, collapsed with its quiesce): it refuses a
// key that is not active, belongs to a newer epoch or has operations in
// progress; a repeat for the same migration is accepted. The writer
// counter moves on, so the source's writers are stale from now on.
func (f *Fence) Quiesce(key, migrationID string, epoch int64) (bool, error) {
	ok := false
	err := f.locked(key, func(d doc) (bool, error) {
		if d["migrationId"] == migrationID && d.num("epoch") == epoch && d.phase() == PhaseQuiesced {
			ok = true
			return false, nil
		}
		if d.phase() != PhaseActive || d.num("epoch") > epoch || len(d.ops()) > 0 {
			return false, nil
		}
		counter := d.num("writerCounter")
		d["phase"], d["migrationId"], d["epoch"] = PhaseQuiesced, migrationID, json.Number(fmt.Sprint(epoch))
		d["sourceCounter"], d["writerCounter"] = json.Number(fmt.Sprint(counter)), json.Number(fmt.Sprint(counter+1))
		ok = true
		return true, nil
	})
	return ok, err
}

// WaitCommit reserves the key on the destination for migrationID (the A2A
// restore step): no operation in progress, no newer epoch, and no other
// owner or migration holding it.
func (f *Fence) WaitCommit(key, migrationID string, epoch int64) error {
	return f.locked(key, func(d doc) (bool, error) {
		same := d["migrationId"] == migrationID && d.num("epoch") == epoch
		switch {
		case len(d.ops()) > 0 || d.num("epoch") > epoch:
			return false, ErrOwner
		case d.phase() == PhaseWaitingCommit && same:
			return false, nil
		case d.phase() == PhaseWaitingCommit:
			return false, ErrFrozen
		case d.phase() == PhaseActive && d["targetOwner"] != nil && !same:
			return false, ErrOwner
		case d.phase() != PhaseActive && d.phase() != PhaseQuiesced:
			return false, ErrFrozen
		}
		d["phase"], d["migrationId"], d["epoch"], d["commitId"] = PhaseWaitingCommit, migrationID, json.Number(fmt.Sprint(epoch)), nil
		return true, nil
	})
}

// Authorize activates the destination (the A2A authorize step): the
// writer counter moves on (every writer that loaded the key before is
// stale), the phase is active again and owner is the bound owner.
func (f *Fence) Authorize(key, migrationID string, epoch int64, commitID string, owner map[string]any) error {
	return f.locked(key, func(d doc) (bool, error) {
		if d["migrationId"] != migrationID || d.num("epoch") != epoch || (d.phase() != PhaseWaitingCommit && d.phase() != PhaseActive) {
			return false, ErrFrozen
		}
		if c, ok := d["commitId"].(string); ok && c != commitID {
			return false, ErrFrozen
		}
		if d.phase() == PhaseActive {
			if cur, _ := d["targetOwner"].(map[string]any); !sameJSON(cur, owner) {
				return false, ErrOwner
			}
			return false, nil
		}
		d["writerCounter"] = json.Number(fmt.Sprint(d.num("writerCounter") + 1))
		d["phase"], d["commitId"], d["targetOwner"] = PhaseActive, commitID, owner
		return true, nil
	})
}

func sameJSON(a, b any) bool {
	x, err1 := json.Marshal(a)
	y, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && bytes.Equal(x, y)
}
