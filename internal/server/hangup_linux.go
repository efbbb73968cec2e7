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
	once sync.Once
	epfd int // -1 when epoll is not available
	mu   sync.Mutex
	next uint64
	// byID holds the registered streams; it is dropped when it empties,
	// since a map keeps its largest size (a burst's) otherwise.
	byID map[uint64]registration
}

type registration struct {
	p  *parkedStream
	fd int
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
	// Registered before the descriptor is added: a hang-up reported at
	// once must find its stream.
	w.mu.Lock()
	w.next++
	id := w.next
	if w.byID == nil {
		w.byID = map[uint64]registration{}
	}
	w.byID[id] = registration{p: p, fd: -1}
	w.mu.Unlock()
	var cerr error
	err = rc.Control(func(u uintptr) {
		w.mu.Lock()
		w.byID[id] = registration{p: p, fd: int(u)}
		w.mu.Unlock()
		ev := unix.EpollEvent{Events: unix.EPOLLRDHUP | unix.EPOLLONESHOT, Fd: int32(id), Pad: int32(id >> 32)}
		cerr = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_ADD, int(u), &ev)
	})
	if err != nil || cerr != nil {
		w.drop(id)
		return false
	}
	p.hangupID = id
	return true
}

// forget removes p's registration; the connection is still open.
func (w *hangups) forget(p *parkedStream) {
	if p.hangupID == 0 {
		return
	}
	if r, ok := w.drop(p.hangupID); ok && r.fd >= 0 {
		_ = unix.EpollCtl(w.epfd, unix.EPOLL_CTL_DEL, r.fd, nil)
	}
}

// drop removes the registration id and returns it.
func (w *hangups) drop(id uint64) (registration, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	r, ok := w.byID[id]
	delete(w.byID, id)
	if len(w.byID) == 0 {
		w.byID = nil
	}
	return r, ok
}

func (w *hangups) start() {
	w.epfd = -1
	fd, err := unix.EpollCreate1(unix.EPOLL_CLOEXEC)
	if err != nil {
		return
	}
	w.epfd = fd
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
			r := w.byID[id]
			w.mu.Unlock()
			if r.p != nil {
				r.p.cancel()
			}
		}
	}
}
