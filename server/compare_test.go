package server

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/chartset"
)

func comparePage(t *testing.T, a, b string) (*goquery.Document, int) {
	t.Helper()
	return comparePageOf(t, url.Values{"a": {a}, "b": {b}})
}

// comparePageOf is the compare page for the query q.
func comparePageOf(t *testing.T, q url.Values) (*goquery.Document, int) {
	t.Helper()
	rec := httptest.NewRecorder()
	newServer(config{pageCache: -1}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, comparePath+"?"+q.Encode(), nil))
	doc, err := goquery.NewDocumentFromReader(rec.Body)
	if err != nil {
		t.Fatal(err)
	}
	return doc, rec.Code
}

// TestCompare: two designs that differ only in the paid tier's algorithm
// (and one that pins its burst) are diffed limit by limit — the paid tier
// changed, the rest the same — and both are charted on the same traffic,
// their charts with distinct ids.
func TestCompare(t *testing.T) {
	base := "capacity=2000&p99=5&tiers.0.name=free&tiers.0.clients=180&tiers.1.name=paid&tiers.1.clients=20&tiers.1.multiplier=4&pattern=idle_then_burst"
	doc, code := comparePage(t, "http://localhost:8080/?"+base, base+"&tiers.1.limit.algorithm=gcra&tiers.1.limit.burst=40")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	changed := map[string]bool{}
	doc.Find(`[data-testid="diff-row"]`).Each(func(_ int, s *goquery.Selection) {
		changed[strings.TrimSpace(s.Find("th").Contents().First().Text())] = s.AttrOr("data-changed", "") == "true"
	})
	want := map[string]bool{"default limit": false, "tier free": false, "tier paid": true, "global limit": false}
	for label, w := range want {
		got, ok := changed[label]
		if !ok || got != w {
			t.Errorf("%s: in the diff %v, changed %v; want changed %v", label, ok, got, w)
		}
	}
	paid := doc.Find(`[data-testid="diff-row"][data-changed="true"] td`)
	if !strings.Contains(paid.Eq(0).Text(), "token_bucket") || !strings.Contains(paid.Eq(1).Text(), "gcra(rate=40/s, burst=40)") {
		t.Errorf("the paid tier's row: %q against %q", paid.Eq(0).Text(), paid.Eq(1).Text())
	}
	ids := map[string]bool{}
	doc.Find("[data-chart-option]").Each(func(_ int, s *goquery.Selection) {
		id := s.AttrOr("id", "")
		if ids[id] {
			t.Errorf("chart id %q twice", id)
		}
		ids[id] = true
	})
	if len(ids) < 6 {
		t.Errorf("%d charts, want the policy charts of both designs", len(ids))
	}
}

// TestCompareBadDesign: a design with problems is named beside its field
// with a 422, and nothing is charted.
func TestCompareBadDesign(t *testing.T) {
	doc, code := comparePage(t, "capacity=2000&clients=10&p99=2", "capacity=-5&clients=10")
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", code)
	}
	if msg := doc.Find(`[data-testid="msg-b"]`).Text(); !strings.Contains(msg, "capacity") {
		t.Errorf("the message beside b: %q", msg)
	}
	if doc.Find("[data-chart-option]").Length() != 0 {
		t.Error("charts for a design with problems")
	}
}

// TestDesignerLinksCompare: the results link the compare page with the
// design as A.
func TestDesignerLinksCompare(t *testing.T) {
	doc, _ := getDoc(t, "/")
	href, _ := testid(doc, "compare-link").Attr("href")
	u, err := url.Parse(href)
	if err != nil || u.Path != comparePath || !strings.HasPrefix(u.Query().Get("a"), "/?capacity=2000") {
		t.Errorf("compare link %q", href)
	}
}

