package server

// BodyBytesHeld is what requests hold of h's body budget, for tests that
// must wait until a request has taken its share.
func BodyBytesHeld(h *Handler) int64 { return h.bodyHeld.Load() }
