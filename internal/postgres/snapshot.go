package postgres

import (
	"encoding/json"

	"github.com/askd-dev/askd"
)

// decodeSnapshot is the ask an event's snapshot holds, from the JSON that
// snapshotOf wrote: the events.snapshot column's text, as the askd_asks
// notification carries it. It decodes as events reads that column (a new
// Ask, json.Unmarshal), and snapshotOf wrote the times as the store keeps
// them (UTC, to the microsecond), so the ask equals the row it copies as a
// read gives it back.
func decodeSnapshot(b []byte) (*askd.Ask, error) {
	a := new(askd.Ask)
	if err := json.Unmarshal(b, a); err != nil {
		return nil, err
	}
	return a, nil
}
