package state

import "context"

// saveLatest saves th over whatever is stored, as the tests written
// before conditional saves expect: it passes the stored revision.
func saveLatest(ctx context.Context, s *FileStore, th *Thread) error {
	prev := NoRevision
	if th != nil {
		if path, err := s.Path(th.ThreadID); err == nil {
			if data, err := s.read(path); err == nil {
				prev = revisionOf(data)
			}
		}
	}
	_, err := s.Save(ctx, th, prev)
	return err
}

// load is Load without the revision.
func load(ctx context.Context, s *FileStore, id string) (*Thread, error) {
	th, _, err := s.Load(ctx, id)
	return th, err
}

// waitIdle waits until s's committer has no batch and no refill running.
func waitIdle(s *FileStore) {
	c := &s.commits
	c.mu.Lock()
	for c.running {
		c.idleCond().Wait()
	}
	c.mu.Unlock()
}
