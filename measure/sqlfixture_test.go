package measure

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// sqlRequests renders the 40 000 generated requests the live SQL tests
// share as a combined log keyed by the extra X-API-Key field (times in
// UTC+2), and as CSV rows "2006-01-02 15:04:05,key" (times in UTC), with
// "-" for no key: one generator, two renderings.
func sqlRequests() (log, rows []byte) {
	var l, r bytes.Buffer
	z := time.FixedZone("", 2*3600)
	var line []byte
	genEvents(40000, 400, 42, func(e *event) {
		line = appendCombined(line[:0], e, z)
		l.Write(line)
		fmt.Fprintf(&r, "%s,%s\n", e.at.UTC().Format(time.DateTime), e.key)
	})
	return l.Bytes(), r.Bytes()
}

// sqlWindows are the windows the live SQL tests measure.
var sqlWindows = []time.Duration{time.Second, 10 * time.Second, time.Minute}

// TestSQLFixture writes sqlRequests' log and rows as access.log and
// rows.csv into the directory RATELAB_SQL_FIXTURE_OUT names, for a live
// test in another module (conformance/duckdb) that cannot import this
// package's test code; without the variable it skips.
func TestSQLFixture(t *testing.T) {
	dir := os.Getenv("RATELAB_SQL_FIXTURE_OUT")
	if dir == "" {
		t.Skip("skipping: RATELAB_SQL_FIXTURE_OUT is not set (conformance/duckdb sets it)")
	}
	log, rows := sqlRequests()
	for name, data := range map[string][]byte{"access.log": log, "rows.csv": rows} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
