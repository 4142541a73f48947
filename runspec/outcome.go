package runspec

import (
	"encoding/json"
	"fmt"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"

	"github.com/kumoproj/kumo/engine"
)

// Outcome is how a run ended, in numbers and resource by resource. It travels
// in the run's Result, so the final line of a run and `kumo run show` of an
// ended run read one event of Temporal's record (the run's close event)
// instead of asking the run: a query to an ended run replays its whole
// history for every answer, seconds per answer at 10,000 resources, and the
// progress comes in many pages.
type Outcome struct {
	// Done counts the resources whose step succeeded, per action; Unchanged
	// counts those the run left as they were.
	Done ChangeCounts `json:"done"`
	// Failed counts the resources whose step failed; NotRun those skipped,
	// put back by a compensation, or never reached.
	Failed int `json:"failed,omitempty"`
	NotRun int `json:"notRun,omitempty"`
	// Total is how many resources the run had.
	Total int `json:"total"`
	// Nodes are the resources' final progress, packed (PackNodes), or nil
	// when even packed they exceed MaxPackedNodes (then a caller asks the
	// run, a page at a time).
	Nodes []byte `json:"nodes,omitempty"`
}

// MaxPackedNodes bounds Outcome.Nodes. A Result is one payload (2 MB at most,
// a warning past 512 KB), holding the preview's changes too (at most 512 KB);
// bytes travel as base64 in JSON (4/3).
const MaxPackedNodes = 640 << 10

// maxUnpackedNodes bounds what Outcome.Nodes may unpack to: a packed value
// that claims more fails instead of exhausting memory.
const maxUnpackedNodes = 256 << 20

// OutcomeOf counts nodes by their final status and packs them, leaving the
// packed nodes out when they are too large.
func OutcomeOf(nodes []Node) Outcome {
	o := Outcome{Total: len(nodes)}
	for _, n := range nodes {
		switch n.Status {
		case NodeSucceeded:
			o.Done.add(n.Action)
		case NodeUnchanged:
			o.Done.Unchanged++
		case NodeFailed:
			o.Failed++
		default: // skipped, compensated, pending or running when the run ended
			o.NotRun++
		}
	}
	if packed, err := PackNodes(nodes); err == nil && len(packed) <= MaxPackedNodes {
		o.Nodes = packed
	}
	return o
}

// packedNodes is nodes column by column, which zstd shrinks far better than
// one object per node: IDs share prefixes, actions and statuses repeat, and
// times are offsets from the earliest (the nodes of a batch share theirs).
type packedNodes struct {
	IDs     []string        `json:"ids"`
	Actions []engine.Action `json:"actions"`
	Status  []NodeStatus    `json:"status"`
	// Base is the earliest start time (Unix nanoseconds); Started[i] is node
	// i's start minus Base, -1 when it never started; Took[i] is its Finished
	// minus Started, -1 when it did not finish.
	Base    int64   `json:"base"`
	Started []int64 `json:"started"`
	Took    []int64 `json:"took"`
	// Errors and Health are by node index, for the nodes that have one.
	Errors map[int]string `json:"errors,omitempty"`
	Health map[int]string `json:"health,omitempty"`
}

var (
	packOnce sync.Once
	packEnc  *zstd.Encoder
	packDec  *zstd.Decoder
	packErr  error
)

func packCodecs() (*zstd.Encoder, *zstd.Decoder, error) {
	packOnce.Do(func() {
		packEnc, packErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedBetterCompression),
			zstd.WithEncoderConcurrency(1), zstd.WithLowerEncoderMem(true))
		if packErr != nil {
			return
		}
		packDec, packErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxMemory(maxUnpackedNodes), zstd.WithDecoderLowmem(true))
	})
	return packEnc, packDec, packErr
}

// PackNodes packs nodes into a zstd frame of their columns. It is
// deterministic: the same nodes pack to the same bytes.
func PackNodes(nodes []Node) ([]byte, error) {
	p := packedNodes{IDs: make([]string, len(nodes)), Actions: make([]engine.Action, len(nodes)), Status: make([]NodeStatus, len(nodes)),
		Started: make([]int64, len(nodes)), Took: make([]int64, len(nodes))}
	for _, n := range nodes {
		if at := n.Started.UnixNano(); !n.Started.IsZero() && (p.Base == 0 || at < p.Base) {
			p.Base = at
		}
	}
	for i, n := range nodes {
		p.IDs[i], p.Actions[i], p.Status[i] = n.ID, n.Action, n.Status
		p.Started[i], p.Took[i] = -1, -1
		if !n.Started.IsZero() {
			p.Started[i] = n.Started.UnixNano() - p.Base
			if !n.Finished.IsZero() {
				p.Took[i] = max(n.Finished.Sub(n.Started).Nanoseconds(), 0)
			}
		}
		if n.Error != "" {
			if p.Errors == nil {
				p.Errors = map[int]string{}
			}
			p.Errors[i] = n.Error
		}
		if n.Health != "" {
			if p.Health == nil {
				p.Health = map[int]string{}
			}
			p.Health[i] = n.Health
		}
	}
	text, err := json.Marshal(p)
	if err != nil {
		return nil, err
	}
	enc, _, err := packCodecs()
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	return enc.EncodeAll(text, make([]byte, 0, len(text)/8+64)), nil
}

// UnpackNodes returns the nodes PackNodes packed.
func UnpackNodes(packed []byte) ([]Node, error) {
	_, dec, err := packCodecs()
	if err != nil {
		return nil, fmt.Errorf("zstd: %w", err)
	}
	text, err := dec.DecodeAll(packed, nil)
	if err != nil {
		return nil, fmt.Errorf("unpack the run's outcome (zstd, at most %d MiB): %w", maxUnpackedNodes>>20, err)
	}
	var p packedNodes
	if err := json.Unmarshal(text, &p); err != nil {
		return nil, fmt.Errorf("unpack the run's outcome: %w", err)
	}
	n := len(p.IDs)
	if len(p.Actions) != n || len(p.Status) != n || len(p.Started) != n || len(p.Took) != n {
		return nil, fmt.Errorf("unpack the run's outcome: %d ids but %d actions, %d statuses, %d start times and %d durations",
			n, len(p.Actions), len(p.Status), len(p.Started), len(p.Took))
	}
	nodes := make([]Node, n)
	for i := range nodes {
		nodes[i] = Node{ID: p.IDs[i], Action: p.Actions[i], Status: p.Status[i], Error: p.Errors[i], Health: p.Health[i]}
		if p.Started[i] < 0 {
			continue
		}
		nodes[i].Started = time.Unix(0, p.Base+p.Started[i]).UTC()
		if p.Took[i] >= 0 {
			nodes[i].Finished = nodes[i].Started.Add(time.Duration(p.Took[i]))
		}
	}
	return nodes, nil
}
