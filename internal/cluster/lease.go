package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"iter"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/state/redisstore"
)

// DefaultTTL is how long a lease outlives its owner's last renewal.
const DefaultTTL = 15 * time.Second

// Options configures a Cluster.
type Options struct {
	Client redis.UniversalClient
	// Prefix starts every key; it is the state store's prefix, so that the
	// lease and the document of a thread share a hash slot.
	Prefix string
	// AdvertiseURL is this replica's base URL as the other replicas reach
	// it ("http://10.0.0.5:8000/").
	AdvertiseURL string
	// ReplicaURLs are the other replicas' base URLs: the only owners a
	// request is forwarded to (AdvertiseURL is always allowed).
	ReplicaURLs []string
	// Token authenticates forwarded requests between replicas.
	Token string
	// TTL of a lease; DefaultTTL when zero.
	TTL time.Duration
	// Busy reports whether this replica must keep a thread: it has an
	// active run or interrupts waiting in this replica's A2A server.
	Busy   func(ctx context.Context, threadID string) bool
	Logger *slog.Logger
	// ForwardTransport, when set, wraps the transport of forwarded
	// requests (tracing: the request stays in its client's trace).
	ForwardTransport func(http.RoundTripper) http.RoundTripper
}

// Cluster is one replica's view of thread ownership.
type Cluster struct {
	o  Options
	id string
	// allowed holds the normalised base URLs requests may be forwarded to.
	allowed map[string]bool
	// forward sends forwarded requests (forwardTransport, maybe wrapped).
	forward http.RoundTripper

	mu   sync.Mutex
	held map[string]string // thread id → lease value we hold
	// confirmed is, per held thread, when the last claim or renewal that
	// kept its lease was sent: the lease is in force until at least a TTL
	// later (Confirm).
	confirmed map[string]time.Time
	// round is closed, and replaced, each time a renewal round ends, for
	// the streams that wait on Confirm.
	round chan struct{}
	// inflight counts the requests this replica is serving per thread;
	// their leases are renewed and never released under them.
	inflight map[string]int
	// draining is set once the replica stops (Drain): a thread is
	// released as soon as its last request here ends.
	draining bool

	// stripes serialise a thread's claims and releases end to end,
	// Redis call included: a release that waits on a Redis outage must
	// not delete a lease that a request claims meanwhile.
	stripes [64]sync.Mutex

	// releases counts releases started by Done while draining, so that
	// Close waits for them.
	releases sync.WaitGroup

	// drained is closed once the replica drains and no request of a
	// thread it holds is in flight any more (Drained).
	drained     chan struct{}
	drainedOnce sync.Once
}

// ErrDraining is Claim's answer on a stopping replica (Drain) for a
// thread no request is being served of here: it takes no lease and
// forwards nothing, and the caller answers that the client retry, which
// another replica serves (docs/decisions.md, "A stopping replica keeps
// listening until its runs end").
var ErrDraining = errors.New("cluster: this replica is stopping")

// stripe returns the index of a thread's lease lock.
func (c *Cluster) stripe(threadID string) int {
	return int(maphash.String(stripeSeed, threadID) % uint64(len(c.stripes)))
}

// stripeSeed seeds stripe; striping needs no stable hash across runs.
var stripeSeed = maphash.MakeSeed()

// New returns a Cluster for this replica, with a fresh random replica id.
func New(o Options) *Cluster {
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	c := &Cluster{o: o, id: hex.EncodeToString(b[:]), held: map[string]string{}, confirmed: map[string]time.Time{},
		inflight: map[string]int{}, allowed: map[string]bool{}, drained: make(chan struct{}), round: make(chan struct{})}
	c.forward = forwardTransport
	if o.ForwardTransport != nil {
		c.forward = o.ForwardTransport(forwardTransport)
	}
	for _, u := range append([]string{o.AdvertiseURL}, o.ReplicaURLs...) {
		if u != "" {
			c.allowed[normalURL(u)] = true
		}
	}
	return c
}

// ID is this replica's id.
func (c *Cluster) ID() string { return c.id }