// TestCompareOutcome: what each policy did with the same traffic comes
// first, by class of clients. An idle client's burst of 300 requests at
// once, at 2 s, meets a token bucket that starts full: it admits its
// burst (100 in A, 50 in B) and rejects the rest at 2 s; the global limit
// (the usable 1 600/s, with a burst of as many) lets 300 through.
func TestCompareOutcome(t *testing.T) {
	base := "capacity=2000&clients=10&p99=5&limit.algorithm=token_bucket&limit.rate=10&pattern=idle_then_burst&pattern.count=300&pattern.idle=2"
	doc, code := comparePage(t, base+"&limit.burst=100", base+"&limit.burst=50")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	rows := map[string][2]string{}
	changed := map[string]bool{}
	doc.Find(`[data-testid="outcome-row"]`).Each(func(_ int, s *goquery.Selection) {
		label := strings.TrimSpace(s.Find("th").Contents().First().Text())
		rows[label] = [2]string{strings.TrimSpace(s.Find("td").Eq(0).Text()), strings.TrimSpace(s.Find("td").Eq(1).Text())}
		changed[label] = s.AttrOr("data-changed", "") == "true"
	})
	want := [2]string{"100 of 300 admitted (33 %); the first rejected at 2 s", "50 of 300 admitted (17 %); the first rejected at 2 s"}
	if rows["default"] != want || !changed["default"] {
		t.Errorf("the default clients' row: %q (changed %v); want %q, changed", rows["default"], changed["default"], want)
	}
	if _, ok := rows["the backend's busiest second"]; !ok {
		t.Errorf("no row for the backend's load in %v", rows)
	}
	if got := doc.Find(`[data-testid="compare-verdict"]`).Text(); !strings.HasPrefix(got, "A admits more for default; B for none. ") || !strings.Contains(got, "backend") {
		t.Errorf("the verdict: %q; want A admitting more for default, then a sentence on the backend", got)
	}
	// The answer comes before the limits and the charts.
	html, _ := doc.Html()
	if o, d := strings.Index(html, `data-testid="compare-outcome"`), strings.Index(html, `data-testid="compare-diff"`); o < 0 || d < 0 || o > d {
		t.Errorf("the outcome at %d, the limits at %d; want the outcome first", o, d)
	}
}

// TestCompareFoldsWhatIsTheSame: two of the largest designs that differ in
// one tier's limit (1/s with a burst of 1 in B) show that tier's row, and
// fold the other 117 limits (and the classes whose outcome is the same)
// under a toggle that counts them.
func TestCompareFoldsWhatIsTheSame(t *testing.T) {
	a := largestDesign()
	doc, code := comparePage(t, a, a+"&tiers.3.limit.rate=1&tiers.3.limit.burst=1")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	var shown []string
	doc.Find(`[data-testid="diff-row"]`).Each(func(_ int, s *goquery.Selection) {
		shown = append(shown, strings.TrimSpace(s.Find("th").Contents().First().Text()))
	})
	if len(shown) != 1 || shown[0] != "tier t3" {
		t.Errorf("the limits shown: %q; want only tier t3", shown)
	}
	same := doc.Find(`[data-testid="diff-same-row"]`).Length()
	if same != 117 {
		t.Errorf("%d limits folded away, want 117", same)
	}
	if got := strings.TrimSpace(doc.Find(`[data-testid="diff-same"] > summary`).Text()); got != "117 more, the same in both" {
		t.Errorf("the toggle says %q", got)
	}
	// 117 classes of clients (the default's, 16 tiers', 100 endpoints'),
	// and the backend's load when the charts have room for it.
	all := 117 + doc.Find(`tr:has(th:contains("the backend's busiest second"))`).Length()
	var outShown []string
	doc.Find(`[data-testid="outcome-row"]`).Each(func(_ int, s *goquery.Selection) {
		outShown = append(outShown, strings.TrimSpace(s.Find("th").Contents().First().Text()))
		if s.AttrOr("data-changed", "") != "true" {
			t.Errorf("an outcome the same in both is shown: %q", s.Text())
		}
	})
	outSame := doc.Find(`[data-testid="outcome-same-row"]`).Length()
	if !slices.Contains(outShown, "tier t3") || len(outShown)+outSame != all {
		t.Errorf("outcome rows: %q shown, %d folded; want tier t3's among them and %d in all", outShown, outSame, all)
	}
	// A design against itself: nothing differs, and the page says so.
	doc, _ = comparePage(t, a, a)
	if n, got := doc.Find(`[data-testid="diff-row"]`).Length(), strings.TrimSpace(doc.Find(`[data-testid="diff-all-same"]`).Text()); n != 0 || got != "All 118 are the same in both." {
		t.Errorf("a design against itself: %d limits shown, and %q", n, got)
	}
}

