package cachesync

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// Op is one pending change: the object's latest state, or its deletion (Object nil).
type Op struct {
	Key Key
	// Object is the latest state to upsert; nil deletes the key.
	Object *unstructured.Unstructured
	// Since is when the oldest change not yet written was queued (what lag is measured from).
	Since time.Time
}

// Queue holds the changes not yet written, one per object key: a later change of a key replaces
// the pending one in place (same position, oldest Since kept), so N changes of one object cost one
// write. Take hands them out in first-queued order, in batches. It holds at most Limit keys:
// a change of a new key past that empties it and sets Overflowed, and the caller sends a full
// snapshot instead. Safe for concurrent use.
type Queue struct {
	mu         sync.Mutex
	limit      int
	pending    map[Key]*Op
	order      []Key // keys of pending, oldest first
	overflowed bool
	ready      chan struct{}
}

// NewQueue returns an empty queue of at most limit keys (limit >= 1).
func NewQueue(limit int) *Queue {
	if limit < 1 {
		limit = 1
	}
	return &Queue{limit: limit, pending: map[Key]*Op{}, ready: make(chan struct{}, 1)}
}

// Add queues the latest state of key (obj nil: deleted), seen at now.
func (q *Queue) Add(key Key, obj *unstructured.Unstructured, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.overflowed {
		return // the full snapshot that follows reads the informers' state
	}
	if op, ok := q.pending[key]; ok {
		op.Object = obj
		return
	}
	if len(q.pending) >= q.limit {
		q.overflowed = true
		q.pending = map[Key]*Op{}
		q.order = nil
		q.signal()
		return
	}
	q.pending[key] = &Op{Key: key, Object: obj, Since: now}
	q.order = append(q.order, key)
	q.signal()
}

// Take removes and returns up to max pending changes, oldest first.
func (q *Queue) Take(max int) []Op {
	q.mu.Lock()
	defer q.mu.Unlock()
	n := min(max, len(q.order))
	out := make([]Op, 0, n)
	for _, key := range q.order[:n] {
		out = append(out, *q.pending[key])
		delete(q.pending, key)
	}
	q.order = append(q.order[:0:0], q.order[n:]...)
	if len(q.order) > 0 {
		q.signal()
	}
	return out
}

// Requeue puts back changes whose write failed, ahead of the rest. A key changed again
// meanwhile keeps its newer state and the older Since.
func (q *Queue) Requeue(ops []Op) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.overflowed || len(ops) == 0 {
		return
	}
	front := make([]Key, 0, len(ops))
	for _, op := range ops {
		if newer, ok := q.pending[op.Key]; ok {
			if op.Since.Before(newer.Since) {
				newer.Since = op.Since
			}
			continue
		}
		op := op
		q.pending[op.Key] = &op
		front = append(front, op.Key)
	}
	q.order = append(front, q.order...)
	q.signal()
}

// Reset empties the queue and clears Overflowed (a full snapshot is about to be read).
func (q *Queue) Reset() {
	q.mu.Lock()
	defer q.mu.Unlock()
	q.pending = map[Key]*Op{}
	q.order = nil
	q.overflowed = false
}

// Overflowed reports whether changes were dropped since the last Reset.
func (q *Queue) Overflowed() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.overflowed
}

// Len is the number of pending keys.
func (q *Queue) Len() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.order)
}

// Ready receives when the queue may have something to Take (or has overflowed).
func (q *Queue) Ready() <-chan struct{} { return q.ready }

func (q *Queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}
