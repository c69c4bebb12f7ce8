package measure

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// shadowPolicy limits every client to a token bucket of rate 1/s and
// burst 5; paid clients get burst 10.
const shadowPolicy = `apiVersion: ratelab/v1
kind: RateLimitPolicy
metadata: {name: shadow-test}
service: {capacity: 100}
defaults:
  limit: {algorithm: token_bucket, rate: 1, burst: 5}
tiers:
  - {name: paid, limit: {algorithm: token_bucket, rate: 1, burst: 10}}
`

// shadowLog: client A sends 8 requests logged in one whole second, then B
// 2 in the same second. The ten are spread over the second in log order,
// so A's arrive at 0, 0.1 … 0.7 s: the bucket of 5 admits five (after the
// fifth, at 0.4 s, it holds 5 − 5 + 0.4 = 0.4 tokens) and then finds 0.5,
// 0.6 and 0.7 tokens: three rejections, Retry-After 0.5, 0.4 and 0.3 s.
// B's two, at 0.8 and 0.9 s, pass.
func shadowLog() string {
	var b strings.Builder
	for range 8 {
		b.WriteString(`198.51.100.1 - - [30/Nov/2026:10:00:00 +0000] "GET /v1/a HTTP/1.1" 200 1 "-" "x"` + "\n")
	}
	for range 2 {
		b.WriteString(`198.51.100.2 - - [30/Nov/2026:10:00:00 +0000] "GET /v1/a HTTP/1.1" 200 1 "-" "x"` + "\n")
	}
	return b.String()
}

func TestShadowReplay(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(shadowPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	rej := filepath.Join(dir, "rejections.csv")
	code, out, errOut := runCmd(t, shadowLog(), false, fakeClock(0), "-policy", pol, "-rejections", rej, "-json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Shadow struct {
			Requests, Rejected       int64
			Clients, ClientsRejected int
			Top                      []struct {
				Key      string
				Rejected int64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	s := rep.Shadow
	if s.Requests != 10 || s.Rejected != 3 || s.Clients != 2 || s.ClientsRejected != 1 || len(s.Top) != 1 || s.Top[0].Key != "198.51.100.1" {
		t.Errorf("shadow = %+v, want 3 of 10 rejected, all of 198.51.100.1", s)
	}
	f, err := os.Open(rej)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"2026-11-30T10:00:00.5Z", "2026-11-30T10:00:00.6Z", "2026-11-30T10:00:00.7Z"}
	retry := []string{"0.5", "0.4", "0.3"}
	if len(rows) != 4 {
		t.Fatalf("%d CSV rows, want a header and 3", len(rows))
	}
	for i, w := range want {
		if rows[i+1][0] != w || rows[i+1][1] != "198.51.100.1" || rows[i+1][5] != "defaults.limit" || rows[i+1][7] != retry[i] {
			t.Errorf("row %d = %v, want %s for 198.51.100.1 on defaults.limit, Retry-After %s", i+1, rows[i+1], w, retry[i])
		}
	}

	// With A in the paid tier (burst 10) nothing would be rejected; the
	// text report says so.
	tiers := filepath.Join(dir, "tiers.csv")
	if err := os.WriteFile(tiers, []byte("key,tier\n198.51.100.1,paid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCmd(t, shadowLog(), false, fakeClock(0), "-policy", pol, "-tiers", tiers)
	if code != exitOK || !strings.Contains(out, "shadow replay: 0 of 10 requests") {
		t.Errorf("with tiers: exit %d, %s %s", code, out, errOut)
	}
}

func TestShadowUsage(t *testing.T) {
	for _, args := range [][]string{
		{"-rejections", "x.csv"},
		{"-tiers", "x.csv"},
		{"-policy", "/nonexistent.yaml"},
	} {
		code, _, errOut := runCmd(t, shadowLog(), false, fakeClock(0), args...)
		if code != exitUsage || errOut == "" {
			t.Errorf("%v: exit %d (%q), want %d", args, code, errOut, exitUsage)
		}
	}
}

// TestShadowTierFromLog: a tier logged with each request (here a JSON
// field) selects the tier's limit: A's 8 requests at once fit paid's
// burst of 10, B's 8 (no tier) meet the default burst of 5 and lose
// three, as in TestShadowReplay but with sub-second stamps kept as
// logged (A at 10.000–10.007 s, B at 10.100–10.107 s: under 0.01 tokens
// return between them).
func TestShadowTierFromLog(t *testing.T) {
	dir := t.TempDir()
	pol := filepath.Join(dir, "policy.yaml")
	if err := os.WriteFile(pol, []byte(shadowPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := range 8 {
		b.WriteString(`{"time":"2026-11-30T10:00:10.00` + string(rune('0'+i)) + `Z","user":"A","plan":"paid","method":"GET","path":"/"}` + "\n")
	}
	for i := range 8 {
		b.WriteString(`{"time":"2026-11-30T10:00:10.10` + string(rune('0'+i)) + `Z","user":"B","method":"GET","path":"/"}` + "\n")
	}
	code, out, errOut := runCmd(t, b.String(), false, fakeClock(0), "-format", "json", "-key", "field:user", "-tier-field", "plan", "-policy", pol, "-json")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Shadow struct {
			Rejected int64
			Top      []struct {
				Key, Tier string
				Rejected  int64
			}
		}
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Shadow.Rejected != 3 || len(rep.Shadow.Top) != 1 || rep.Shadow.Top[0].Key != "B" {
		t.Errorf("shadow %+v, want 3 rejections, all B's", rep.Shadow)
	}
}