// TestOutcomeWords: the outcome's numbers in words, worked by hand.
func TestOutcomeWords(t *testing.T) {
	for _, c := range []struct {
		part, whole int64
		want        string
	}{{1, 3, "33"}, {2, 3, "67"}, {999, 1000, "99.9"}, {9999, 10000, "99.9"}, {1, 1000, "0.1"}, {1, 100000, "0.1"}, {0, 5, "0"}, {5, 5, "100"}, {0, 0, "0"}} {
		if got := percent(c.part, c.whole); got != c.want {
			t.Errorf("percent(%d, %d) = %q, want %q", c.part, c.whole, got, c.want)
		}
	}
	for _, c := range []struct {
		o    chartset.Outcome
		want string
	}{
		{chartset.Outcome{Offered: 300, Admitted: 300, FirstRejection: -1}, "all 300 admitted"},
		{chartset.Outcome{Offered: 300, Admitted: 180, Rejected: 120, FirstRejection: 1200 * time.Millisecond}, "180 of 300 admitted (60 %); the first rejected at 1.2 s"},
		{chartset.Outcome{Offered: 300, Admitted: 300, Delayed: 40, MaxDelay: 1500 * time.Millisecond, FirstRejection: -1}, "all 300 admitted, 40 of them delayed up to 1.5 s"},
		{chartset.Outcome{Offered: 4, Admitted: 3, Rejected: 1, Delayed: 2, MaxDelay: 200 * time.Millisecond, FirstRejection: 0}, "3 of 4 admitted (75 %), 2 of them delayed up to 200 ms; the first rejected at 0 s"},
	} {
		if got := outcomeText(c.o); got != c.want {
			t.Errorf("outcomeText(%+v) = %q, want %q", c.o, got, c.want)
		}
	}
	over := &chartset.Load{Peak: 2400, Capacity: 2000, Usable: 1600, Over: 11 * time.Second}
	within := &chartset.Load{Peak: 1200.4, Capacity: 2000, Usable: 1600}
	if got, want := loadText(over), "2400/s: 1.50 × the usable 1600/s, above it for 11 s"; got != want {
		t.Errorf("loadText(over) = %q, want %q", got, want)
	}
	if got, want := loadText(within), "1200/s, within the usable 1600/s"; got != want {
		t.Errorf("loadText(within) = %q, want %q", got, want)
	}
	for _, c := range []struct {
		a, b *chartset.Load
		want string
	}{
		{within, within, "Both keep the backend within its usable capacity."},
		{over, within, "A lets the backend's load past its usable capacity (1.50 × for 11 s); B keeps it within."},
		{within, over, "B lets the backend's load past its usable capacity (1.50 × for 11 s); A keeps it within."},
		{over, over, "Both let the backend's load past its usable capacity: A to 1.50 × for 11 s, B to 1.50 × for 11 s."},
		{nil, over, ""},
	} {
		if got := verdict(c.a, c.b); got != c.want {
			t.Errorf("verdict = %q, want %q", got, c.want)
		}
	}
	outcomes := func(admitted ...int64) []chartset.Outcome {
		var out []chartset.Outcome
		for i, n := range admitted {
			out = append(out, chartset.Outcome{Class: chartset.Class{Who: fmt.Sprintf("tier t%d", i)}, Admitted: n})
		}
		return out
	}
	for _, c := range []struct {
		a, b []chartset.Outcome
		want string
	}{
		{outcomes(5, 5), outcomes(5, 5), ""},
		{outcomes(5, 5), outcomes(6, 5), "B admits more for tier t0; A for none."},
		{outcomes(7, 5, 1), outcomes(6, 5, 2), "A admits more for tier t0; B for tier t2."},
		{outcomes(1, 1, 1, 1, 9), outcomes(2, 2, 2, 2, 1), "B admits more for tier t0, tier t1, tier t2 and 1 more; A for tier t4."},
		{outcomes(5), outcomes(5, 9), ""}, // a class only B has is not weighed
	} {
		if got := clientsVerdict(c.a, c.b); got != c.want {
			t.Errorf("clientsVerdict = %q, want %q", got, c.want)
		}
	}
}

