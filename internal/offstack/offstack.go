// Package offstack owns a few long-lived goroutines that run deep, short,
// CPU-only calls for request goroutines (the JSON encoding of an A2A
// request). A goroutine's stack doubles when a call nests deeper than it
// has room for, and the runtime halves it again only when less than a
// quarter of it is in use: a request goroutine that once encoded a nested
// JSON document keeps a 16 KiB stack for as long as its stream stays open,
// although it waits in about 5 KiB. Run moves such a call onto a worker
// whose stack has already grown, so the request goroutine stays at 8 KiB.
// The workers live long, so their stacks do not regrow on every call, as a
// fresh goroutine's would (by copying).
//
// It is a leaf package: it must not import other packages of this module.
package offstack

import "runtime"

type job struct {
	f    func()
	done chan any // receives what f's panic was, or nil
}

var jobs = make(chan job)

// The workers start with the process, so that they are part of its
// baseline rather than goroutines left behind by the first requests.
func init() {
	for range max(2, runtime.GOMAXPROCS(0)) {
		go work()
	}
}

// Run calls f on a worker goroutine and returns when f returned; a panic
// in f is raised again in the caller. f must not block on I/O, locks the
// caller holds, or Run itself: the workers are few.
func Run(f func()) {
	j := job{f: f, done: make(chan any, 1)}
	jobs <- j
	if p := <-j.done; p != nil {
		panic(p)
	}
}

func work() {
	for j := range jobs {
		j.done <- call(j.f)
	}
}

// call returns f's panic value; since Go 1.21 a panic never recovers as
// nil (panic(nil) recovers as *runtime.PanicNilError).
func call(f func()) (p any) {
	defer func() { p = recover() }()
	f()
	return nil
}
