package server

import (
	"bytes"
	"context"
	"fmt"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/PuerkitoBio/goquery"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/measure"
	"github.com/ratelab/ratelab/shadow"
)

// measureDesign is the design the uploads are replayed through.
const measureDesign = "capacity=50&clients=20&p99=1"

// measureLog is a combined log over three seconds: client i (1 to 20)
// sends i requests in the second 10:00:01, and one request in each of the
// seconds around it; two lines are not log lines.
func measureLog() string {
	var b strings.Builder
	line := func(ip, ts, path string) {
		fmt.Fprintf(&b, "%s - - [30/Nov/2026:10:00:%s +0000] \"GET %s HTTP/1.1\" 200 12 \"-\" \"t\"\n", ip, ts, path)
	}
	for i := 1; i <= 20; i++ {
		line(fmt.Sprintf("198.51.100.%d", i), "00", "/v1/items/1")
	}
	for i := 1; i <= 20; i++ {
		for range i {
			line(fmt.Sprintf("198.51.100.%d", i), "01", fmt.Sprintf("/v1/items/%d", i))
		}
	}
	b.WriteString("this is not a log line\n")
	for i := 1; i <= 20; i++ {
		line(fmt.Sprintf("198.51.100.%d", i), "02", "/v1/orders")
	}
	b.WriteString("neither is this\n")
	return b.String()
}

