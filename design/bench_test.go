package design

import "testing"

// BenchmarkResolve is the design work of one keystroke: parse a full
// design URL, size it, resolve every limit and check the policy.
func BenchmarkResolve(b *testing.B) {
	const q = "capacity=20000&headroom=0.25&replicas=5&enforcement=local&p50=5&p95=30&p99=50&peak=300&peak_seconds=2" +
		"&limit.algorithm=gcra&limit.burst=400&tiers.0.name=anonymous&tiers.0.clients=100&tiers.0.multiplier=0.5&tiers.0.key=ip" +
		"&tiers.3.name=paid&tiers.3.clients=20&tiers.3.multiplier=4&tiers.3.limit.algorithm=sliding_window" +
		"&endpoints.0.method=GET&endpoints.0.path=%2Fv1%2Freports&endpoints.0.cost=8" +
		"&endpoints.1.method=POST&endpoints.1.path=%2Fv1%2Forders&endpoints.1.limit.algorithm=fixed_window&endpoints.1.limit.limit=100&endpoints.1.limit.window=60" +
		"&mode=shadow&headers=ietf,legacy&pattern=periodic_bursts&pattern.count=300"
	b.ReportAllocs()
	for b.Loop() {
		if r := ParseQuery(q).Resolve(); len(r.Problems) > 0 {
			b.Fatal(r.Problems)
		}
	}
}
