// Package i18n owns the adapter's public language rules and message catalogue:
// language normalisation, Accept-Language and locale-environment resolution
// (protocol.md §2.9), and the translations of every public English message into
// zh, es, fr, de, ja and pt (protocol.md §2.8).
//
// It must not touch HTTP, configuration, state or A2A; callers pass plain
// strings in and get plain strings out. Messages are identified by their
// English text (the Msg… constants) so an unknown message passes through
// unchanged, mirroring the original's translation allowlist.
package i18n
