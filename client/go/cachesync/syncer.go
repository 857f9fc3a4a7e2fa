package cachesync

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/manager"

	selectorv1 "github.com/ome-selector/ome-selector/client/go/ome/selector/v1"
)

// Options configure a Syncer. Zero values take the defaults given.
type Options struct {
	// RevisionNamespace limits runtime revisions to OME's namespace; "" takes every namespace.
	RevisionNamespace string
	// MaxBatch: objects per UpsertObjects or DeleteObjects call (default 500).
	MaxBatch int
	// MaxQueue: changed objects held before the queue gives up and a full snapshot is sent
	// instead (default 100000).
	MaxQueue int
	// BatchDelay: how long a change waits for others to join its batch (default 20ms).
	BatchDelay time.Duration
	// StatusInterval: how often GetCacheStatus checks that the service still holds the cache
	// sent (default 10s).
	StatusInterval time.Duration
	// RPCTimeout bounds each call (default 60s).
	RPCTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between retries of a failed call (defaults
	// 100ms and 10s; doubled after each failure).
	MinBackoff, MaxBackoff time.Duration
	// Logger (default: controller-runtime's logger, named "ome-selector-sync").
	Logger logr.Logger
}

func (o *Options) defaults() {
	setDefault(&o.MaxBatch, 500)
	setDefault(&o.MaxQueue, 100000)
	setDefault(&o.BatchDelay, 20*time.Millisecond)
	setDefault(&o.StatusInterval, 10*time.Second)
	setDefault(&o.RPCTimeout, 60*time.Second)
	setDefault(&o.MinBackoff, 100*time.Millisecond)
	setDefault(&o.MaxBackoff, 10*time.Second)
	if o.Logger.GetSink() == nil {
		o.Logger = log.Log.WithName("ome-selector-sync")
	}
}

func setDefault[T comparable](v *T, def T) {
	var zero T
	if *v == zero {
		*v = def
	}
}

// Syncer keeps the selector service's cache equal to the cluster. It is a manager.Runnable that
// runs on every replica (no leader election: each replica has its own service beside it).
//
// Once the informers of every synced kind have synced, it sends one ApplySnapshot of all their
// objects; then each add, update and delete goes through a Queue (coalesced per object, bounded)
// and out as UpsertObjects / DeleteObjects batches, one call in flight, failed calls retried
// with backoff. Every write carries a version `<instance>-<n>` this Syncer chose; when a write's
// response, or the GetCacheStatus it polls, shows another version, synced false, or a generation
// other than the one its own writes produced (the service restarted, or someone else wrote), it
// sends a full snapshot again. An object that cannot be converted or that the service rejects
// (INVALID_ARGUMENT) is left out of the cache, as a fresh snapshot would leave it out.
type Syncer struct {
	client selectorv1.CacheServiceClient
	cache  cache.Cache
	opts   Options
	log    logr.Logger
	queue  *Queue

	instance string
	seq      uint64

	mu          sync.Mutex
	synced      bool  // a full snapshot was accepted and nothing since says the cache is not ours
	lastErr     error // the last call's failure (nil after a success)
	lastVersion string
	lastGen     int64
}

var _ manager.Runnable = (*Syncer)(nil)
var _ manager.LeaderElectionRunnable = (*Syncer)(nil)

// New returns a Syncer writing to client, reading the cluster through informers (the manager's
// cache: mgr.GetCache()).
func New(client selectorv1.CacheServiceClient, informers cache.Cache, opts Options) *Syncer {
	opts.defaults()
	id := make([]byte, 4)
	_, _ = rand.Read(id)
	return &Syncer{
		client:   client,
		cache:    informers,
		opts:     opts,
		log:      opts.Logger,
		queue:    NewQueue(opts.MaxQueue),
		instance: hex.EncodeToString(id),
	}
}

// Add creates a Syncer over mgr's cache, adds it to mgr, and adds its readiness check to mgr's
// readyz as "ome-selector-cache".
func Add(mgr manager.Manager, client selectorv1.CacheServiceClient, opts Options) (*Syncer, error) {
	s := New(client, mgr.GetCache(), opts)
	if err := mgr.Add(s); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("ome-selector-cache", s.ReadyzCheck); err != nil {
		return nil, err
	}
	return s, nil
}

// NeedLeaderElection is false: the Syncer runs on every replica.
func (s *Syncer) NeedLeaderElection() bool { return false }

// ReadyzCheck is a healthz.Checker: nil once a full snapshot has been accepted, while the last
// call to the service succeeded and nothing says its cache differs from the one sent.
func (s *Syncer) ReadyzCheck(_ *http.Request) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.lastErr != nil {
		return fmt.Errorf("selector service: %w", s.lastErr)
	}
	if !s.synced {
		return errors.New("selector cache: full snapshot not sent yet")
	}
	return nil
}