// TestDesignerComparesPinsWithTheProposal: a design that pins a limit's
// number links the compare page with itself as A and, as B, the same
// design with the calculator's numbers (the algorithm kept); that page
// marks the pinned burst against the proposal's (rate p99 × 2 = 10,
// burst 10 s of it = 100). A design that pins no number, or has no
// measurements to propose from, has no such link.
func TestDesignerComparesPinsWithTheProposal(t *testing.T) {
	const pinned = "capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40&pattern=idle_then_burst"
	doc, _ := getDoc(t, "/?"+pinned)
	href, ok := testid(doc, "compare-proposal-link").Attr("href")
	if !ok {
		t.Fatal("no link to compare the pins with the proposal")
	}
	u, err := url.Parse(href)
	if err != nil || u.Path != comparePath {
		t.Fatalf("the link %q", href)
	}
	a, b := u.Query().Get("a"), u.Query().Get("b")
	if !strings.Contains(a, "limit.burst=40") || strings.Contains(b, "limit.burst") || !strings.Contains(b, "limit.algorithm=gcra") {
		t.Errorf("A %q, B %q; want the pinned burst in A only, the algorithm in both", a, b)
	}
	cmp, code := comparePage(t, a, b)
	if code != http.StatusOK {
		t.Fatalf("the compare page: status %d", code)
	}
	row := cmp.Find(`[data-testid="diff-row"][data-changed="true"]`)
	if got := strings.TrimSpace(row.Find("th").Contents().First().Text()); got != "default limit" ||
		!strings.Contains(row.Find("td").Eq(0).Text(), "burst=40") || !strings.Contains(row.Find("td").Eq(1).Text(), "gcra(rate=10/s, burst=100)") {
		t.Errorf("the changed limit: %q, %q against %q", got, row.Find("td").Eq(0).Text(), row.Find("td").Eq(1).Text())
	}
	for _, q := range []string{
		"capacity=2000&clients=200&p99=5&limit.algorithm=gcra",                                                     // nothing pinned
		"name=imported&capacity=2000&limit.algorithm=gcra&limit.rate=5&limit.burst=10&global.limit.algorithm=none", // no clients or percentiles
	} {
		doc, _ := getDoc(t, "/?"+q)
		if testid(doc, "compare-link").Length() != 1 {
			t.Fatalf("%s: no results (no link to compare)", q)
		}
		if testid(doc, "compare-proposal-link").Length() != 0 {
			t.Errorf("%s: a link to compare with a proposal", q)
		}
	}
}

// TestCompareOnOtherTraffic: the form's traffic replaces A's pattern with
// another at its defaults for both designs (steady: one client at 10 r/s
// for 30 s, 300 requests 100 ms apart, which a token bucket of rate 10
// refills for one by one, so both bursts admit them all), keeps it chosen
// in the form, and a name that is not a pattern is refused beside the
// field.
func TestCompareOnOtherTraffic(t *testing.T) {
	base := "capacity=2000&clients=10&p99=5&limit.algorithm=token_bucket&limit.rate=10&pattern=idle_then_burst&pattern.count=300&pattern.idle=2"
	doc, code := comparePageOf(t, url.Values{"a": {base + "&limit.burst=100"}, "b": {base + "&limit.burst=50"}, "pattern": {"steady"}})
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	if got := doc.Find(".compare-traffic").Text(); !strings.HasPrefix(got, "Pattern steady (constant rate): 300 requests") {
		t.Errorf("the traffic: %q", got)
	}
	if got := doc.Find(`#c-pattern option[selected]`).AttrOr("value", ""); got != "steady" {
		t.Errorf("the form's traffic: %q chosen, want steady", got)
	}
	// Each design opens in the designer on that traffic, and the swap
	// keeps it.
	for _, side := range []string{"a", "b"} {
		u, err := url.Parse(doc.Find(`[data-testid="open-`+side+`"]`).AttrOr("href", ""))
		if err != nil || u.Query().Get("pattern") != "steady" || u.Query().Get("pattern.count") != "" {
			t.Errorf("open %s: %v, pattern %q; want the steady pattern at its defaults", side, u, u.Query().Get("pattern"))
		}
	}
	swap, err := url.Parse(doc.Find(`[data-testid="compare-swap"]`).AttrOr("href", ""))
	if err != nil || swap.Query().Get("a") != base+"&limit.burst=50" || swap.Query().Get("b") != base+"&limit.burst=100" || swap.Query().Get("pattern") != "steady" {
		t.Errorf("the swap: %v", swap)
	}
	row := doc.Find(`tr:has(th:contains("default"))`).First()
	if a, b := strings.TrimSpace(row.Find("td").Eq(0).Text()), strings.TrimSpace(row.Find("td").Eq(1).Text()); a != "all 300 admitted" || b != a {
		t.Errorf("the default clients on steady traffic: %q against %q; want all 300 admitted by both", a, b)
	}
	doc, code = comparePageOf(t, url.Values{"a": {base}, "b": {base}, "pattern": {"<tsunami>"}})
	if msg := doc.Find(`[data-testid="msg-pattern"]`).Text(); code != http.StatusUnprocessableEntity || !strings.Contains(msg, `"<tsunami>" is not a pattern`) {
		t.Errorf("a bad pattern: status %d, message %q", code, msg)
	}
}

