package state

import (
	"fmt"
	"runtime/debug"
)

// CrashOnPanic, deferred by a store's code that runs on a caller's
// goroutine while it holds a shared role (a pipeline for other callers),
// makes a panic there end the process, as one in a goroutine of its own
// does: net/http recovers a handler's panic, which would leave the role
// taken and every later call waiting for ever. what names the role in the
// panic's message.
func CrashOnPanic(what string) {
	if r := recover(); r != nil {
		stack := debug.Stack()
		go func() { panic(fmt.Sprintf("%s: %v\n%s", what, r, stack)) }()
		select {}
	}
}