var _ healthz.Checker = (*Syncer)(nil).ReadyzCheck

// Start registers the event handlers, waits for the informers to sync, and writes until ctx ends.
func (s *Syncer) Start(ctx context.Context) error {
	var regs []toolscache.ResourceEventHandlerRegistration
	for _, kind := range Kinds {
		u := &unstructured.Unstructured{}
		u.SetGroupVersionKind(kind.GVK)
		inf, err := s.cache.GetInformer(ctx, u)
		if err != nil {
			return fmt.Errorf("informer for %s: %w", kind.GVK, err)
		}
		reg, err := inf.AddEventHandler(s.handler(kind))
		if err != nil {
			return fmt.Errorf("event handler for %s: %w", kind.GVK, err)
		}
		regs = append(regs, reg)
	}
	synced := make([]toolscache.InformerSynced, len(regs))
	for i, reg := range regs {
		synced[i] = reg.HasSynced
	}
	if !toolscache.WaitForCacheSync(ctx.Done(), synced...) {
		return ctx.Err()
	}
	s.log.Info("informers synced; sending the full snapshot", "kinds", len(Kinds))
	return s.run(ctx)
}

// handler queues each change of kind's objects.
func (s *Syncer) handler(kind Kind) toolscache.ResourceEventHandler {
	wanted := func(u *unstructured.Unstructured) bool {
		if kind.ObjectKind != selectorv1.ObjectKind_OBJECT_KIND_CONTROLLER_REVISION {
			return true
		}
		if _, ok := u.GetLabels()[RuntimeOfLabel]; !ok {
			return false
		}
		return s.opts.RevisionNamespace == "" || u.GetNamespace() == s.opts.RevisionNamespace
	}
	upsert := func(obj any) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return
		}
		if wanted(u) {
			s.queue.Add(KeyOf(kind, u), u, time.Now())
		} else {
			// A revision that lost its label: no longer a runtime revision.
			s.queue.Add(KeyOf(kind, u), nil, time.Now())
		}
		queueDepth.Set(float64(s.queue.Len()))
	}
	return toolscache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok && wanted(u) {
				upsert(u)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			o, ok1 := oldObj.(*unstructured.Unstructured)
			n, ok2 := newObj.(*unstructured.Unstructured)
			if ok1 && ok2 && o.GetResourceVersion() == n.GetResourceVersion() {
				return // a periodic resync: nothing changed
			}
			if ok1 && !wanted(o) && ok2 && !wanted(n) {
				return
			}
			upsert(newObj)
		},
		DeleteFunc: func(obj any) {
			if tomb, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
				obj = tomb.Obj
			}
			if u, ok := obj.(*unstructured.Unstructured); ok {
				s.queue.Add(KeyOf(kind, u), nil, time.Now())
				queueDepth.Set(float64(s.queue.Len()))
			}
		},
	}
}