// TestCompareTrafficTooMuchForOne: traffic one design can chart and the
// other cannot (100 000 requests for each of the largest design's 117
// classes of clients passes the charts' budget of decisions) is a 422
// whose message stands beside that design, with both designs' limits
// still diffed and nothing charted.
func TestCompareTrafficTooMuchForOne(t *testing.T) {
	a := "capacity=20000&clients=10&p99=5&pattern=steady&pattern.rate=1000&pattern.duration=100"
	doc, code := comparePage(t, a, largestDesign())
	if code != http.StatusUnprocessableEntity {
		t.Fatalf("status %d, want 422", code)
	}
	if msg := doc.Find(`[data-testid="msg-b"]`).Text(); !strings.Contains(msg, "decisions") {
		t.Errorf("the message beside b: %q", msg)
	}
	if msg := doc.Find(`[data-testid="msg-a"]`).Text(); msg != "" {
		t.Errorf("a message beside a: %q", msg)
	}
	if doc.Find(`[data-testid="diff-row"]`).Length() == 0 || doc.Find("[data-chart-option]").Length() != 0 {
		t.Errorf("%d limits diffed and %d charts; want the limits and no charts", doc.Find(`[data-testid="diff-row"]`).Length(), doc.Find("[data-chart-option]").Length())
	}
}

// TestCompareSuggestsOtherAlgorithms: given A alone, the page offers A
// beside itself with each of the five other algorithms for its default
// limit, whose compare page marks that limit changed; a design with no
// default limit, or with problems, gets no such offer.
func TestCompareSuggestsOtherAlgorithms(t *testing.T) {
	const a = "capacity=2000&clients=200&p99=5&limit.algorithm=gcra&limit.burst=40"
	doc, code := comparePage(t, a, "")
	if code != http.StatusOK {
		t.Fatalf("status %d", code)
	}
	links := doc.Find(`[data-testid="compare-suggestions"] a`)
	var algs []string
	links.Each(func(_ int, s *goquery.Selection) { algs = append(algs, s.Text()) })
	if strings.Join(algs, " ") != "token_bucket leaky_bucket fixed_window sliding_log sliding_window" {
		t.Fatalf("offered %q; want every algorithm but gcra", algs)
	}
	u, err := url.Parse(links.Last().AttrOr("href", ""))
	if err != nil {
		t.Fatal(err)
	}
	if b := u.Query().Get("b"); !strings.Contains(b, "limit.algorithm=sliding_window") || strings.Contains(b, "limit.burst") {
		t.Errorf("B of the sliding window's offer: %q", b)
	}
	cmp, code := comparePageOf(t, u.Query())
	if code != http.StatusOK {
		t.Fatalf("the offered page: status %d", code)
	}
	row := cmp.Find(`[data-testid="diff-row"][data-changed="true"]`)
	if got := strings.TrimSpace(row.Find("th").Contents().First().Text()); row.Length() != 1 || got != "default limit" || !strings.Contains(row.Find("td").Eq(1).Text(), "sliding_window(") {
		t.Errorf("the offered page's changed limits: %d, %q, B %q", row.Length(), got, row.Find("td").Eq(1).Text())
	}
	if _, probs := parseDesignQuery("capacity=2000&clients=200&p99=5&limit.algorithm=none").policy(); len(probs) > 0 {
		t.Fatalf("the design without a default limit has problems: %v", probs)
	}
	for _, q := range []string{"capacity=2000&clients=200&p99=5&limit.algorithm=none", "capacity=-1&clients=200"} {
		doc, _ := comparePage(t, q, "")
		if n := doc.Find(`[data-testid="compare-suggestions"]`).Length(); n != 0 {
			t.Errorf("%s: offered other algorithms", q)
		}
	}
}

// TestDesignerLinksOtherAlgorithms: beside the calculator's six
// algorithms, the designer links the compare page with the design as A,
// which offers the others for its default limit; a policy without a
// default limit has no such link.
func TestDesignerLinksOtherAlgorithms(t *testing.T) {
	doc, _ := getDoc(t, "/?capacity=2000&clients=200&p99=5")
	u, err := url.Parse(testid(doc, "compare-algorithms-link").AttrOr("href", ""))
	if err != nil || u.Path != comparePath || !strings.Contains(u.Query().Get("a"), "capacity=2000") || u.Query().Get("b") != "" {
		t.Fatalf("the link: %v", u)
	}
	cmp, _ := comparePageOf(t, u.Query())
	if n := cmp.Find(`[data-testid="compare-suggestions"] a`).Length(); n != 5 {
		t.Errorf("the linked page offers %d algorithms, want 5", n)
	}
	doc, _ = getDoc(t, "/?capacity=2000&clients=200&p99=5&limit.algorithm=none")
	if testid(doc, "algorithms").Length() == 0 {
		t.Fatal("no algorithms section to look in")
	}
	if testid(doc, "compare-algorithms-link").Length() != 0 {
		t.Error("a link to other algorithms for a policy without a default limit")
	}
}
