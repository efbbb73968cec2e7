package redisstore

import (
	"errors"
	"net/url"

	"github.com/redis/go-redis/v9"
)

// Open returns a client for a redis:// or rediss:// URL:
//   - redis://host:port/db — one server;
//   - ...?master_name=NAME — Sentinel, the URL naming a sentinel (more with
//     addr=host:port);
//   - ...?cluster=true (more nodes with addr=host:port) — Redis Cluster.
//
// Other query parameters are go-redis options (dial_timeout, read_timeout,
// ...). password, when not empty, replaces a password in the URL.
func Open(rawURL, password string) (redis.UniversalClient, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") {
		// The URL may hold a password: do not wrap the parse error.
		return nil, errors.New("redisstore: not a redis:// or rediss:// URL")
	}
	q := u.Query()
	switch {
	case q.Get("master_name") != "":
		o, err := redis.ParseFailoverURL(rawURL)
		if err != nil {
			return nil, errors.New("redisstore: invalid Sentinel URL")
		}
		if password != "" {
			o.Password = password
		}
		return redis.NewFailoverClient(o), nil
	case q.Get("cluster") == "true":
		q.Del("cluster")
		u.RawQuery = q.Encode()
		o, err := redis.ParseClusterURL(u.String())
		if err != nil {
			return nil, errors.New("redisstore: invalid cluster URL")
		}
		if password != "" {
			o.Password = password
		}
		return redis.NewClusterClient(o), nil
	}
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, errors.New("redisstore: invalid URL")
	}
	if password != "" {
		o.Password = password
	}
	return redis.NewClient(o), nil
}
