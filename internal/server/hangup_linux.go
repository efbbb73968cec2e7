//go:build linux

package server

import (
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// hangups tells parked streams that their client closed the connection,
// for all of them with one epoll instance and one goroutine: a goroutine
// blocked in a 1-byte read per connection, as net/http's background read
// is, costs each stream a stack (2 to 4 KiB here) and a descriptor.
//
// A connection is registered for the peer's hang-up only (EPOLLRDHUP, and
// EPOLLHUP and EPOLLERR, which are always reported), once (EPOLLONESHOT):
// bytes a client sends after its request wake nothing. Each registration
// carries an id of its own, not the descriptor, so an event never reaches
// a later stream that got the same descriptor number; forget removes the
// registration before the stream closes its connection.
type hangups struct {
	once  sync.Once
	epfd  int // -1 when epoll is not available
	mu    sync.Mutex
	next  uint64
	byID  map[uint64]*parkedStream
	fdsOf map[uint64]int
}

var watcher = &hangups{}

// watch registers p; false means p must watch its connection itself.
func (w *hangups) watch(p *parkedStream) bool {
	w.once.Do(w.start)
	if w.epfd < 0 {
		return false
	}
	sc, ok := p.conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	w.mu.Lock()
	w.next++
	id := w.next
	w.byID[id] = p
	w.mu.Unlock()
	var fd int
	var cerr error
	if err := rc.Control(func(u uintptr) {
		fd = int(u)
		ev := unix.EpollEvent{Events: unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(id), Pad: int32(id >> 32)}
		cerr = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, fd, &ev)
	}); err != nil || cerr != nil {
		w.mu.Lock()
		delete(w.byID, id)
		w.mu.Unlock()
		return false
	}
	w.mu.Lock()
	w.fdsOf[id] = fd
	w.mu.Unlock()
	p.hangupID = id
	return true
}

// forget removes p's registration; the connection is still open.
func (w *hangups) forget(p *parkedStream) {
	if p.hangupID == 0 {
		return
	}
	w.mu.Lock()
	fd, ok := w.fdsOf[p.hangupID]
	delete(w.byID, p.hangupID)
	delete(w.fdsOf, p.hangupID)
	w.mu.Unlock()
	if ok {
		_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, fd, nil)
	}
}

func (w *hangups) start() {
	w.epfd = -1
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	w.epfd = fd
	w.byID = map[uint64]*parkedStream{}
	w.fdsOf = map[uint64]int{}
	go w.loop()
}

// loop cancels the streams whose client hung up. It runs for the life of
// the process, as the runtime's own network poller does.
func (w *hangups) loop() {
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(w.epfd, events, -1)
		if err != nil {
			if err == unix.EINTR {
				continue
			}
			return
		}
		for _, ev := range events[:n] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			w.mu.Lock()
			p := w.byID[id]
			w.mu.Unlock()
			if p != nil {
				p.cancel()
			}
		}
	}
}
