package adapter

import "github.com/iac-code-agui/iac-code-agui/internal/mapper"

// awaitedTextInput is the id of the task's direct input: the one text
// input its executor waits on (protocol.md §5.1); "" when it has none.
func awaitedTextInput(inputs []mapper.Input) string {
	for _, in := range inputs {
		if !in.Sideband {
			return in.ID
		}
	}
	return ""
}

// chooseText returns the one text answer a resume sends (protocol.md §5.8):
// A2A takes one text answer per turn, so with several the answer to the
// input the task waits on wins, else the last, as the original sent. The
// others ride along in its commit (answer.superseded): they answer inputs
// the task no longer waits on, and must not be asked again.
func chooseText(texts []answer, awaited string) (int, answer) {
	pick := len(texts) - 1
	for i, a := range texts {
		if a.entry.InterruptID == awaited {
			pick = i
		}
	}
	chosen := texts[pick]
	for i, a := range texts {
		if i != pick {
			chosen.superseded = append(chosen.superseded, a)
		}
	}
	return pick, chosen
}