// run is the single writer: a full snapshot when needed, else batches from the queue, and the
// periodic status check.
func (s *Syncer) run(ctx context.Context) error {
	ticker := time.NewTicker(s.opts.StatusInterval)
	defer ticker.Stop()
	reason := "start"
	backoff := s.opts.MinBackoff
	for {
		if ctx.Err() != nil {
			return nil
		}
		if s.queue.Overflowed() && reason == "" {
			reason = "overflow"
		}
		if reason != "" {
			if err := s.fullSync(ctx, reason); err != nil {
				if !sleep(ctx, backoff) {
					return nil
				}
				backoff = min(2*backoff, s.opts.MaxBackoff)
				continue
			}
			reason, backoff = "", s.opts.MinBackoff
			continue
		}
		select {
		case <-ctx.Done():
			return nil
		case <-ticker.C:
			if changed := s.checkStatus(ctx); changed != "" {
				s.log.Info("selector cache is not the one sent; sending a full snapshot", "why", changed)
				reason = "service_changed"
			}
		case <-s.queue.Ready():
			if !sleep(ctx, s.opts.BatchDelay) {
				return nil
			}
			ops := s.queue.Take(s.opts.MaxBatch)
			queueDepth.Set(float64(s.queue.Len()))
			if len(ops) == 0 {
				continue
			}
			changed, err := s.writeBatch(ctx, ops)
			switch {
			case changed != "":
				s.log.Info("selector cache is not the one sent; sending a full snapshot", "why", changed)
				reason = "service_changed"
				backoff = s.opts.MinBackoff
			case err != nil:
				s.queue.Requeue(ops)
				queueDepth.Set(float64(s.queue.Len()))
				s.log.Error(err, "cache write failed; retrying", "objects", len(ops), "backoff", backoff)
				if !sleep(ctx, backoff) {
					return nil
				}
				backoff = min(2*backoff, s.opts.MaxBackoff)
			default:
				backoff = s.opts.MinBackoff
			}
		}
	}
}

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (s *Syncer) nextVersion() string {
	s.seq++
	return s.instance + "-" + strconv.FormatUint(s.seq, 10)
}

// fullSync lists every synced kind from the informers and sends it as one ApplySnapshot.
func (s *Syncer) fullSync(ctx context.Context, reason string) error {
	start := time.Now()
	s.queue.Reset() // the informers' state read below covers every change queued so far
	queueDepth.Set(0)
	var objects []*selectorv1.CacheObject
	var keys []Key
	for _, kind := range Kinds {
		list := &unstructured.UnstructuredList{}
		list.SetGroupVersionKind(kind.GVK.GroupVersion().WithKind(kind.GVK.Kind + "List"))
		if err := s.cache.List(ctx, list); err != nil {
			return fmt.Errorf("list %s: %w", kind.GVK.Kind, err)
		}
		for i := range list.Items {
			u := &list.Items[i]
			if kind.ObjectKind == selectorv1.ObjectKind_OBJECT_KIND_CONTROLLER_REVISION {
				if _, ok := u.GetLabels()[RuntimeOfLabel]; !ok ||
					(s.opts.RevisionNamespace != "" && u.GetNamespace() != s.opts.RevisionNamespace) {
					continue
				}
			}
			obj, err := Convert(kind, u)
			if err != nil {
				rejectedTotal.WithLabelValues(kind.GVK.Kind).Inc()
				s.log.Error(err, "object left out of the snapshot")
				continue
			}
			objects = append(objects, obj)
			keys = append(keys, KeyOf(kind, u))
		}
	}
	for {
		version := s.nextVersion()
		resp, err := s.call(ctx, "ApplySnapshot", func(ctx context.Context) (*selectorv1.CacheStatus, error) {
			r, err := s.client.ApplySnapshot(ctx, &selectorv1.ApplySnapshotRequest{Version: version, Objects: objects})
			return r.GetStatus(), err
		})
		if bad := rejectedIndexes(err, len(objects)); len(bad) > 0 {
			objects, keys = s.dropRejected(err, bad, objects, keys)
			continue // the rest, without the rejected objects
		}
		if err != nil {
			s.log.Error(err, "full snapshot failed", "objects", len(objects))
			return err
		}
		s.mu.Lock()
		s.synced, s.lastVersion, s.lastGen = true, version, resp.GetGeneration()
		s.mu.Unlock()
		fullSyncsTotal.WithLabelValues(reason).Inc()
		lastFullSync.Set(float64(time.Now().UnixNano()) / 1e9)
		took := time.Since(start)
		fullSyncSeconds.Set(took.Seconds())
		s.log.Info("full snapshot sent", "reason", reason, "objects", len(objects), "version", version,
			"seconds", took.Seconds())
		return nil
	}
}

