package gcpace

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// v1Unlimited: cgroup v1 reports "no limit" as the largest page-aligned
// int64 (9223372036854771712); anything this large is no limit.
const v1Unlimited = 1 << 62

// MemoryLimit is the memory limit of the cgroup the process runs in, read
// under root ("/" in production), or 0 when there is none or it cannot be
// read. cgroup v2 (memory.max) and v1 (memory.limit_in_bytes) are both
// read; a limit outside the process's own cgroup (a parent's) is not
// looked for. Go's runtime sizes GOMAXPROCS from the cgroup but not the
// heap, so the pacing must not assume a machine's memory.
func MemoryLimit(root string) uint64 {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/cgroup"))
	if err != nil {
		return 0
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// hierarchy-id:controllers:path
		parts := strings.SplitN(sc.Text(), ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case parts[0] == "0" && parts[1] == "":
			if n := readLimit(root, "sys/fs/cgroup", parts[2], "memory.max"); n > 0 {
				return n
			}
		case hasController(parts[1], "memory"):
			if n := readLimit(root, "sys/fs/cgroup/memory", parts[2], "memory.limit_in_bytes"); n > 0 {
				return n
			}
		}
	}
	return 0
}

func hasController(list, name string) bool {
	for c := range strings.SplitSeq(list, ",") {
		if c == name {
			return true
		}
	}
	return false
}

// readLimit reads file in the cgroup's directory, or at the mount's root
// when a cgroup namespace hides the path; 0 for none, "max" or unreadable.
func readLimit(root, mount, cgroup, file string) uint64 {
	for _, dir := range []string{filepath.Join(root, mount, cgroup), filepath.Join(root, mount)} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			continue
		}
		v := strings.TrimSpace(string(b))
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil || n >= v1Unlimited {
			return 0 // "max", or v1's "unlimited"
		}
		return n
	}
	return 0
}