// uploadLog posts the measure form with fields (in order) and the log last.
func uploadLog(t *testing.T, cfg config, path string, fields [][2]string, log string) *httptest.ResponseRecorder {
	t.Helper()
	var body bytes.Buffer
	w := multipart.NewWriter(&body)
	for _, f := range fields {
		if err := w.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	fw, err := w.CreateFormFile("log", "access.log")
	if err != nil {
		t.Fatal(err)
	}
	fw.Write([]byte(log))
	w.Close()
	req := httptest.NewRequest(http.MethodPost, path, &body)
	req.Header.Set("Content-Type", w.FormDataContentType())
	rec := httptest.NewRecorder()
	newServer(cfg).ServeHTTP(rec, req)
	return rec
}

func parseHTML(t *testing.T, rec *httptest.ResponseRecorder) *goquery.Document {
	t.Helper()
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(rec.Body.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestMeasureUpload: the page shows the log's measurement and the replay
// through the design's policy, and they are what packages measure and
// shadow make of the same log. The 1 s percentiles are derived by hand:
// client i's busiest second holds i requests, so over 20 clients the
// nearest-rank p50 is the 10th (10), p95 the 19th (19), p99 the 20th (20).
func TestMeasureUpload(t *testing.T) {
	log := measureLog()
	rec := uploadLog(t, config{}, measurePath, [][2]string{{"design", measureDesign}, {"format", "combined"}, {"key", "ip"}}, log)
	if rec.Code != http.StatusOK {
		t.Fatalf("status %d: %.500s", rec.Code, rec.Body)
	}
	doc := parseHTML(t, rec)
	row := doc.Find(`[data-testid="measure-windows"] tbody tr`).First()
	cells := row.Find("td").Map(func(_ int, s *goquery.Selection) string { return s.Text() })
	if row.Find("th").Text() != "1s" || len(cells) < 4 || cells[0] != "10" || cells[1] != "19" || cells[2] != "20" || cells[3] != "20" {
		t.Errorf("1s row = %s %v, want p50 10, p95 19, p99 20, max 20", row.Find("th").Text(), cells)
	}
	if got := doc.Find(`[data-testid="measure-bad"] h3`).Text(); !strings.HasPrefix(got, "2 lines") {
		t.Errorf("bad lines heading %q, want 2 lines", got)
	}
	if got := doc.Find(`[data-testid="measure-endpoints"] tbody tr`).First().Find("code").Text(); got != "/v1/items/{id}" {
		t.Errorf("busiest endpoint %q, want /v1/items/{id}", got)
	}

	// The replay is shadow.Replay over the same records.
	dp, _ := parseDesignQuery(measureDesign).policy()
	want, err := shadow.New(dp, shadow.Options{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := measure.Measure(context.Background(), strings.NewReader(log), accesslog.Config{}, measure.Options{
		Each: want.AddRecord,
	})
	if err != nil {
		t.Fatal(err)
	}
	rep, _ := want.Report()
	if rep.Rejected == 0 {
		t.Fatal("the test log must make the design reject something")
	}
	summary := doc.Find(`[data-testid="shadow-summary"]`).Text()
	if !strings.Contains(summary, fmt.Sprintf("%d of %d requests", rep.Rejected, rep.Requests)) {
		t.Errorf("shadow summary %q, want %d of %d", summary, rep.Rejected, rep.Requests)
	}
	if n := doc.Find(`[data-testid="shadow-top"] tbody tr`).Length(); n != len(rep.Top) {
		t.Errorf("%d offenders shown, want %d", n, len(rep.Top))
	}
	if doc.Find(`[data-chart-option]#chart-shadow`).Length() != 1 {
		t.Error("no shadow chart")
	}

	// Fill the calculator: the design with the measured clients and
	// per-minute percentiles (client i sends i + 2 requests in the minute).
	href, _ := doc.Find(`[data-testid="fill-calculator"]`).Attr("href")
	u, err := url.Parse(href)
	if err != nil {
		t.Fatal(err)
	}
	in, _ := res.Input(60e9)
	q := u.Query()
	if q.Get("capacity") != "50" || q.Get("clients") != "20" || q.Get("p99") != fmt.Sprint(in.P99) || q.Get("percentile_unit") != "minute" || in.P99 != 22 {
		t.Errorf("fill link %s: want the design's capacity, 20 clients and p99 22 per minute", href)
	}
}

// TestMeasureRejectionsCSV: the CSV endpoint streams exactly the
// rejections shadow writes for the same log.
func TestMeasureRejectionsCSV(t *testing.T) {
	log := measureLog()
	rec := uploadLog(t, config{}, rejectionsPath, [][2]string{{"design", measureDesign}}, log)
	if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "text/csv; charset=utf-8" {
		t.Fatalf("status %d, type %q: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
	}
	var want bytes.Buffer
	dp, _ := parseDesignQuery(measureDesign).policy()
	r, _ := shadow.New(dp, shadow.Options{Rejections: &want})
	measure.Measure(context.Background(), strings.NewReader(log), accesslog.Config{}, measure.Options{
		Each: r.AddRecord,
	})
	r.Report()
	if rec.Body.String() != want.String() || strings.Count(want.String(), "\n") < 2 {
		t.Errorf("CSV differs from shadow's:\n%s\nwant:\n%s", rec.Body, want.String())
	}
}

// TestMeasureProblems: bad fields are shown beside their fields, a log
// without one parseable line names the formats, an oversized log is a
// 413, a design with problems still measures but explains the missing
// replay.
func TestMeasureProblems(t *testing.T) {
	rec := uploadLog(t, config{}, measurePath, [][2]string{{"design", measureDesign}, {"format", "xml"}, {"key", "cookie:x"}, {"extra", "0"}}, measureLog())
	if rec.Code != http.StatusUnprocessableEntity {
		t.Fatalf("bad fields: status %d", rec.Code)
	}
	doc := parseHTML(t, rec)
	for _, f := range []string{"format", "key", "extra"} {
		if msg := doc.Find(`[data-testid="msg-` + f + `"]`).Text(); !strings.Contains(msg, f) {
			t.Errorf("message beside %s: %q", f, msg)
		}
	}
	if v, _ := doc.Find(`#m-key`).Attr("value"); v != "cookie:x" {
		t.Errorf("the key field lost its value: %q", v)
	}

	rec = uploadLog(t, config{}, measurePath, [][2]string{{"design", measureDesign}}, "nothing\nto see\n")
	doc = parseHTML(t, rec)
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(doc.Find(`[data-testid="measure-error"]`).Text(), "combined") {
		t.Errorf("no parseable line: %d %q", rec.Code, doc.Find(`[data-testid="measure-error"]`).Text())
	}

	rec = uploadLog(t, config{logLimit: 1000}, measurePath, [][2]string{{"design", measureDesign}}, measureLog())
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "-log-limit") {
		t.Errorf("oversized: %d %s", rec.Code, rec.Body)
	}

	rec = uploadLog(t, config{logLimit: 1000}, rejectionsPath, [][2]string{{"design", measureDesign}}, measureLog())
	if rec.Code != http.StatusRequestEntityTooLarge || !strings.Contains(rec.Body.String(), "-log-limit") {
		t.Errorf("oversized, rejections CSV: %d %s", rec.Code, rec.Body)
	}

	rec = uploadLog(t, config{}, measurePath, [][2]string{{"design", "capacity=-1"}}, measureLog())
	doc = parseHTML(t, rec)
	if rec.Code != http.StatusOK || doc.Find(`[data-testid="measure-windows"]`).Length() != 1 ||
		!strings.Contains(doc.Find(`[data-testid="shadow-error"]`).Text(), "capacity") {
		t.Errorf("design with problems: %d, shadow error %q", rec.Code, doc.Find(`[data-testid="shadow-error"]`).Text())
	}

	rec = uploadLog(t, config{}, rejectionsPath, [][2]string{{"design", "capacity=-1"}}, measureLog())
	if rec.Code != http.StatusUnprocessableEntity {
		t.Errorf("rejections for a design with problems: %d", rec.Code)
	}
}

// TestMeasureSQL: the page shows the warehouse query for valid names and
// the reason for invalid ones.
func TestMeasureSQL(t *testing.T) {
	doc, _ := getDoc(t, measurePath+"?design="+url.QueryEscape(measureDesign)+"&sql.dialect=clickhouse&sql.table=logs.access&sql.time=ts&sql.key=api_key")
	want, err := measure.ClickHouse(measure.Table{Name: "logs.access", Time: "ts", Key: "api_key"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Find(`[data-testid="sql-text"]`).Text(); got != want {
		t.Errorf("SQL differs from measure.ClickHouse's")
	}
	doc, _ = getDoc(t, measurePath+"?sql.dialect=duckdb&sql.parquet="+url.QueryEscape("logs/o'brien-*.parquet")+"&sql.time=ts&sql.key=api_key")
	want, err = measure.DuckDB(measure.Table{Parquet: "logs/o'brien-*.parquet", Time: "ts", Key: "api_key"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := doc.Find(`[data-testid="sql-text"]`).Text(); got != want || !strings.Contains(got, "read_parquet('logs/o''brien-*.parquet')") {
		t.Errorf("DuckDB over Parquet: the page shows\n%s\nwant measure.DuckDB's\n%s", got, want)
	}
	if v, _ := doc.Find(`#sql-dialect option[selected]`).Attr("value"); v != "duckdb" {
		t.Errorf("selected database %q, want duckdb", v)
	}
	doc, _ = getDoc(t, measurePath+"?sql.dialect=postgres&sql.parquet=a.parquet&sql.time=ts&sql.key=k")
	if doc.Find(`[data-testid="sql-text"]`).Length() != 0 || !strings.Contains(doc.Find(`[data-testid="sql-error"]`).Text(), "-sql duckdb") {
		t.Error("Parquet files for PostgreSQL gave SQL, or no error saying DuckDB reads them")
	}
	doc, _ = getDoc(t, measurePath+"?sql.table="+url.QueryEscape("logs; drop table x")+"&sql.time=ts&sql.key=k")
	if doc.Find(`[data-testid="sql-text"]`).Length() != 0 || doc.Find(`[data-testid="sql-error"]`).Text() == "" {
		t.Error("an unsafe table name gave SQL, or no error")
	}
	if v, _ := doc.Find(`input[name="design"]`).First().Attr("value"); v != "" {
		t.Errorf("design %q carried without one", v)
	}
}

// TestDesignerLinksToMeasure: the results link to the measure page with
// the design.
func TestDesignerLinksToMeasure(t *testing.T) {
	doc, _ := getDoc(t, "/?"+measureDesign)
	href, _ := testid(doc, "measure-link").Attr("href")
	u, _ := url.Parse(href)
	if u.Path != measurePath || u.Query().Get("design") == "" {
		t.Fatalf("measure link %q", href)
	}
	page, _ := getDoc(t, href)
	if v, _ := page.Find(`form[data-testid="measure-form"] input[name="design"]`).Attr("value"); v != u.Query().Get("design") {
		t.Errorf("the form carries %q, want the design", v)
	}
}

// TestEveryMeasureLinkCarriesTheDesign: the designer's lede link and the
// results' link both open the measure page with the design.
func TestEveryMeasureLinkCarriesTheDesign(t *testing.T) {
	doc, _ := getDoc(t, "/?"+measureDesign)
	links := doc.Find(`a[href^="/measure"]`)
	if links.Length() < 2 || testid(doc, "measure-first").Length() != 1 {
		t.Fatalf("%d links to the measure page, want the lede's and the results'", links.Length())
	}
	want := parseDesignQuery(measureDesign).query()
	links.Each(func(_ int, a *goquery.Selection) {
		href, _ := a.Attr("href")
		u, _ := url.Parse(href)
		if got := u.Query().Get("design"); got != want {
			t.Errorf("%s link %q carries design %q, want %q", a.AttrOr("data-testid", ""), href, got, want)
		}
	})
}

// TestMeasureTierField: with the tier field named, a client logged as
// "paid" is replayed against the paid tier's larger limit (multiplier
// 10): fewer of its requests would be rejected than when the tier is not
// read and it gets the default limit.
func TestMeasureTierField(t *testing.T) {
	design := "capacity=500&p99=1&tiers.0.name=free&tiers.0.clients=19&tiers.1.name=paid&tiers.1.clients=1&tiers.1.multiplier=10"
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, `{"time":"2026-11-30T10:00:00.%03dZ","user":"big","plan":"paid","method":"GET","path":"/x"}`+"\n", i)
	}
	rejected := func(fields [][2]string) int64 {
		rec := uploadLog(t, config{}, measurePath, append([][2]string{{"design", design}, {"format", "json"}, {"key", "field:user"}}, fields...), b.String())
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
		var n, total int64
		fmt.Sscanf(parseHTML(t, rec).Find(`[data-testid="shadow-summary"] strong`).Text(), "%d of %d", &n, &total)
		if total != 60 {
			t.Fatalf("replayed %d requests, want 60", total)
		}
		return n
	}
	asDefault, asPaid := rejected(nil), rejected([][2]string{{"tier_field", "plan"}})
	if asDefault == 0 || asPaid >= asDefault {
		t.Errorf("rejections: %d with the default limit, %d as paid; want fewer as paid", asDefault, asPaid)
	}
	rec := uploadLog(t, config{}, measurePath, [][2]string{{"design", design}, {"tier_extra", "99"}}, b.String())
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(parseHTML(t, rec).Find(`[data-testid="msg-tier_extra"]`).Text(), "tier_extra") {
		t.Errorf("tier_extra 99: %d", rec.Code)
	}
}

// TestMeasureCapacity: a measure page without a design says the replay
// uses the example design and asks for the capacity, and "fill the
// calculator" carries it into a design the designer shows results for;
// left blank, the fill is a form that asks for it. A design with its own
// capacity is not asked.
func TestMeasureCapacity(t *testing.T) {
	doc, _ := getDoc(t, measurePath)
	if testid(doc, "measure-example").Length() != 1 || doc.Find(`#m-capacity`).Length() != 1 {
		t.Fatal("no design: no example notice or no capacity field")
	}
	doc, _ = getDoc(t, measurePath+"?design="+url.QueryEscape(measureDesign))
	if testid(doc, "measure-example").Length() != 0 || doc.Find(`#m-capacity`).Length() != 0 {
		t.Error("a design with a capacity: the example notice or the capacity field is shown")
	}

	fill := func(design, capacity string) *goquery.Document {
		t.Helper()
		rec := uploadLog(t, config{}, measurePath, [][2]string{{"design", design}, {"capacity", capacity}}, measureLog())
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d: %.300s", rec.Code, rec.Body)
		}
		return parseHTML(t, rec)
	}
	for _, design := range []string{"", "clients=20&p99=1"} {
		doc = fill(design, "300")
		href, ok := testid(doc, "fill-calculator").Attr("href")
		if !ok {
			t.Fatalf("design %q: no fill link", design)
		}
		u, _ := url.Parse(href)
		if got := u.Query().Get("capacity"); got != "300" {
			t.Errorf("design %q: fill link %q carries capacity %q, want 300", design, href, got)
		}
		page, _ := getDoc(t, href)
		if page.Find(`[data-testid="problems"], .field-msg:not(:empty)`).Length() != 0 || testid(page, "summary").Length() == 0 {
			t.Errorf("design %q: the filled design %q has problems", design, href)
		}
	}
	if doc := fill("clients=20&p99=1", "300"); testid(doc, "shadow-summary").Length() != 1 {
		t.Error("the capacity is not in the replayed design")
	}

	doc = fill("", "")
	form := testid(doc, "fill-form")
	if form.Length() != 1 || testid(doc, "fill-capacity").Length() != 1 {
		t.Fatal("no capacity: no fill form asking for it")
	}
	if form.Find(`input[type="hidden"][name="capacity"]`).Length() != 0 || form.Find(`input[type="hidden"][name="p99"]`).Length() != 1 {
		t.Errorf("fill form fields: %s", form.Find("input").Text())
	}

	rec := uploadLog(t, config{}, measurePath, [][2]string{{"capacity", "-1"}}, measureLog())
	if rec.Code != http.StatusUnprocessableEntity || !strings.Contains(parseHTML(t, rec).Find(`[data-testid="msg-capacity"]`).Text(), "capacity") {
		t.Errorf("capacity -1: %d", rec.Code)
	}
}
