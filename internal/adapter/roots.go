package adapter

// AllowedRoots lists the resolved workspace roots (protocol.md §3.4 step
// 3), for the console's read-only workspace-roots route; a configured root
// that does not exist yet is not listed until a request resolves it.
func (a *Adapter) AllowedRoots() []string {
	return a.roots.List()
}
