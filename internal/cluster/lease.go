package cluster

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/maphash"
	"log/slog"
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
	// Token authenticates forwarded requests between replicas.
	Token string
	// TTL of a lease; DefaultTTL when zero.
	TTL time.Duration
	// Busy reports whether this replica must keep a thread: it has an
	// active run or interrupts waiting in this replica's A2A server.
	Busy   func(ctx context.Context, threadID string) bool
	Logger *slog.Logger
}

// Cluster is one replica's view of thread ownership.
type Cluster struct {
	o  Options
	id string

	mu   sync.Mutex
	held map[string]string // thread id → lease value we hold
	// inflight counts the requests this replica is serving per thread;
	// their leases are renewed and never released under them.
	inflight map[string]int

	// stripes serialise a thread's claims and releases end to end,
	// Redis call included: a release that waits on a Redis outage must
	// not delete a lease that a request claims meanwhile.
	stripes [64]sync.Mutex
}

// stripe returns the lock of a thread's lease operations.
func (c *Cluster) stripe(threadID string) *sync.Mutex {
	return &c.stripes[maphash.String(stripeSeed, threadID)%uint64(len(c.stripes))]
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
	return &Cluster{o: o, id: hex.EncodeToString(b[:]), held: map[string]string{}, inflight: map[string]int{}}
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
	// Expires is when a remote lease lapses unless renewed.
	Expires time.Duration
	// Done ends the request's hold on a local lease; the caller must call
	// it once the request is answered. Nil for a remote owner.
	Done func()
}

// keys of one thread, shared with the Redis store.
func (c *Cluster) keys(threadID string) (owner, fence string, err error) {
	return redisstore.LeaseKeys(c.o.Prefix, threadID)
}

// claimScript returns {1, value} when this replica holds the lease and
// renewed it, {2, value} when it took it now with a new fencing token, and
// {0, value, pttl} when another replica holds it.
var claimScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v then
  if string.sub(v, 1, string.len(ARGV[1]) + 1) == ARGV[1] .. ' ' then
    redis.call('PEXPIRE', KEYS[1], ARGV[3])
    return {1, v}
  end
  return {0, v, redis.call('PTTL', KEYS[1])}
end
local fence = redis.call('INCR', KEYS[2])
v = ARGV[1] .. ' ' .. ARGV[2] .. ' ' .. fence
redis.call('SET', KEYS[1], v, 'PX', ARGV[3])
return {2, v}
`)

// releaseScript deletes the lease if it is still ARGV[1].
var releaseScript = redis.NewScript(`
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`)

// Claim returns the owner of a thread, taking the lease when nobody holds
// it. An error means Redis did not answer.
func (c *Cluster) Claim(ctx context.Context, threadID string) (Owner, error) {
	owner, fence, err := c.keys(threadID)
	if err != nil {
		return Owner{}, err
	}
	st := c.stripe(threadID)
	st.Lock()
	defer st.Unlock()
	res, err := claimScript.Run(ctx, c.o.Client, []string{owner, fence}, c.id, c.o.AdvertiseURL, c.o.TTL.Milliseconds()).Slice()
	if err != nil {
		return Owner{}, fmt.Errorf("cluster: redis: %w", err)
	}
	if len(res) < 2 {
		return Owner{}, errors.New("cluster: unexpected claim answer")
	}
	mine, _ := res[0].(int64)
	value, _ := res[1].(string)
	if mine != 0 {
		c.mu.Lock()
		c.held[threadID] = value
		c.inflight[threadID]++
		c.mu.Unlock()
		var once sync.Once
		done := func() {
			once.Do(func() {
				c.mu.Lock()
				if c.inflight[threadID]--; c.inflight[threadID] <= 0 {
					delete(c.inflight, threadID)
				}
				c.mu.Unlock()
			})
		}
		return Owner{Local: true, Lease: value, Acquired: mine == 2, Done: done}, nil
	}
	parts := strings.SplitN(value, " ", 3)
	if len(parts) != 3 {
		return Owner{}, errors.New("cluster: malformed lease")
	}
	var pttl int64
	if len(res) > 2 {
		pttl, _ = res[2].(int64)
	}
	return Owner{URL: parts[1], Expires: time.Duration(pttl) * time.Millisecond}, nil
}

// Run renews the leases of busy threads and releases the others every
// TTL/3 until ctx ends; then it releases every lease it holds, so that
// another replica takes over at once.
func (c *Cluster) Run(ctx context.Context) {
	t := time.NewTicker(c.o.TTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			c.ReleaseAll(context.Background())
			return
		case <-t.C:
			c.renew(ctx)
		}
	}
}

func (c *Cluster) renew(ctx context.Context) {
	c.mu.Lock()
	held := make(map[string]string, len(c.held))
	for k, v := range c.held {
		held[k] = v
	}
	c.mu.Unlock()
	for threadID := range held {
		if c.serving(threadID) || c.o.Busy != nil && c.o.Busy(ctx, threadID) {
			o, err := c.Claim(ctx, threadID)
			if err != nil {
				c.o.Logger.Warn("Could not renew a thread lease", "threadId", threadID, "error", err)
				continue
			}
			if o.Done != nil {
				o.Done()
			}
			continue
		}
		c.release(ctx, threadID)
	}
}

// ReleaseAll gives up every lease this replica holds.
func (c *Cluster) ReleaseAll(ctx context.Context) {
	c.mu.Lock()
	ids := make([]string, 0, len(c.held))
	for id := range c.held {
		ids = append(ids, id)
	}
	c.mu.Unlock()
	for _, id := range ids {
		c.release(ctx, id)
	}
}

// serving reports whether a request of the thread is in flight here.
func (c *Cluster) serving(threadID string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inflight[threadID] > 0
}

// release gives up a lease unless a request holds it. It runs under the
// thread's stripe, like Claim, so a claim either comes before it (and the
// in-flight check keeps the lease) or after it (and takes a new lease).
func (c *Cluster) release(ctx context.Context, threadID string) {
	st := c.stripe(threadID)
	st.Lock()
	defer st.Unlock()
	c.mu.Lock()
	value, ok := c.held[threadID]
	if c.inflight[threadID] > 0 {
		c.mu.Unlock()
		return
	}
	delete(c.held, threadID)
	c.mu.Unlock()
	owner, _, err := c.keys(threadID)
	if !ok || err != nil {
		return
	}
	if err := releaseScript.Run(ctx, c.o.Client, []string{owner}, value).Err(); err != nil {
		c.o.Logger.Warn("Could not release a thread lease", "threadId", threadID, "error", err)
	}
}
