package measure

import (
	"net/url"
	"reflect"
	"testing"

	"github.com/ratelab/ratelab/calc"
	"github.com/ratelab/ratelab/design"
)

// TestQuery: a measurement's calculator input becomes design URL
// parameters that the designer reads back as the same input.
func TestQuery(t *testing.T) {
	tests := []struct {
		name string
		in   calc.Input
		want url.Values
	}{
		{"percentiles per minute with a peak", calc.Input{Clients: 120, P50: 2, P95: 9, P99: 14, PercentileUnit: calc.PerMinute, Peak: 1.5, PeakSeconds: 1},
			url.Values{"clients": {"120"}, "p50": {"2"}, "p95": {"9"}, "p99": {"14"}, "percentile_unit": {"minute"}, "peak": {"1.5"}, "peak_seconds": {"1"}}},
		{"endpoints, numbered from 0", calc.Input{Clients: 3, P99: 3, PercentileUnit: calc.PerSecond,
			Endpoints: []calc.Endpoint{{Method: "GET", Path: "/v1/orders/{id}"}, {Method: "POST", Path: "/v1/orders", Cost: 4}}},
			url.Values{"clients": {"3"}, "p99": {"3"}, "percentile_unit": {"second"},
				"endpoints.0.method": {"GET"}, "endpoints.0.path": {"/v1/orders/{id}"},
				"endpoints.1.method": {"POST"}, "endpoints.1.path": {"/v1/orders"}, "endpoints.1.cost": {"4"}}},
		{"zero fields left out", calc.Input{Clients: 1}, url.Values{"clients": {"1"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Query(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Query:\n got %v\nwant %v", got, tt.want)
			}
			if back := design.Parse(got).Input(); !reflect.DeepEqual(back, tt.in) {
				t.Errorf("the designer reads %+v, want %+v", back, tt.in)
			}
		})
	}
}
