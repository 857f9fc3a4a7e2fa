package cachesync

import (
	"github.com/prometheus/client_golang/prometheus"
	"sigs.k8s.io/controller-runtime/pkg/metrics"
)

// Metrics, registered in controller-runtime's registry (served on the manager's metrics
// endpoint). Label rpc: ApplySnapshot, UpsertObjects, DeleteObjects, GetCacheStatus.
var (
	writesTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ome_selector_sync_writes_total",
		Help: "Cache writes the selector service accepted, by RPC.",
	}, []string{"rpc"})
	failuresTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ome_selector_sync_failures_total",
		Help: "Calls to the selector service that failed, by RPC and gRPC code.",
	}, []string{"rpc", "code"})
	rejectedTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ome_selector_sync_rejected_objects_total",
		Help: "Objects left out of the cache because they could not be converted or the service rejected them (INVALID_ARGUMENT), by kind.",
	}, []string{"kind"})
	fullSyncsTotal = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "ome_selector_sync_full_syncs_total",
		Help: "Full snapshots sent, by reason: start, service_changed (restart or another writer), overflow.",
	}, []string{"reason"})
	queueDepth = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ome_selector_sync_queue_depth",
		Help: "Objects with a change not yet written.",
	})
	lagSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "ome_selector_sync_lag_seconds",
		Help:    "Seconds from an informer event to the write that carried it being accepted.",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60},
	})
	lastFullSync = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ome_selector_sync_last_full_sync_timestamp_seconds",
		Help: "Unix time of the last accepted full snapshot (0 before the first).",
	})
	fullSyncSeconds = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "ome_selector_sync_last_full_sync_duration_seconds",
		Help: "Seconds the last full snapshot took: listing the informers, converting, and ApplySnapshot.",
	})
)

func init() {
	metrics.Registry.MustRegister(writesTotal, failuresTotal, rejectedTotal, fullSyncsTotal, queueDepth, lagSeconds,
		lastFullSync, fullSyncSeconds)
}
