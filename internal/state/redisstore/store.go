package redisstore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// HistoryLength bounds the revision history kept per thread (approximate:
// Redis trims whole stream nodes).
const HistoryLength = 1000

// Store is a state.Store on Redis.
type Store struct {
	c      redis.UniversalClient
	prefix string
	batch  batcher
}

var _ state.Store = (*Store)(nil)

// New returns a store on c whose keys start with prefix.
func New(c redis.UniversalClient, prefix string) *Store {
	return &Store{c: c, prefix: prefix, batch: batcher{c: c}}
}

// keys returns the document hash and the history stream of a thread.
func (s *Store) keys(threadID string) (doc, history string, err error) {
	fk, err := state.FileKey(threadID)
	if err != nil {
		return "", "", err
	}
	base := s.prefix + "thread:{" + fk + "}"
	return base, base + ":history", nil
}

// LeaseKeys returns the key of a thread's ownership lease and of its
// document hash under prefix. internal/cluster writes the lease and the
// hash's "fence" field (the fencing counter), which the store never reads:
// the counter lives exactly as long as the document. The keys share the
// document's hash tag, so the save script may read the lease on Cluster.
func LeaseKeys(prefix, threadID string) (owner, doc string, err error) {
	fk, err := state.FileKey(threadID)
	if err != nil {
		return "", "", err
	}
	return prefix + "owner:{" + fk + "}", prefix + "thread:{" + fk + "}", nil
}

// saveScript writes ARGV[2] as the document if the stored revision is
// ARGV[1] ("" when none is stored) and, when ARGV[4] is a lease, the
// thread's lease (KEYS[3]) is still exactly it, or has lapsed with nobody
// having taken the thread since (the fencing counter in the hash is still
// the lease's token: a Redis stall longer than the lease must not fence
// its owner); it bumps the revision and logs it. It answers {1, new revision}, {0, stored revision} or {2, ""}
// (fenced). A hash that held only the fencing counter had the lease's
// expiry; the first document makes it permanent.
//
// ARGV[5] is the save's own random id, kept in the hash as "wid": the
// same save run again (go-redis sends a pipeline again, whole, when its
// connection breaks before every answer is read) finds its own write and
// answers {1, stored revision} instead of a conflict, which would make the
// writer re-apply a change that is already stored.
var saveScript = redis.NewScript(`
local cur = redis.call('HGET', KEYS[1], 'rev')
if not cur then cur = '' end
if cur ~= ARGV[1] and cur ~= '' and redis.call('HGET', KEYS[1], 'wid') == ARGV[5] then return {1, cur} end
if ARGV[4] ~= '' then
  local owner = redis.call('GET', KEYS[3])
  if owner ~= ARGV[4] and (owner or redis.call('HGET', KEYS[1], 'fence') ~= string.match(ARGV[4], ' (%d+)$')) then return {2, ''} end
end
if cur ~= ARGV[1] then return {0, cur} end
local rev = redis.call('HINCRBY', KEYS[1], 'rev', 1)
redis.call('HSET', KEYS[1], 'doc', ARGV[2], 'wid', ARGV[5])
if cur == '' then redis.call('PERSIST', KEYS[1]) end
redis.call('XADD', KEYS[2], 'MAXLEN', '~', ARGV[3], '*', 'rev', rev, 'prev', ARGV[1])
return {1, tostring(rev)}
`)

// writeID returns a save's random id (saveScript's ARGV[5]).
func writeID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Load implements state.Store.
func (s *Store) Load(ctx context.Context, threadID string) (*state.Thread, state.Revision, error) {
	if err := ctx.Err(); err != nil {
		return nil, state.NoRevision, err
	}
	key, _, err := s.keys(threadID)
	if err != nil {
		return nil, state.NoRevision, fmt.Errorf("%w: %w", state.ErrUnavailable, err)
	}
	lc := &loadCmd{key: key}
	s.batch.do(lc)
	vals, err := lc.cmd.Result()
	if err != nil {
		return nil, state.NoRevision, fmt.Errorf("%w: redis: %w", state.ErrUnavailable, err)
	}
	data, _ := vals[0].(string)
	rev, _ := vals[1].(string)
	if vals[0] == nil {
		return nil, state.NoRevision, state.ErrNotFound
	}
	t, err := state.Decode([]byte(data), threadID)
	if err != nil {
		return nil, state.NoRevision, err
	}
	return t, state.Revision(rev), nil
}

// Save implements state.Store.
func (s *Store) Save(ctx context.Context, t *state.Thread, prev state.Revision) (state.Revision, error) {
	if err := ctx.Err(); err != nil {
		return state.NoRevision, err
	}
	data, err := state.Encode(t)
	if err != nil {
		return state.NoRevision, err
	}
	key, history, err := s.keys(t.ThreadID)
	if err != nil {
		return state.NoRevision, fmt.Errorf("%w: %w", state.ErrInvalidDocument, err)
	}
	owner, _, _ := LeaseKeys(s.prefix, t.ThreadID)
	sc := &saveCmd{keys: []string{key, history, owner}, args: []any{string(prev), data, HistoryLength, state.LeaseOf(ctx), writeID()}}
	s.batch.do(sc)
	res, err := sc.cmd.Slice()
	if err != nil {
		return state.NoRevision, fmt.Errorf("%w: redis: %w", state.ErrUnavailable, err)
	}
	if len(res) != 2 {
		return state.NoRevision, fmt.Errorf("%w: redis: unexpected script answer", state.ErrUnavailable)
	}
	ok, _ := res[0].(int64)
	rev, _ := res[1].(string)
	switch ok {
	case 1:
	case 2:
		return state.NoRevision, state.ErrFenced
	default:
		return state.NoRevision, state.ErrConflict
	}
	return state.Revision(rev), nil
}

// History returns the revisions saved for a thread, oldest first, as
// (previous, new) pairs; at most HistoryLength of the newest are kept.
func (s *Store) History(ctx context.Context, threadID string) ([][2]string, error) {
	_, history, err := s.keys(threadID)
	if err != nil {
		return nil, err
	}
	msgs, err := s.c.XRange(ctx, history, "-", "+").Result()
	if err != nil {
		return nil, fmt.Errorf("%w: redis: %w", state.ErrUnavailable, err)
	}
	out := make([][2]string, 0, len(msgs))
	for _, m := range msgs {
		p, _ := m.Values["prev"].(string)
		r, _ := m.Values["rev"].(string)
		out = append(out, [2]string{p, r})
	}
	return out, nil
}

// ErrExists is Import's answer for a thread the store already has.
var ErrExists = errors.New("redisstore: the thread is already in the store")

// Import writes a document read elsewhere (a file of the original adapter)
// if the thread has no document yet; it never overwrites one.
func (s *Store) Import(ctx context.Context, t *state.Thread) error {
	_, err := s.Save(ctx, t, state.NoRevision)
	if errors.Is(err, state.ErrConflict) {
		return ErrExists
	}
	return err
}
