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
//
// The epoll instance and its goroutine exist only while streams are
// parked: the loop ends once nothing has been registered for
// hangupIdle, and the next parked stream starts another.
type hangups struct {
	mu      sync.Mutex
	running bool
	broken  bool // epoll is not available: streams watch themselves
	epfd    int  // while running
	next    uint64
	// byID holds the registered streams; it is dropped when it empties,
	// since a map keeps its largest size (a burst's) otherwise.
	byID map[uint64]registration
}

type registration struct {
	p  *parkedStream
	fd int
}

// hangupIdle is how long the loop waits without registrations before it
// ends.
const hangupIdle = 2000 // milliseconds

var watcher = &hangups{}

// watch registers p; false means p must watch its connection itself.
func (w *hangups) watch(p *parkedStream) bool {
	sc, ok := p.conn.(syscall.Conn)
	if !ok {
		return false
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.startLocked() {
		return false
	}
	w.next++
	id := w.next
	var cerr error
	err = rc.Control(func(u uintptr) {
		ev := unix.EpollEvent{Events: unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(id), Pad: int32(id >> 32)}
		if cerr = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(u), &ev); cerr == nil {
			if w.byID == nil {
				w.byID = map[uint64]registration{}
			}
			w.byID[id] = registration{p: p, fd: int(u)}
		}
	})
	if err != nil || cerr != nil {
		return false
	}
	p.hangupID = id
	return true
}

// startLocked starts the epoll instance and its loop unless they run.
func (w *hangups) startLocked() bool {
	if w.running || w.broken {
		return w.running
	}
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		w.broken = true
		return false
	}
	w.epfd, w.running = fd, true
	go w.loop(fd)
	return true
}

// forget removes p's registration; the connection is still open, so its
// descriptor cannot have been reused.
func (w *hangups) forget(p *parkedStream) {
	if p.hangupID == 0 {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.byID[p.hangupID]
	if !ok {
		return
	}
	delete(w.byID, p.hangupID)
	if len(w.byID) == 0 {
		w.byID = nil
	}
	_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, r.fd, nil)
}

// loop cancels the streams whose client hung up, until nothing has been
// registered for hangupIdle.
func (w *hangups) loop(epfd int) {
	events := make([]unix.EpollEvent, 128)
	for {
		n, err := unix.EpollWait(epfd, events, hangupIdle)
		if err != nil && err != unix.EINTR {
			n = 0 // cannot happen with a valid epfd; end as if idle
		}
		w.mu.Lock()
		if n <= 0 && len(w.byID) == 0 {
			w.running = false
			_ = unix.Close(epfd)
			w.mu.Unlock()
			return
		}
		var gone []*parkedStream
		for _, ev := range events[:max(n, 0)] {
			id := uint64(uint32(ev.Fd)) | uint64(uint32(ev.Pad))<<32
			if r, ok := w.byID[id]; ok {
				gone = append(gone, r.p)
			}
		}
		w.mu.Unlock()
		for _, p := range gone {
			p.cancel()
		}
	}
}
