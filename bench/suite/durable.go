package suite

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// DurableWrite times one bare durable replace of a small file in dir, the
// sequence protocol.md §8.5 prescribes: create a temp file, write, fsync,
// close, rename over the target, fsync the directory. It is the floor
// under any durable admission.
func DurableWrite(dir string, data []byte, i int) (time.Duration, error) {
	target := filepath.Join(dir, fmt.Sprintf("bare-%d.json", i%16))
	start := time.Now()
	tmp := target + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return 0, err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return 0, err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return 0, err
	}
	if err := f.Close(); err != nil {
		return 0, err
	}
	if err := os.Rename(tmp, target); err != nil {
		return 0, err
	}
	d, err := os.Open(dir)
	if err != nil {
		return 0, err
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}