// Owner is the replica that holds a thread.
type Owner struct {
	Local bool
	// URL is the owner's advertised base URL (for a remote owner).
	URL string
	// Lease is the lease value, handed to the store with state.WithLease
	// when the owner is this replica.
	Lease string
	// Acquired is true when this claim took the lease anew: what this
	// replica cached of the thread may be stale.
	Acquired bool
	// Absent is true when the claim asked for an existing thread
	// (ClaimExisting) and the store has no document of it: no lease was
	// taken, and Lease is a value no lease ever has, so that any write
	// under it is refused.
	Absent bool
	// Expires is when a remote lease lapses unless renewed.
	Expires time.Duration
	// Done ends the request's hold on a local lease; the caller must call
	// it once the request is answered. Nil for a remote owner.
	Done func()
}

// NoLease is Owner.Lease of an absent thread: the save script compares
// leases exactly, and no lease is ever this value.
const NoLease = "-"

// keys of one thread, shared with the Redis store: the lease and the
// document hash, whose "fence" field is the fencing counter.
func (c *Cluster) keys(threadID string) (owner, doc string, err error) {
	return redisstore.LeaseKeys(c.o.Prefix, threadID)
}

// claimScript takes, keeps or re-takes a thread's lease.
//
// KEYS: the lease, the document hash. ARGV: the replica id, its URL, the
// TTL in ms, the mode ("any": take a free lease; "existing": take it only
// if the document exists; "renew": never take a new one), and the lease
// this replica believes it holds with its fencing token ("" when none).
//
// It answers {1, lease} when this replica holds the lease and renewed it,
// or re-took its own lapsed lease because the fencing counter shows that
// nobody else took the thread since (every write in between carried a
// lease, and no other lease existed, so none happened); {2, lease} when
// it took the lease anew with a new fencing token; {0, lease, pttl} when
// another replica holds it; {3, ""} when the mode forbade taking it (no
// document, or a renewal whose lease was lost).
//
// The counter lives in the document hash, so it lasts as long as the
// document does. A hash that holds only the counter (a thread being
// created, or a claim of one that never came to exist) expires with the
// lease; the save script makes it permanent when it writes the document.
var claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
local nodoc = redis.call('HEXISTS', KEYS[2], 'doc') == 0
if v then
  if string.sub(v, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ' ' then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    if nodoc then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
    return {1, v}
  end
  if ARGV[4] == 'renew' then return {3, ''} end
  return {0, v, redis.call('PTTL', KEYS[1])}
end
if ARGV[5] ~= '' and redis.call('HGET', KEYS[2], 'fence') == ARGV[6] then
  redis.call('SET', KEYS[1], ARGV[5], 'PX', ARGV[3])
  if nodoc then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
  return {1, ARGV[5]}
end
if ARGV[4] == 'renew' or (ARGV[4] == 'existing' and nodoc) then return {3, ''} end
local fence = redis.call('HINCRBY', KEYS[2], 'fence', 1)
if nodoc then redis.call('PEXPIRE', KEYS[2], ARGV[3]) end
v = ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. fence
redis.call('SET', KEYS[1], v, 'PX', ARGV[3])
return {2, v}
`)

// releaseScript deletes the lease if it is still ARGV[1].
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// claim modes (claimScript's ARGV[4]).
const (
	modeAny      = "any"
	modeExisting = "existing"
	modeRenew    = "renew"
)

// Claim returns the owner of a thread, taking the lease when nobody holds
// it. An error means Redis did not answer.
func (c *Cluster) Claim(ctx context.Context, threadID string) (Owner, error) {
	return c.claim(ctx, threadID, modeAny)
}

// ClaimExisting is Claim for a request that only acts on a thread that
// exists (a cancel, an observation): when the store has no document of
// it, no key is written and the answer is Absent.
func (c *Cluster) ClaimExisting(ctx context.Context, threadID string) (Owner, error) {
	return c.claim(ctx, threadID, modeExisting)
}

func (c *Cluster) claim(ctx context.Context, threadID, mode string) (Owner, error) {
	owner, doc, err := c.keys(threadID)
	if err != nil {
		return Owner{}, err
	}
	st := &c.stripes[c.stripe(threadID)]
	st.Lock()
	defer st.Unlock()
	c.mu.Lock()
	mine := c.held[threadID]
	refuse := c.draining && c.inflight[threadID] == 0
	c.mu.Unlock()
	if refuse {
		return Owner{}, ErrDraining
	}
	sent := time.Now()
	res, err := claimScript.Run(ctx, c.o.Client, []string{owner, doc}, c.claimArgs(mine, mode)...).Slice()
	if err != nil {
		return Owner{}, fmt.Errorf("cluster: redis: %w", err)
	}
	kind, value, pttl, err := claimAnswer(res)
	if err != nil {
		return Owner{}, err
	}
	switch kind {
	case 1, 2:
		c.mu.Lock()
		c.held[threadID] = value
		c.confirmed[threadID] = sent
		c.inflight[threadID]++
		c.mu.Unlock()
		var once sync.Once
		done := func() { once.Do(func() { c.done(threadID) }) }
		return Owner{Local: true, Lease: value, Acquired: kind == 2, Done: done}, nil
	case 3:
		return Owner{Local: true, Absent: true, Lease: NoLease, Done: func() {}}, nil
	}
	parts := strings.SplitN(value, " ", 3)
	if len(parts) != 3 {
		return Owner{}, errors.New("cluster: malformed lease")
	}
	return Owner{URL: parts[1], Expires: time.Duration(pttl) * time.Millisecond}, nil
}

// claimArgs are claimScript's ARGV for this replica.
func (c *Cluster) claimArgs(mine, mode string) []any {
	token := ""
	if i := strings.LastIndexByte(mine, ' '); i >= 0 {
		token = mine[i+1:]
	}
	return []any{c.id, c.o.AdvertiseURL, c.o.TTL.Milliseconds(), mode, mine, token}
}

// claimAnswer reads claimScript's answer.
func claimAnswer(res []any) (kind int64, value string, pttl int64, err error) {
	if len(res) < 2 {
		return 0, "", 0, errors.New("cluster: unexpected claim answer")
	}
	kind, _ = res[0].(int64)
	value, _ = res[1].(string)
	if len(res) > 2 {
		pttl, _ = res[2].(int64)
	}
	return kind, value, pttl, nil
}

// done ends one request's hold on a thread. A draining replica releases
// the thread once its last request ends, so another replica serves the
// next one at once.
func (c *Cluster) done(threadID string) {
	c.mu.Lock()
	if c.inflight[threadID]--; c.inflight[threadID] <= 0 {
		delete(c.inflight, threadID)
	}
	release := c.draining && c.inflight[threadID] == 0
	if release {
		c.releases.Add(1)
	}
	if c.draining && len(c.inflight) == 0 {
		c.closeDrained()
	}
	c.mu.Unlock()
	if release {
		go func() {
			defer c.releases.Done()
			ctx, cancel := context.WithTimeout(context.Background(), c.o.TTL)
			defer cancel()
			c.releaseIdle(ctx, []string{threadID})
		}()
	}
}

// Run renews the leases of busy threads and releases the others every
// TTL/3 until ctx ends. It does not release the leases still held then:
// Close does, once the server has let its requests end.
func (c *Cluster) Run(ctx context.Context) {
	t := time.NewTicker(c.o.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.renew(ctx)
		}
	}
}

// renew sends the renewals of every busy thread in one pipeline, and the
// releases of the idle ones in another. A renewal never takes a lease
// anew: a thread whose lease another replica took meanwhile is dropped,
// and the writes of its run here are refused (fenced).
func (c *Cluster) renew(ctx context.Context) {
	c.mu.Lock()
	held := make(map[string]string, len(c.held))
	for k, v := range c.held {
		held[k] = v
	}
	c.mu.Unlock()
	var busy, idle []string
	for threadID := range held {
		if c.serving(threadID) || c.o.Busy != nil && c.o.Busy(ctx, threadID) {
			busy = append(busy, threadID)
		} else {
			idle = append(idle, threadID)
		}
	}
	c.renewBusy(ctx, busy, held)
	c.mu.Lock()
	close(c.round)
	c.round = make(chan struct{})
	c.mu.Unlock()
	c.releaseIdle(ctx, idle)
}

// renewBusy renews the given leases in one pipeline.
func (c *Cluster) renewBusy(ctx context.Context, ids []string, held map[string]string) {
	if len(ids) == 0 {
		return
	}
	cmds := make([]*redis.Cmd, len(ids))
	run := func(p redis.Pipeliner, text bool) {
		for i, id := range ids {
			if cmds[i] != nil && !text {
				continue
			}
			if text && !redis.HasErrorPrefix(cmds[i].Err(), "NOSCRIPT") {
				continue
			}
			owner, doc, _ := c.keys(id)
			if text {
				cmds[i] = claimScript.Eval(ctx, p, []string{owner, doc}, c.claimArgs(held[id], modeRenew)...)
			} else {
				cmds[i] = claimScript.EvalSha(ctx, p, []string{owner, doc}, c.claimArgs(held[id], modeRenew)...)
			}
		}
	}
	sent := time.Now()
	_, _ = c.o.Client.Pipelined(ctx, func(p redis.Pipeliner) error { run(p, false); return nil })
	if slices.ContainsFunc(cmds, func(cmd *redis.Cmd) bool { return redis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") }) {
		_, _ = c.o.Client.Pipelined(ctx, func(p redis.Pipeliner) error { run(p, true); return nil })
	}
	stray := map[string]string{}
	for i, id := range ids {
		res, err := cmds[i].Slice()
		if err != nil {
			c.o.Logger.WarnContext(ctx, "Could not renew a thread lease", "threadId", id, "error", err)
			continue
		}
		kind, value, _, err := claimAnswer(res)
		if err != nil {
			continue
		}
		c.mu.Lock()
		if kind == 1 {
			if c.held[id] == held[id] {
				c.held[id] = value
				c.confirmed[id] = sent
			} else if _, ok := c.held[id]; !ok {
				// Released while the renewal was on its way (a stopping
				// replica's hand-over): run after the release, the
				// renewal found no lease and the fencing token unchanged,
				// and took it again as if it had lapsed.
				stray[id] = value
			}
		} else if c.held[id] == held[id] {
			delete(c.held, id)
			delete(c.confirmed, id)
		}
		c.mu.Unlock()
		if kind != 1 {
			c.o.Logger.WarnContext(ctx, "Thread lease lost to another replica; this replica's writes of it are refused", "threadId", id)
		}
	}
	c.releaseStray(ctx, stray)
}

// lockStripes locks the stripes of the threads ids, in ascending order so
// that two callers cannot deadlock, and returns the function that unlocks
// them.
func (c *Cluster) lockStripes(ids iter.Seq[string]) (unlock func()) {
	var stripes []int
	for id := range ids {
		stripes = append(stripes, c.stripe(id))
	}
	slices.Sort(stripes)
	stripes = slices.Compact(stripes)
	for _, s := range stripes {
		c.stripes[s].Lock()
	}
	return func() {
		for _, s := range stripes {
			c.stripes[s].Unlock()
		}
	}
}

// releaseStray gives up leases a renewal took again after they were
// released here (thread id → lease), unless the thread is held here
// again by now. Like releaseIdle, it holds the threads' stripes.
func (c *Cluster) releaseStray(ctx context.Context, stray map[string]string) {
	if len(stray) == 0 {
		return
	}
	defer c.lockStripes(maps.Keys(stray))()
	for id, value := range stray {
		c.mu.Lock()
		_, again := c.held[id]
		c.mu.Unlock()
		owner, _, err := c.keys(id)
		if again || err != nil {
			continue
		}
		if err := releaseScript.Run(ctx, c.o.Client, []string{owner}, value).Err(); err != nil {
			c.o.Logger.WarnContext(ctx, "Could not release a thread lease", "threadId", id, "error", err)
		}
	}
}

// releaseIdle gives up the leases of threads no request holds, in one
// pipeline. It holds the threads' stripes, like Claim, so a claim either
// comes before it (and the in-flight check keeps the lease) or after it
// (and takes a new lease).
func (c *Cluster) releaseIdle(ctx context.Context, ids []string) {
	if len(ids) == 0 {
		return
	}
	defer c.lockStripes(slices.Values(ids))()
	type rel struct{ id, owner, value string }
	var rels []rel
	c.mu.Lock()
	for _, id := range ids {
		value, ok := c.held[id]
		if !ok || c.inflight[id] > 0 {
			continue
		}
		delete(c.held, id)
		delete(c.confirmed, id)
		owner, _, err := c.keys(id)
		if err == nil {
			rels = append(rels, rel{id, owner, value})
		}
	}
	c.mu.Unlock()
	if len(rels) == 0 {
		return
	}
	cmds := make([]*redis.Cmd, len(rels))
	_, _ = c.o.Client.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, r := range rels {
			// Eval, not EvalSha: the script is a few bytes, and a release
			// that meets a server without it must not need a second trip.
			cmds[i] = releaseScript.Eval(ctx, p, []string{r.owner}, r.value)
		}
		return nil
	})
	for i, r := range rels {
		if err := cmds[i].Err(); err != nil {
			c.o.Logger.WarnContext(ctx, "Could not release a thread lease", "threadId", r.id, "error", err)
		}
	}
}

// Drain starts the hand-over of a stopping replica: every thread no
// request holds here is released at once (threads waiting on interrupts
// included), and every other one as soon as its last request ends. From
// now on a claim succeeds only for a thread a request is being served of
// here (a cancel or an observation of a run in progress); any other gets
// ErrDraining.
func (c *Cluster) Drain(ctx context.Context) {
	c.mu.Lock()
	c.draining = true
	ids := make([]string, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
	}
	if len(c.inflight) == 0 {
		c.closeDrained()
	}
	c.mu.Unlock()
	c.releaseIdle(ctx, ids)
}

// Drained is closed once Drain was called and no request of a thread
// this replica holds is in flight any more: until then the replica must
// keep listening, so that the cancels and observations of its runs reach
// it.
func (c *Cluster) Drained() <-chan struct{} { return c.drained }

// closeDrained closes drained once; the caller holds c.mu.
func (c *Cluster) closeDrained() { c.drainedOnce.Do(func() { close(c.drained) }) }

// Close ends the hand-over once the server's requests have ended: it
// waits for the releases Drain started and releases every lease still
// held, so that no thread waits for a lease to lapse.
func (c *Cluster) Close(ctx context.Context) {
	c.mu.Lock()
	c.draining = true
	c.mu.Unlock()
	c.releases.Wait()
	c.ReleaseAll(ctx)
}

// ReleaseAll gives up every lease this replica holds, whatever holds it
// here.
func (c *Cluster) ReleaseAll(ctx context.Context) {
	c.mu.Lock()
	ids := make([]string, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
		delete(c.inflight, id)
	}
	c.mu.Unlock()
	c.releaseIdle(ctx, ids)
}

// ErrLeaseLost is Confirm's answer once this replica's lease on a thread
// is no longer the one a stream was served under: another replica may
// own the thread.
var ErrLeaseLost = errors.New("cluster: this replica's lease on the thread was lost")

// confirmMargin is the part of the TTL a lease is not relied on for: a
// stream must not write at the very moment its lease may lapse.
func (c *Cluster) confirmMargin() time.Duration { return c.o.TTL / 8 }

// Confirm returns nil at once while this replica's lease on a thread is
// sure to be in force: it is still lease (the one the stream was served
// under), and the claim or renewal that last kept it was sent less than
// a TTL (minus a margin) ago, so it cannot have lapsed in Redis. Past
// that it waits for the renewals: nil once one kept the lease (a Redis
// stall that nobody else could use), ErrLeaseLost once the lease is gone,
// or ctx's error. A stream writes nothing while it waits, so that two
// replicas never stream one thread at once (docs/decisions.md, "A stream
// pauses when its lease may have lapsed").
func (c *Cluster) Confirm(ctx context.Context, threadID, lease string) error {
	for {
		c.mu.Lock()
		held, since, round := c.held[threadID], c.confirmed[threadID], c.round
		c.mu.Unlock()
		if held != lease {
			return ErrLeaseLost
		}
		if time.Since(since) < c.o.TTL-c.confirmMargin() {
			return nil
		}
		select {
		case <-round:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Held reports how many thread leases this replica holds.
func (c *Cluster) Held() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.held)
}

// serving reports whether a request of the thread is in flight here.
func (c *Cluster) serving(threadID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inflight[threadID] > 0
}

// release gives up a lease unless a request holds it.
func (c *Cluster) release(ctx context.Context, threadID string) {
	c.releaseIdle(ctx, []string{threadID})
}