func (s *Syncer) dropRejected(err error, bad map[int]bool, objects []*selectorv1.CacheObject, keys []Key) ([]*selectorv1.CacheObject, []Key) {
	var keptObjects []*selectorv1.CacheObject
	var keptKeys []Key
	for i := range objects {
		if bad[i] {
			rejectedTotal.WithLabelValues(kindName(keys[i].Kind)).Inc()
			s.log.Error(err, "object rejected by the selector service; left out of the cache", "object", keys[i].String())
			continue
		}
		keptObjects = append(keptObjects, objects[i])
		keptKeys = append(keptKeys, keys[i])
	}
	return keptObjects, keptKeys
}

func kindName(k selectorv1.ObjectKind) string {
	if kind, ok := KindOf(k); ok {
		return kind.GVK.Kind
	}
	return k.String()
}

// writeBatch sends ops as one UpsertObjects and one DeleteObjects. changed is non-empty when a
// response shows the service's cache is not the one sent (then a full snapshot follows and the
// ops need no retry); err is a failed call (retry the ops).
func (s *Syncer) writeBatch(ctx context.Context, ops []Op) (changed string, err error) {
	var upserts []*selectorv1.CacheObject
	var upsertOps []Op
	var deletes []*selectorv1.ObjectKey
	var deleteOps []Op
	for _, op := range ops {
		if op.Object == nil {
			deletes, deleteOps = append(deletes, op.Key.Proto()), append(deleteOps, op)
			continue
		}
		kind, _ := KindOf(op.Key.Kind)
		obj, cerr := Convert(kind, op.Object)
		if cerr != nil {
			// Not representable: the service must not keep an older state of it.
			rejectedTotal.WithLabelValues(kind.GVK.Kind).Inc()
			s.log.Error(cerr, "object left out of the cache")
			deletes, deleteOps = append(deletes, op.Key.Proto()), append(deleteOps, op)
			continue
		}
		upserts, upsertOps = append(upserts, obj), append(upsertOps, op)
	}
	for len(upserts) > 0 {
		version := s.nextVersion()
		st, err := s.call(ctx, "UpsertObjects", func(ctx context.Context) (*selectorv1.CacheStatus, error) {
			r, err := s.client.UpsertObjects(ctx, &selectorv1.UpsertObjectsRequest{Version: version, Objects: upserts})
			return r.GetStatus(), err
		})
		if bad := rejectedIndexes(err, len(upserts)); len(bad) > 0 {
			var keptObjects []*selectorv1.CacheObject
			var keptOps []Op
			for i := range upserts {
				if bad[i] {
					rejectedTotal.WithLabelValues(kindName(upsertOps[i].Key.Kind)).Inc()
					s.log.Error(err, "object rejected by the selector service; left out of the cache", "object", upsertOps[i].Key.String())
					deletes, deleteOps = append(deletes, upsertOps[i].Key.Proto()), append(deleteOps, upsertOps[i])
					continue
				}
				keptObjects, keptOps = append(keptObjects, upserts[i]), append(keptOps, upsertOps[i])
			}
			upserts, upsertOps = keptObjects, keptOps
			continue
		}
		if err != nil {
			return "", err
		}
		if why := s.accepted(version, st); why != "" {
			return why, nil
		}
		observeLag(upsertOps)
		break
	}
	if len(deletes) > 0 {
		version := s.nextVersion()
		st, err := s.call(ctx, "DeleteObjects", func(ctx context.Context) (*selectorv1.CacheStatus, error) {
			r, err := s.client.DeleteObjects(ctx, &selectorv1.DeleteObjectsRequest{Version: version, Keys: deletes})
			return r.GetStatus(), err
		})
		if err != nil {
			return "", err // the whole batch is retried; upserting again is harmless
		}
		if why := s.accepted(version, st); why != "" {
			return why, nil
		}
		observeLag(deleteOps)
	}
	return "", nil
}

