package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/gomonty/monty/pool"
)

// metrics are the server's Prometheus collectors, on a registry of their
// own (served at /metrics).
type metrics struct {
	reg      *prometheus.Registry
	active   prometheus.Gauge
	ended    *prometheus.CounterVec
	refusals *prometheus.CounterVec
	turn     prometheus.Histogram
	frames   *prometheus.CounterVec
	bytes    *prometheus.CounterVec

	// The label values of every frame, resolved once.
	framesIn, framesOut, bytesIn, bytesOut prometheus.Counter
}

func newMetrics(p *pool.Pool) *metrics {
	m := &metrics{
		reg: prometheus.NewRegistry(),
		active: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "monty_server_sessions_active", Help: "Sessions (WebSocket connections past admission) now open.",
		}),
		ended: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monty_server_sessions_ended_total", Help: "Sessions ended, by outcome.",
		}, []string{"outcome"}),
		refusals: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monty_server_refusals_total", Help: "Refused upgrades and requests, by reason.",
		}, []string{"reason"}),
		turn: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "monty_server_turn_seconds",
			Help:    "Time from a request reaching the worker to its turn-ending event.",
			Buckets: prometheus.ExponentialBuckets(0.0001, 4, 10),
		}),
		frames: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monty_server_frames_total", Help: "WebSocket frames carried, by direction (in = from clients).",
		}, []string{"direction"}),
		bytes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "monty_server_frame_bytes_total", Help: "Frame payload bytes carried, by direction.",
		}, []string{"direction"}),
	}
	m.framesIn, m.framesOut = m.frames.WithLabelValues("in"), m.frames.WithLabelValues("out")
	m.bytesIn, m.bytesOut = m.bytes.WithLabelValues("in"), m.bytes.WithLabelValues("out")
	workers := func(name, help string, f func(pool.Stats) int) prometheus.Collector {
		return prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
			func() float64 { return float64(f(p.Stat())) })
	}
	m.reg.MustRegister(m.active, m.ended, m.refusals, m.turn, m.frames, m.bytes,
		workers("monty_server_workers_live", "Worker processes running, idle or in a session.", func(s pool.Stats) int { return s.Live }),
		workers("monty_server_workers_idle", "Prewarmed workers waiting for a session.", func(s pool.Stats) int { return s.Idle }),
		workers("monty_server_workers_busy", "Workers serving a session.", func(s pool.Stats) int { return s.Busy }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "monty_server_pool_healthy",
			Help: "1 while the worker pool may start workers, 0 while its restart cap is tripped (/readyz and upgrades answer 503 unhealthy).",
		}, func() float64 {
			if p.Health() != nil {
				return 0
			}
			return 1
		}),
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "monty_server_worker_restarts_total", Help: "Workers started in place of lost, recycled or destroyed ones.",
		}, func() float64 { return float64(p.Stat().Restarts) }),
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	)
	// Export every label value from the start, so dashboards see zeros.
	for _, o := range outcomes {
		m.ended.WithLabelValues(o)
	}
	for _, r := range []string{ReasonUnauthorized, ReasonCapacity, ReasonDraining, ReasonClientQuota,
		ReasonRequestRefused, ReasonLoadUnsigned, ReasonLoadAboveCeilings, ReasonUpgradeRejected, ReasonHostRejected, ReasonAuthThrottled, ReasonUnhealthy, ReasonTooManyConnections} {
		m.refusals.WithLabelValues(r)
	}
	return m
}
