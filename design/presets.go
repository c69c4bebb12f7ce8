package design

import "strings"

// Preset is a design to start from: a common kind of API with numbers that
// make sense for it. Query is its canonical design URL query (Query of the
// design it parses to), so "/?" + Query opens it in the designer.
type Preset struct {
	Name        string // a URL-safe identifier: "public_rest"
	Title       string // a short label: "Public REST API"
	Description string // one line: who the clients are and what the limits do
	Query       string
}

// Presets are the designs the designer offers to start from, in the order
// it lists them. Each query is written by hand, with the reasons for its
// numbers beside it, in canonical form.
var Presets = []Preset{
	preset("public_rest", "Public REST API",
		"Anonymous callers by IP, free and paid API keys, and a costly reports endpoint.",
		// A JSON API on 4 replicas sharing a Redis store, degrading at
		// 8000 requests/s. A typical client is a script or a page polling
		// now and then: 0.2 requests/s at the median, 1 at p95, 2 at p99.
		// Anonymous callers (keyed by address, since they have no key) get
		// half of that, 1000 of them at once; 400 free keys get the
		// per-client rate; 100 paid keys get 5 times it. A report costs 10
		// tokens (it scans a month of data), so every limit's burst must
		// hold at least 10: a peak of 10 requests/s for 2 s gives 4
		// requests/s with a burst of 13 (anonymous: 2/s, 10; paid: 20/s,
		// 65), and the global limit keeps the sum under capacity.
		strings.Join([]string{
			"capacity=8000", "replicas=4", "enforcement=shared",
			"p50=0.2", "p95=1", "p99=2", "peak=10", "peak_seconds=2",
			"tiers.0.name=anonymous", "tiers.0.clients=1000", "tiers.0.multiplier=0.5", "tiers.0.key=ip",
			"tiers.1.name=free", "tiers.1.clients=400", "tiers.1.multiplier=1", "tiers.1.key=api_key",
			"tiers.2.name=paid", "tiers.2.clients=100", "tiers.2.multiplier=5", "tiers.2.key=api_key",
			"endpoints.0.method=GET", "endpoints.0.path=%2Fv1%2Freports", "endpoints.0.cost=10",
			"key=api_key", "pattern=ramp",
		}, "&")),
	preset("mobile_offline", "Mobile app with offline batches",
		"Phones that queue events offline and flush them in one burst on reconnect.",
		// 5000 phones online at once against a sync API of 7000
		// requests/s. Live, an app sends little: 0.05 requests/s at the
		// median, 0.2 at p95, 0.5 at p99. Back online after a flight or a
		// tunnel it flushes its queue: up to 20 requests/s for 10 s (200
		// queued events), which the burst must absorb or the sync fails
		// half way; the burst comes out at 191. Keyed by account, so a user's two devices share one
		// allowance. The chart: 60 s offline, a flush of 200, then live at
		// 0.5 requests/s.
		strings.Join([]string{
			"capacity=7000", "replicas=3",
			"clients=5000", "p50=0.05", "p95=0.2", "p99=0.5", "peak=20", "peak_seconds=10",
			"key=account",
			"pattern=offline_batch", "pattern.rate=0.5", "pattern.duration=120", "pattern.count=200", "pattern.idle=60",
		}, "&")),
	preset("webhook_receiver", "Webhook receiver",
		"A few senders pushing events in bursts, shaped by a leaky bucket into a steady stream.",
		// 20 senders (payment, CI and chat providers) delivering to a
		// worker pool that handles 300 events/s. A sender averages 1
		// event/s, 3 at p95 and 5 at p99, but arrives in bursts of 50
		// every 10 s (a batch job firing). A leaky bucket queues a burst
		// and releases it at the sender's rate instead of rejecting it:
		// senders retry rejected webhooks for hours, so delaying is
		// kinder than a 429. It drains at p99 × margin = 10 events/s and
		// its queue holds max_delay = 10 s of that (100 events): an event
		// waits at most 10 s, well within the senders' timeouts.
		strings.Join([]string{
			"capacity=300",
			"clients=20", "p50=1", "p95=3", "p99=5", "max_delay=10",
			"limit.algorithm=leaky_bucket",
			"pattern=periodic_bursts", "pattern.duration=60", "pattern.count=50", "pattern.period=10",
		}, "&")),
	preset("internal_service", "Internal service-to-service",
		"A handful of services calling at high rates, enforced locally on each replica by GCRA.",
		// 10 calling services (each keyed by its service identity, the API
		// key) against a backend of 20000 requests/s on 8 replicas. A
		// caller sends 200 requests/s at the median, 400 at p95, 500 at
		// p99, so 1000 requests/s each with margin. Enforcement is local:
		// each replica counts on its own, with no shared store on the hot
		// path, so a caller may get up to 8 × its limit across replicas
		// (the designer warns); with 10 trusted callers the global limit
		// and capacity bound that. GCRA keeps one timestamp per caller and
		// answers in constant time, which is what a sidecar wants.
		strings.Join([]string{
			"capacity=20000", "replicas=8", "enforcement=local",
			"clients=10", "p50=200", "p95=400", "p99=500",
			"limit.algorithm=gcra", "key=api_key",
			"pattern=poisson", "pattern.rate=400", "pattern.duration=10",
		}, "&")),
	preset("token_metered", "Token-metered model API",
		"A cost-weighted API: each request costs its tokens, limited per minute by a sliding window.",
		// One token of cost is 100 model tokens. 300 API keys against
		// inference that serves 8000 cost tokens/s (800 000 model
		// tokens/s). Clients think per minute: 60 cost tokens a minute at
		// the median, 300 at p95, 600 at p99. A completion (about 2000
		// model tokens) costs 20, an embedding (about 200) costs 2. A
		// sliding window of 60 s (1200 cost tokens, p99 × margin) counts
		// what a key spent in the last minute, as model APIs publish their limits (tokens per minute).
		strings.Join([]string{
			"capacity=8000",
			"clients=300", "p50=60", "p95=300", "p99=600", "percentile_unit=minute",
			"window=60",
			"limit.algorithm=sliding_window",
			"endpoints.0.method=POST", "endpoints.0.path=%2Fv1%2Fcompletions", "endpoints.0.cost=20",
			"endpoints.1.method=POST", "endpoints.1.path=%2Fv1%2Fembeddings", "endpoints.1.cost=2",
			"key=api_key",
			"pattern=steady", "pattern.rate=0.5", "pattern.duration=120", "pattern.cost=20",
		}, "&")),
}

// preset builds a Preset. The query is written in canonical order (the
// order of Fields; TestPresets checks it), since Fields is not built yet
// when Presets is.
func preset(name, title, description, query string) Preset {
	return Preset{Name: name, Title: title, Description: description, Query: query}
}
