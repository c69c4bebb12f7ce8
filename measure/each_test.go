package measure

import (
	"context"
	"strings"
	"testing"

	"github.com/ratelab/ratelab/accesslog"
)

// TestEach: Each sees every good record once, in log order, and no bad
// line.
func TestEach(t *testing.T) {
	log := `192.0.2.1 - - [30/Nov/2026:10:00:00 +0000] "GET /a HTTP/1.1" 200 1 "-" "x"
not a log line
192.0.2.2 - - [30/Nov/2026:10:00:01 +0000] "POST /b/7 HTTP/1.1" 201 1 "-" "x"
`
	var seen []string
	res, err := Measure(context.Background(), strings.NewReader(log), accesslog.Config{}, Options{
		Each: func(r *accesslog.Record) { seen = append(seen, string(r.Key)+" "+string(r.Path)) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(seen, ",") != "192.0.2.1 /a,192.0.2.2 /b/7" || res.Requests != 2 || res.Bad.Count != 1 {
		t.Errorf("Each saw %q; requests %d, bad %d; want the two good lines", seen, res.Requests, res.Bad.Count)
	}
}
