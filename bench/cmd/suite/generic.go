package main

import (
	"fmt"
	"path/filepath"
	"time"

	"github.com/iac-code-agui/iac-code-agui/bench/suite"
)

// sectionG: the relay of section (a) with the adapter in the generic
// profile (--a2a-profile generic, docs/upstream.md §10) in front of an
// agent whose turns end TASK_STATE_COMPLETED, beside the direct reader and
// the TypeScript peer on the same upstream.
func (e *env) sectionG() error {
	fmt.Printf("(g) generic profile: %d concurrent runs × %d deltas\n", e.cfg.runs, e.cfg.deltas)
	up, err := e.upstreamEnding("up-g", e.cfg.deltas, false, "completed")
	if err != nil {
		return err
	}
	targets := []loadTarget{{name: "reader", t: suite.Target{URL: up.url + "/", A2A: true, End: "TASK_STATE_COMPLETED"}, pid: up.pid()}}
	gen, _, err := e.adapter("adapter-g-generic", adapterOpts{upstream: up.url, stateDir: filepath.Join(e.base, "state-g"), generic: true})
	if err != nil {
		return err
	}
	targets = append(targets, loadTarget{name: "generic", t: suite.Target{URL: gen.url + "/", Workspace: e.workspace}, pid: gen.pid()})
	if targets, err = e.withPeer(targets, "peer-g", up.url); err != nil {
		return err
	}
	st := e.loads(targets, e.cfg.runs, "g")
	reader, g, peer := st["reader"], st["generic"], st["peer"]
	n := fmt.Sprintf("(g) generic profile, %d runs × %d", e.cfg.runs, e.cfg.deltas)
	e.table.add(row{what: n + ": direct A2A reader", value: eps(reader.eps) + ", p99 first " + ms(time.Duration(reader.p99)) + cpuNote(reader, "upstream")})
	e.table.add(row{what: n + ": adapter, file store, aggregate", value: eps(g.eps) + cpuNote(g, "adapter"), vsRef: ratio(g.eps, reader.eps), vsPeer: ratio(g.eps, peer.eps)})
	e.table.add(row{what: n + ": adapter, file store, p99 first event", value: ms(time.Duration(g.p99)) + " (p50 " + ms(time.Duration(g.p50)) + ")", vsRef: ratio(g.p99, reader.p99), vsPeer: ratio(g.p99, peer.p99)})
	e.table.add(row{what: n + ": adapter, failed runs (all rounds)", value: failedRuns(g), target: "0", met: yes(g.failed == 0)})
	if _, ok := st["peer"]; ok {
		e.table.add(peerRow(n, peer, reader))
	}
	return nil
}