func observeLag(ops []Op) {
	now := time.Now()
	for _, op := range ops {
		lagSeconds.Observe(now.Sub(op.Since).Seconds())
	}
}

// accepted checks a write's resulting status: the version sent, synced, and the generation one
// past the last one this Syncer saw. Otherwise the reason the cache is not the one sent.
func (s *Syncer) accepted(version string, st *selectorv1.CacheStatus) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	why := ""
	switch {
	case st.GetVersion() != version:
		why = fmt.Sprintf("version %q after writing %q", st.GetVersion(), version)
	case !st.GetSynced():
		why = "service reports synced=false"
	case st.GetGeneration() != s.lastGen+1:
		why = fmt.Sprintf("generation %d, want %d", st.GetGeneration(), s.lastGen+1)
	}
	s.lastVersion, s.lastGen = version, st.GetGeneration()
	if why != "" {
		s.synced = false
	}
	return why
}

// checkStatus polls GetCacheStatus; non-empty when the cache is not the one last sent.
func (s *Syncer) checkStatus(ctx context.Context) string {
	st, err := s.call(ctx, "GetCacheStatus", func(ctx context.Context) (*selectorv1.CacheStatus, error) {
		r, err := s.client.GetCacheStatus(ctx, &selectorv1.GetCacheStatusRequest{})
		return r.GetStatus(), err
	})
	if err != nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	why := ""
	switch {
	case st.GetVersion() != s.lastVersion:
		why = fmt.Sprintf("version %q, last sent %q", st.GetVersion(), s.lastVersion)
	case !st.GetSynced():
		why = "service reports synced=false"
	case st.GetGeneration() != s.lastGen:
		why = fmt.Sprintf("generation %d, last seen %d", st.GetGeneration(), s.lastGen)
	}
	if why != "" {
		s.synced = false
	}
	return why
}

// call runs one RPC with the timeout, counting it and recording the health the readyz reports.
func (s *Syncer) call(ctx context.Context, rpc string, f func(context.Context) (*selectorv1.CacheStatus, error)) (*selectorv1.CacheStatus, error) {
	ctx, cancel := context.WithTimeout(ctx, s.opts.RPCTimeout)
	defer cancel()
	st, err := f(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if err != nil {
		code := status.Code(err)
		failuresTotal.WithLabelValues(rpc, code.String()).Inc()
		if code != codes.InvalidArgument {
			s.lastErr = err
		}
		return nil, err
	}
	s.lastErr = nil
	if rpc != "GetCacheStatus" {
		writesTotal.WithLabelValues(rpc).Inc()
	}
	return st, nil
}

var objectIndex = regexp.MustCompile(`^objects\[(\d+)\]`)

// rejectedIndexes: for an INVALID_ARGUMENT naming objects in its BadRequest
// (`objects[<i>].<field>`), the indexes named; otherwise nil. When the error names no object,
// every object is taken as rejected (nothing else can be sent of the batch).
func rejectedIndexes(err error, n int) map[int]bool {
	if err == nil || status.Code(err) != codes.InvalidArgument {
		return nil
	}
	bad := map[int]bool{}
	for _, detail := range status.Convert(err).Details() {
		br, ok := detail.(*errdetails.BadRequest)
		if !ok {
			continue
		}
		for _, v := range br.GetFieldViolations() {
			if m := objectIndex.FindStringSubmatch(v.GetField()); m != nil {
				if i, err := strconv.Atoi(m[1]); err == nil && i < n {
					bad[i] = true
				}
			}
		}
	}
	if len(bad) == 0 {
		for i := 0; i < n; i++ {
			bad[i] = true
		}
	}
	return bad
}
