package redisstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/iac-code-agui/iac-code-agui/internal/state"
)

// scanCount is the COUNT hint of each SCAN step, and so about how many
// documents one pipeline reads.
const scanCount = maxBatch

// Threads calls fn once for every thread document stored under the
// store's prefix, one at a time, in no particular order, with the
// thread's file key and its document decoded and validated as Load does,
// or the error (wrapping state.ErrUnavailable) that made it unusable. It
// walks the keys with SCAN (MATCH <prefix>thread:{*}; on Redis Cluster, on
// every primary in turn), never KEYS, so a large store does not block the
// server; a key it meets twice is reported once. Keys that are not thread
// documents are skipped: the revision histories, the leases, a hash that
// holds only the fencing counter, and anything else that matches.
//
// A document stored for the whole walk is seen (SCAN's guarantee); one
// created or deleted meanwhile may or may not be. It stops at the
// first error fn returns, and returns it; a Redis failure is returned
// wrapping state.ErrUnavailable.
func (s *Store) Threads(ctx context.Context, fn func(fileKey string, t *state.Thread, err error) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	nodes, err := s.scanNodes(ctx)
	if err != nil {
		return fmt.Errorf("%w: redis: %w", state.ErrUnavailable, err)
	}
	head := s.prefix + "thread:{"
	match := globEscape(head) + "*}"
	seen := make(map[string]struct{})
	for _, node := range nodes {
		var cursor uint64
		for {
			keys, next, err := node.Scan(ctx, cursor, match, scanCount).Result()
			if err != nil {
				return fmt.Errorf("%w: redis: %w", state.ErrUnavailable, err)
			}
			var page []string
			for _, k := range keys {
				if _, dup := seen[k]; dup {
					continue
				}
				if _, ok := fileKeyOf(k, head); ok {
					seen[k] = struct{}{}
					page = append(page, k)
				}
			}
			if err := s.readPage(ctx, page, head, fn); err != nil {
				return err
			}
			if cursor = next; cursor == 0 {
				break
			}
		}
	}
	return nil
}

// scanNodes returns the clients to SCAN: every primary of a Cluster, else
// the store's own client.
func (s *Store) scanNodes(ctx context.Context) ([]redis.Cmdable, error) {
	cc, ok := s.c.(*redis.ClusterClient)
	if !ok {
		return []redis.Cmdable{s.c}, nil
	}
	var mu sync.Mutex
	var nodes []redis.Cmdable
	err := cc.ForEachMaster(ctx, func(_ context.Context, c *redis.Client) error {
		mu.Lock()
		defer mu.Unlock()
		nodes = append(nodes, c)
		return nil
	})
	return nodes, err
}

// readPage reads the documents of one SCAN page in one pipeline and hands
// each to fn.
func (s *Store) readPage(ctx context.Context, keys []string, head string, fn func(string, *state.Thread, error) error) error {
	if len(keys) == 0 {
		return nil
	}
	cmds := make([]*redis.StringCmd, len(keys))
	// Pipelined's own error is the first command's that failed; each
	// answer below says whether it was only missing or not a hash.
	_, _ = s.c.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.HGet(ctx, k, "doc")
		}
		return nil
	})
	for i, c := range cmds {
		data, err := c.Bytes()
		switch {
		case errors.Is(err, redis.Nil), redis.HasErrorPrefix(err, "WRONGTYPE"):
			continue // gone since the SCAN, only a fencing counter, or not a hash
		case err != nil:
			return fmt.Errorf("%w: redis: %w", state.ErrUnavailable, err)
		}
		fk, _ := fileKeyOf(keys[i], head)
		t, err := decodeAs(data, fk)
		if err := fn(fk, t, err); err != nil {
			return err
		}
	}
	return nil
}

// fileKeyOf returns the file key K of a document hash <prefix>thread:{K}
// (head is "<prefix>thread:{"); ok is false for any other key, such as a
// history stream <prefix>thread:{K}:history. File keys never hold braces.
func fileKeyOf(key, head string) (fk string, ok bool) {
	rest, ok := strings.CutPrefix(key, head)
	if !ok {
		return "", false
	}
	fk, ok = strings.CutSuffix(rest, "}")
	if !ok || fk == "" || strings.ContainsAny(fk, "{}") {
		return "", false
	}
	return fk, true
}

// decodeAs decodes a document found under file key fk: the thread id it
// names must have that key, as Load would have looked it up.
func decodeAs(data []byte, fk string) (*state.Thread, error) {
	var head struct {
		ThreadID string `json:"threadId"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("%w: not a thread document", state.ErrUnavailable)
	}
	if k, err := state.FileKey(head.ThreadID); err != nil || k != fk {
		return nil, fmt.Errorf("%w: the document's threadId does not match its key", state.ErrUnavailable)
	}
	return state.Decode(data, head.ThreadID)
}

// globEscape quotes the characters SCAN's MATCH pattern treats specially,
// so a prefix matches only itself.
func globEscape(s string) string {
	var b strings.Builder
	for _, r := range s {
		if strings.ContainsRune(`\*?[]`, r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}
