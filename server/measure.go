package server

import (
	"context"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/ratelab/ratelab/accesslog"
	"github.com/ratelab/ratelab/measure"
	"github.com/ratelab/ratelab/shadow"
	"github.com/ratelab/ratelab/views"
)

// Paths of "measure first": the page (GET) and the upload (POST), and the
// upload that answers with the would-be rejections as CSV.
const (
	measurePath    = "/measure"
	rejectionsPath = "/measure/rejections.csv"
)

// Access log uploads: the largest log and the longest upload plus
// measurement by default (flags -log-limit, -log-timeout), and the
// largest form field sent before the log.
const (
	defaultLogLimit   = 1 << 30
	defaultLogTimeout = 10 * time.Minute
	maxFormField      = 64 << 10
)

// Upload bounds by default (flags -max-uploads, -max-uploads-per-client,
// -min-upload-rate, -max-clients, -max-second-requests, -max-spool), the
// time an upload may take before the rate applies, and the Retry-After of
// a refused one, in seconds.
const (
	defaultMaxUploads          = 4
	defaultMaxUploadsPerClient = 2
	defaultMinUploadRate       = 16 << 10
	defaultMaxClients          = 50_000
	defaultMaxSecond           = 20_000
	defaultMaxSpool            = 1 << 30
	uploadGrace                = 10 * time.Second
	uploadRetryAfter           = "10"
)

// uploads bounds the access-log uploads of one server: how many run at
// once, in all and per client, how slowly one may arrive, and how much a
// log may make its measurement hold. Both upload routes share it (run
// makes one with newUploads; a zero config gets one per route). It is
// safe for concurrent use.
type uploads struct {
	max, perClient int
	// minRate is the least average rate, in bytes per second, an upload
	// must keep once uploadGrace has passed; 0 turns it off.
	minRate int64
	// maxClients bounds a log's distinct clients (measure.Options), and
	// maxSecond the requests held to spread one whole second
	// (shadow.Options.MaxHeld).
	maxClients, maxSecond int
	// spooled counts the bytes every upload's would-be-rejections CSV
	// holds (memory and temporary file) against maxSpool, so that
	// -max-uploads uploads at once cannot fill the disk.
	spooled budget
	// acquired, if set, is called when an upload takes its slot; tests
	// hold uploads open with it.
	acquired func()

	mu       sync.Mutex
	running  int
	byClient map[string]int
}

// newUploads returns the bounds, the defaults where zero.
func newUploads(max, perClient int, minRate int64, maxClients, maxSecond int, maxSpool int64) *uploads {
	or := func(v, d int) int {
		if v == 0 {
			return d
		}
		return v
	}
	if maxSpool == 0 {
		maxSpool = defaultMaxSpool
	}
	return &uploads{max: or(max, defaultMaxUploads), perClient: or(perClient, defaultMaxUploadsPerClient), minRate: minRate,
		maxClients: or(maxClients, defaultMaxClients), maxSecond: or(maxSecond, defaultMaxSecond), spooled: budget{limit: maxSpool}, byClient: map[string]int{}}
}

// budget is a number of bytes that holders take and give back; it is safe
// for concurrent use.
type budget struct {
	limit int64
	used  atomic.Int64
}

// take takes n bytes, or none and false when fewer are left.
func (b *budget) take(n int64) bool {
	if b.used.Add(n) > b.limit {
		b.used.Add(-n)
		return false
	}
	return true
}

// give gives back n bytes taken.
func (b *budget) give(n int64) { b.used.Add(-n) }

// uploadFlags are the flags of the upload bounds (see uploads).
type uploadFlags struct {
	maxUploads, maxPerClient, maxClients, maxSecond *int
	minRate, maxSpool                               *int64
}

// addUploadFlags defines the upload bounds' flags on fs.
func addUploadFlags(fs *flag.FlagSet) uploadFlags {
	return uploadFlags{
		maxUploads: fs.Int("max-uploads", defaultMaxUploads,
			"most access-log `uploads` measured at once; more get 503 with Retry-After"),
		maxPerClient: fs.Int("max-uploads-per-client", defaultMaxUploadsPerClient,
			"most access-log `uploads` one client address runs at once; more get 429 with Retry-After"),
		minRate: fs.Int64("min-upload-rate", defaultMinUploadRate,
			fmt.Sprintf("least average `bytes per second` of an access-log upload after its first %s; slower ones get 408; 0 turns it off", uploadGrace)),
		maxClients: fs.Int("max-clients", defaultMaxClients,
			"most distinct `clients` (keys) one access log may have; more get 422"),
		maxSecond: fs.Int("max-second-requests", defaultMaxSecond,
			"most `requests` of one whole-second timestamp the replay spreads over their second; past it they are replayed at once and the replay is marked degraded"),
		maxSpool: fs.Int64("max-spool", defaultMaxSpool,
			"most `bytes` of would-be-rejections CSV all uploads hold at once, in memory and temporary files; an upload whose CSV finds no room gets 503 with Retry-After"),
	}
}

// apply checks the flags and sets cfg.uploads.
func (f uploadFlags) apply(cfg *config) error {
	for _, v := range []struct {
		name string
		n    int
	}{{"max-uploads", *f.maxUploads}, {"max-uploads-per-client", *f.maxPerClient}, {"max-clients", *f.maxClients}, {"max-second-requests", *f.maxSecond}} {
		if v.n < 1 {
			return fmt.Errorf("-%s: %d; want at least 1", v.name, v.n)
		}
	}
	if *f.minRate < 0 {
		return fmt.Errorf("-min-upload-rate: %d; want 0 (off) or more bytes per second", *f.minRate)
	}
	if *f.maxSpool < 1 {
		return fmt.Errorf("-max-spool: %d; want at least 1 byte", *f.maxSpool)
	}
	cfg.uploads = newUploads(*f.maxUploads, *f.maxPerClient, *f.minRate, *f.maxClients, *f.maxSecond, *f.maxSpool)
	return nil
}

// uploadsOf is cfg's upload bounds, the defaults when it has none.
func uploadsOf(cfg config) *uploads {
	if cfg.uploads != nil {
		return cfg.uploads
	}
	return newUploads(0, 0, defaultMinUploadRate, 0, 0, 0)
}

// acquire takes an upload slot for client, or answers why not: 429 past
// the client's share, 503 past the server's, both with Retry-After.
func (u *uploads) acquire(c echo.Context, client string) (release func(), err error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	switch {
	case u.byClient[client] >= u.perClient:
		c.Response().Header().Set(echo.HeaderRetryAfter, uploadRetryAfter)
		return nil, echo.NewHTTPError(http.StatusTooManyRequests, fmt.Sprintf(
			"you have %d access-log uploads running, the most one client may (flag -max-uploads-per-client); wait for one to finish", u.perClient))
	case u.running >= u.max:
		c.Response().Header().Set(echo.HeaderRetryAfter, uploadRetryAfter)
		return nil, echo.NewHTTPError(http.StatusServiceUnavailable, fmt.Sprintf(
			"the server is measuring %d access logs, the most it runs at once (flag -max-uploads); try again shortly", u.max))
	}
	u.running++
	u.byClient[client]++
	if u.acquired != nil {
		u.acquired()
	}
	return func() {
		u.mu.Lock()
		defer u.mu.Unlock()
		u.running--
		if u.byClient[client]--; u.byClient[client] <= 0 {
			delete(u.byClient, client)
		}
	}, nil
}

// tooSlowError is an upload that fell under the minimum rate.
type tooSlowError struct{ rate int64 }

func (e *tooSlowError) Error() string {
	return fmt.Sprintf("upload slower than %d bytes per second", e.rate)
}

// slowReader fails with a *tooSlowError once the bytes read fall under minRate
// per second of the time since start, less uploadGrace. It also moves the
// connection's read deadline to the instant the rate would be missed, so
// an upload that stops sending is cut off then instead of holding its
// slot until the log timeout.
type slowReader struct {
	r        io.Reader
	minRate  int64
	start    time.Time
	end      time.Time // the log timeout's end, the latest deadline
	n        int64
	now      func() time.Time
	deadline func(time.Time) error // the connection's read deadline
	set      time.Time             // the deadline last set
}

// due is when the bytes read so far stop being enough.
func (s *slowReader) due() time.Time {
	return s.start.Add(uploadGrace + time.Duration(float64(s.n)/float64(s.minRate)*float64(time.Second)))
}

func (s *slowReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	s.n += int64(n)
	if s.now().After(s.due()) || err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
		_ = s.deadline(s.end)
		return n, &tooSlowError{rate: s.minRate}
	}
	// Errors are ignored where deadlines are unsupported (httptest's
	// recorder); the check above still holds there.
	if err != nil {
		// The body is read: the deadline is the log timeout's again, so
		// that the server's background read does not cancel the
		// measurement's context.
		_ = s.deadline(s.end)
		return n, err
	}
	if d := s.due(); d.Sub(s.set) >= time.Second {
		if d.After(s.end) {
			d = s.end
		}
		_ = s.deadline(d)
		s.set = d
	}
	return n, nil
}

// isLogUpload reports whether a request uploads an access log; such a
// body may be far larger than a page's, and the handler caps it itself.
func isLogUpload(req *http.Request) bool {
	return req.Method == http.MethodPost && (req.URL.Path == measurePath || req.URL.Path == rejectionsPath)
}

// handleMeasurePage answers GET /measure?design=<design query>: the upload
// form for that design, and the warehouse SQL when sql.* names a table.
func handleMeasurePage(c echo.Context) error {
	q := c.QueryParams()
	v := measureView(q.Get("design"))
	v.Form.Capacity = strings.TrimSpace(q.Get("capacity"))
	v.SQL = sqlView(q)
	return render(c, http.StatusOK, views.MeasurePage(v))
}

// measureView is the page for a design with the form's defaults. A
// design without a capacity (none at all is the example design, whose
// capacity is not the user's) makes the form ask for one, so that "fill
// the calculator" has it.
func measureView(design string) views.MeasureView {
	return views.MeasureView{
		Design: design, DesignURL: "/?" + design,
		Example:     isExampleDesign(design),
		AskCapacity: !hasCapacity(design),
		Form:        views.MeasureForm{Format: "combined", Key: "ip", Extra: "1", Comma: ",", TierExtra: "0", Messages: map[string]string{}},
	}
}

// isExampleDesign reports whether the design query is read as the
// example design: it names no design parameter (or only the example's).
func isExampleDesign(design string) bool {
	return parseDesignQuery(design).query() == parseDesignQuery("").query()
}

// hasCapacity reports whether the design query gives the service's
// capacity itself.
func hasCapacity(design string) bool {
	return !isExampleDesign(design) && strings.TrimSpace(mustParse(design).Get("capacity")) != ""
}

// replayDesign is the design query the log is replayed through: the
// design with the form's capacity, or the example design as it is (a
// capacity alone is no design to replay).
func replayDesign(design, capacity string) string {
	if isExampleDesign(design) {
		return design
	}
	return withCapacity(design, capacity)
}

// withCapacity is the design query with the capacity the measure form
// asked for, when the design has none; the design as it was otherwise.
func withCapacity(design, capacity string) string {
	if capacity == "" || hasCapacity(design) {
		return design
	}
	q := url.Values{}
	if !isExampleDesign(design) {
		q = mustParse(design)
	}
	q.Set("capacity", capacity)
	return q.Encode()
}

// sqlView builds the warehouse query from sql.dialect, sql.table (or, for
// DuckDB, sql.parquet), sql.time, sql.key and sql.epoch; nothing when no
// table is named.
func sqlView(q url.Values) views.SQLView {
	s := views.SQLView{Dialect: q.Get("sql.dialect"), Table: q.Get("sql.table"), Parquet: q.Get("sql.parquet"), TimeColumn: q.Get("sql.time"),
		KeyColumn: q.Get("sql.key"), Epoch: q.Get("sql.epoch") != ""}
	if s.Table == "" && s.Parquet == "" && s.TimeColumn == "" && s.KeyColumn == "" {
		return s
	}
	t := measure.Table{Name: s.Table, Parquet: s.Parquet, Time: s.TimeColumn, Key: s.KeyColumn, TimeIsEpoch: s.Epoch}
	var err error
	switch s.Dialect {
	case "", "postgres":
		s.Text, err = measure.PostgreSQL(t, nil)
	case "clickhouse":
		s.Text, err = measure.ClickHouse(t, nil)
	case "duckdb":
		s.Text, err = measure.DuckDB(t, nil)
	default:
		err = fmt.Errorf("sql.dialect: %q is not a database; want postgres, clickhouse or duckdb", s.Dialect)
	}
	if err != nil {
		s.Text, s.Error = "", err.Error()
	}
	return s
}

// logUpload is an upload's form, read from the parts before the log.
type logUpload struct {
	form   views.MeasureForm
	design string
	cfg    accesslog.Config
	tiers  map[string]string
}

// readUpload reads the multipart body up to the log part and returns the
// form and the log's reader. A field problem is recorded in
// form.Messages; err is for a body that is not a form with a log.
func readUpload(c echo.Context, limit int64, up *uploads, clock func() time.Time, timeout time.Duration) (*logUpload, io.Reader, error) {
	req := c.Request()
	body := io.Reader(req.Body)
	if up.minRate > 0 {
		rc := http.NewResponseController(c.Response().Writer)
		start := clock()
		body = &slowReader{r: req.Body, minRate: up.minRate, start: start, end: start.Add(timeout), now: clock,
			deadline: rc.SetReadDeadline}
	}
	req.Body = http.MaxBytesReader(c.Response(), io.NopCloser(body), limit)
	mr, err := req.MultipartReader()
	if err != nil {
		return nil, nil, echo.NewHTTPError(http.StatusBadRequest, "send the form as multipart/form-data with the log in the field \"log\"")
	}
	vals := url.Values{}
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, nil, echo.NewHTTPError(http.StatusUnprocessableEntity, "log: no log file was sent; choose one in the form")
		}
		if err != nil {
			return nil, nil, uploadError(err)
		}
		if part.FormName() == "log" {
			u := parseUploadForm(vals)
			return u, part, nil
		}
		b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
		if err != nil {
			return nil, nil, uploadError(err)
		}
		if len(b) > maxFormField {
			return nil, nil, echo.NewHTTPError(http.StatusRequestEntityTooLarge,
				fmt.Sprintf("%s: the field is longer than %d bytes", part.FormName(), maxFormField))
		}
		vals.Add(part.FormName(), string(b))
	}
}

// uploadError names a body over the limit or too slow; other read errors
// are a 400.
func uploadError(err error) error {
	if herr := uploadFailure(err); herr != nil {
		return herr
	}
	return echo.NewHTTPError(http.StatusBadRequest, "cannot read the upload: "+err.Error())
}

// uploadFailure is the answer to an upload that broke a bound while it
// was read (413 over the size, 408 under the rate), or nil for any other
// error.
func uploadFailure(err error) error {
	if mbe := (*http.MaxBytesError)(nil); errors.As(err, &mbe) {
		return echo.NewHTTPError(http.StatusRequestEntityTooLarge,
			fmt.Sprintf("the log is larger than %d bytes, the most this server reads (flag -log-limit)", mbe.Limit))
	}
	if ts := (*tooSlowError)(nil); errors.As(err, &ts) {
		return echo.NewHTTPError(http.StatusRequestTimeout, fmt.Sprintf(
			"the upload arrived slower than %d bytes per second after its first %s, the least this server waits for (flag -min-upload-rate)",
			ts.rate, uploadGrace))
	}
	return nil
}

// parseUploadForm reads the form fields into a reader configuration,
// recording each bad field's problem beside it.
func parseUploadForm(vals url.Values) *logUpload {
	get := func(k, def string) string {
		if v := strings.TrimSpace(vals.Get(k)); v != "" {
			return v
		}
		return def
	}
	u := &logUpload{design: vals.Get("design")}
	f := views.MeasureForm{
		Format: get("format", "combined"), Key: get("key", "ip"), Extra: get("extra", "1"),
		TimeField: get("time_field", ""), IPField: get("ip_field", ""), MethodField: get("method_field", ""),
		PathField: get("path_field", ""), Request: get("request_field", ""), Comma: get("comma", ","),
		Tiers: vals.Get("tiers"), TierField: get("tier_field", ""), TierExtra: get("tier_extra", "0"),
		Capacity: get("capacity", ""), Messages: map[string]string{},
	}
	if f.Capacity != "" {
		if c, err := strconv.ParseFloat(f.Capacity, 64); err != nil || !(c > 0) || c > 1e12 {
			f.Messages["capacity"] = fmt.Sprintf("capacity: %q is out of range; want requests per second above 0, or empty", f.Capacity)
		}
	}
	cfg := accesslog.Config{Fields: accesslog.Fields{Time: f.TimeField, IP: f.IPField, Method: f.MethodField, Path: f.PathField,
		Request: f.Request, Tier: f.TierField}}
	if !slices.Contains(views.Formats, f.Format) {
		f.Messages["format"] = fmt.Sprintf("format: %q is not a log format; want combined, json or csv", f.Format)
	}
	cfg.Format = accesslog.Format(f.Format)
	key, err := accesslog.ParseKey(f.Key)
	if err != nil {
		f.Messages["key"] = "key: " + err.Error()
	}
	cfg.Key = key
	if n, err := strconv.Atoi(f.Extra); err != nil || n < 1 || n > 16 {
		f.Messages["extra"] = fmt.Sprintf("extra: %q is out of range; want a whole number from 1 to 16", f.Extra)
	} else {
		cfg.Extra = n
	}
	if n, err := strconv.Atoi(f.TierExtra); err != nil || n < 0 || n > 16 {
		f.Messages["tier_extra"] = fmt.Sprintf("tier_extra: %q is out of range; want a whole number from 0 (none) to 16", f.TierExtra)
	} else {
		cfg.TierExtra = n
	}
	comma := f.Comma
	if comma == `\t` {
		comma = "\t"
	}
	if len(comma) != 1 {
		f.Messages["comma"] = fmt.Sprintf("comma: %q is not one character; want , or ; or \\t", f.Comma)
	} else {
		cfg.Comma = comma[0]
	}
	if len(f.Messages) == 0 {
		if _, err := accesslog.NewReader(strings.NewReader(""), cfg); err != nil {
			f.Messages["format"] = err.Error()
		}
	}
	tiers, err := parseTiers(f.Tiers)
	if err != nil {
		f.Messages["tiers"] = "tiers: " + err.Error()
	}
	u.form, u.cfg, u.tiers = f, cfg, tiers
	return u
}

// parseTiers reads "key,tier" lines; blank lines and a "key,tier" header
// are skipped.
func parseTiers(text string) (map[string]string, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = 2
	r.TrimLeadingSpace = true
	out := map[string]string{}
	for {
		row, err := r.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%v; want one \"key,tier\" per line", err)
		}
		if row[0] == "key" && row[1] == "tier" {
			continue
		}
		out[row[0]] = row[1]
	}
}

// extendDeadlines gives an upload the log timeout instead of the server's
// read and write timeouts, where the connection allows it.
func extendDeadlines(c echo.Context, timeout time.Duration) {
	rc := http.NewResponseController(c.Response().Writer)
	end := time.Now().Add(timeout)
	// httptest's recorder supports neither; a real connection does.
	_ = rc.SetReadDeadline(end)
	_ = rc.SetWriteDeadline(end)
}

// uploadWorkers is how many cores one upload is measured and replayed
// on: its log is parsed and its clients counted on this many goroutines
// each, which bounds the chunks of log in flight (8 a worker, about
// 256 KiB each, see measure.Options.Workers) whatever the machine's
// cores.
const uploadWorkers = 2

// handleMeasure answers POST /measure: the log is measured and replayed
// through the design's policy in one streaming pass, and the page comes
// back with both. A bad form field is shown beside its field (422); a log
// with no parseable line says which formats were expected (422).
func handleMeasure(cfg config) echo.HandlerFunc {
	limit, timeout := orDefaults(cfg)
	up, clock := uploadsOf(cfg), clockOf(cfg)
	return func(c echo.Context) error {
		release, err := up.acquire(c, c.RealIP())
		if err != nil {
			return err
		}
		defer release()
		extendDeadlines(c, timeout)
		u, log, err := readUpload(c, limit, up, clock, timeout)
		if err != nil {
			return err
		}
		v := measureView(u.design)
		v.Form = u.form
		if len(u.form.Messages) > 0 {
			v.Error = "Fix the fields marked below."
			return render(c, http.StatusUnprocessableEntity, views.MeasurePage(v))
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
		defer cancel()

		d := parseDesignQuery(replayDesign(u.design, u.form.Capacity))
		var replay *shadow.Replayer
		shadowErr := ""
		if p, probs := d.policy(); len(probs) > 0 {
			shadowErr = "No replay: the design has problems (" + (&invalidRequest{problems: probs}).Error() + "). Fix them in the designer, then measure again."
		} else if replay, err = shadow.New(p, shadow.Options{Tiers: u.tiers, MaxHeld: up.maxSecond}); err != nil {
			shadowErr = "No replay: " + err.Error()
		}
		opts := measure.Options{MaxClients: up.maxClients, Workers: uploadWorkers}
		if replay != nil {
			opts.Replay = replay.Sharded()
		}
		res, err := measure.Measure(ctx, log, u.cfg, opts)
		if err != nil {
			if herr := uploadFailure(err); herr != nil {
				return herr
			}
			v.Error = measureFailure(err)
			return render(c, http.StatusUnprocessableEntity, views.MeasurePage(v))
		}
		v.Result = measureResult(res, withCapacity(u.design, u.form.Capacity), d)
		if replay != nil {
			rep, err := replay.Report()
			if err != nil {
				return err
			}
			v.Result.Shadow = shadowView(rep, up.maxSecond)
		} else {
			v.Result.Shadow = &views.ShadowView{Error: shadowErr}
		}
		return render(c, http.StatusOK, views.MeasurePage(v))
	}
}

// measureFailure words a log that gave no measurement.
func measureFailure(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "The log took longer than this server allows to upload and measure (flag -log-timeout); measure it with ratelab measure instead."
	case errors.Is(err, accesslog.ErrNoRecords):
		return err.Error()
	case errors.Is(err, measure.ErrTooManyClients):
		return "The log has too many clients for this server: " + err.Error() +
			" (flag -max-clients); measure it with ratelab measure, which has no such bound."
	}
	return "The log could not be read: " + err.Error()
}

// handleRejections answers POST /measure/rejections.csv: the same upload,
// answered with the CSV of every would-be rejection.
//
// The CSV is complete or not sent. It is held (spool: memory, then a
// temporary file, at most rejectionsLimit bytes) until the whole upload
// is read and replayed, and only then sent with its Content-Length; an
// upload that fails midway gets an error status and no CSV. Streaming it
// instead would commit a 200 before the upload is read: net/http may then
// discard the rest of the request body (HTTP/1.x handlers must read the
// body before writing), which silently cut the log and the CSV short.
func handleRejections(cfg config) echo.HandlerFunc {
	limit, timeout := orDefaults(cfg)
	up, clock := uploadsOf(cfg), clockOf(cfg)
	return func(c echo.Context) error {
		release, err := up.acquire(c, c.RealIP())
		if err != nil {
			return err
		}
		defer release()
		extendDeadlines(c, timeout)
		u, log, err := readUpload(c, limit, up, clock, timeout)
		if err != nil {
			return err
		}
		if len(u.form.Messages) > 0 {
			var msgs []string
			for _, k := range slices.Sorted(maps.Keys(u.form.Messages)) {
				msgs = append(msgs, u.form.Messages[k])
			}
			return echo.NewHTTPError(http.StatusUnprocessableEntity, strings.Join(msgs, "; "))
		}
		d := parseDesignQuery(replayDesign(u.design, u.form.Capacity))
		p, probs := d.policy()
		if len(probs) > 0 {
			return echo.NewHTTPError(http.StatusUnprocessableEntity, "the design has problems: "+(&invalidRequest{problems: probs}).Error())
		}
		out := &spool{limit: rejectionsLimit, budget: &up.spooled}
		defer out.Close()
		replay, err := shadow.New(p, shadow.Options{Tiers: u.tiers, Rejections: out, MaxHeld: up.maxSecond})
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(c.Request().Context(), timeout)
		defer cancel()
		if _, err = measure.Measure(ctx, log, u.cfg, measure.Options{Replay: replay.Sharded(), MaxClients: up.maxClients, Workers: uploadWorkers}); err != nil {
			if herr := uploadFailure(err); herr != nil {
				return herr
			}
			return echo.NewHTTPError(http.StatusUnprocessableEntity, measureFailure(err))
		}
		if _, err = replay.Report(); err != nil {
			if errors.Is(err, errSpoolFull) {
				return echo.NewHTTPError(http.StatusUnprocessableEntity, fmt.Sprintf(
					"the would-be rejections are more than %d bytes of CSV, the most this server holds; write them with ratelab measure -rejections instead", rejectionsLimit))
			}
			if errors.Is(err, errSpoolBusy) {
				c.Response().Header().Set(echo.HeaderRetryAfter, uploadRetryAfter)
				return echo.NewHTTPError(http.StatusServiceUnavailable, fmt.Sprintf(
					"the server holds %d bytes of would-be rejections for this and other uploads, the most it holds at once (flag -max-spool); try again shortly, or write them with ratelab measure -rejections", up.spooled.limit))
			}
			return err
		}
		h := c.Response().Header()
		h.Set(echo.HeaderContentType, "text/csv; charset=utf-8")
		h.Set(echo.HeaderContentDisposition, `attachment; filename="would-be-rejections.csv"`)
		h.Set(echo.HeaderContentLength, strconv.FormatInt(out.n, 10))
		c.Response().WriteHeader(http.StatusOK)
		// The status is sent: a failure now can only cut the connection,
		// which the declared length lets the client notice.
		_, err = out.WriteTo(c.Response())
		return err
	}
}

// rejectionsLimit bounds the would-be rejections CSV one upload may make,
// in bytes, and spoolMemory the part of it held in memory; the rest waits
// in a temporary file. All uploads' CSVs together are bounded by
// -max-spool.
const (
	rejectionsLimit = 1 << 30
	spoolMemory     = 1 << 20
)

// errSpoolFull is a spool's write past its limit, and errSpoolBusy one
// past what its budget has left.
var (
	errSpoolFull = errors.New("spool full")
	errSpoolBusy = errors.New("spool budget spent")
)

// spool holds a response body until it is complete: its first
// spoolMemory bytes in memory, the rest in a temporary file that Close
// removes; at most limit bytes in all, each taken from budget (when set)
// until Close. It is not safe for concurrent use.
type spool struct {
	limit  int64
	budget *budget
	n      int64
	mem    []byte
	f      *os.File
}

// Write holds p, or fails with errSpoolFull past the limit and with
// errSpoolBusy past the budget.
func (s *spool) Write(p []byte) (int, error) {
	if s.n+int64(len(p)) > s.limit {
		return 0, errSpoolFull
	}
	if s.budget != nil && !s.budget.take(int64(len(p))) {
		return 0, errSpoolBusy
	}
	if s.f == nil && len(s.mem)+len(p) <= spoolMemory {
		s.mem = append(s.mem, p...)
		s.n += int64(len(p))
		return len(p), nil
	}
	if s.f == nil {
		f, err := os.CreateTemp("", "ratelab-rejections-*.csv")
		if err != nil {
			if s.budget != nil {
				s.budget.give(int64(len(p)))
			}
			return 0, fmt.Errorf("rejections spool: %w", err)
		}
		s.f = f
	}
	n, err := s.f.Write(p)
	s.n += int64(n)
	if s.budget != nil {
		s.budget.give(int64(len(p) - n))
	}
	return n, err
}

// WriteTo writes everything held to w.
func (s *spool) WriteTo(w io.Writer) (int64, error) {
	n, err := w.Write(s.mem)
	if err != nil || s.f == nil {
		return int64(n), err
	}
	if _, err := s.f.Seek(0, io.SeekStart); err != nil {
		return int64(n), err
	}
	m, err := io.Copy(w, s.f)
	return int64(n) + m, err
}

// Close removes the temporary file, if any, and gives back the budget.
func (s *spool) Close() error {
	if s.budget != nil {
		s.budget.give(s.n)
		s.n = 0
	}
	if s.f == nil {
		return nil
	}
	name := s.f.Name()
	err := s.f.Close()
	if rerr := os.Remove(name); err == nil {
		err = rerr
	}
	s.f = nil
	return err
}

// clockOf is cfg's clock, time.Now when it has none.
func clockOf(cfg config) func() time.Time {
	if cfg.clock != nil {
		return cfg.clock
	}
	return time.Now
}

// orDefaults is cfg's log limit and timeout, the defaults where zero.
func orDefaults(cfg config) (int64, time.Duration) {
	limit, timeout := cfg.logLimit, cfg.logTimeout
	if limit <= 0 {
		limit = defaultLogLimit
	}
	if timeout <= 0 {
		timeout = defaultLogTimeout
	}
	return limit, timeout
}

// measureResult formats a measurement, with the designer link that puts
// its percentiles into the design.
func measureResult(res *measure.Result, design string, d *designPage) *views.MeasureResult {
	stamp := func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }
	r := &views.MeasureResult{
		Lines: res.Lines, Requests: res.Requests, NoKey: res.NoKey, Clients: res.Clients,
		From: stamp(res.From), To: stamp(res.To), Span: res.Span.String(),
	}
	for _, w := range res.Windows {
		r.Windows = append(r.Windows, views.WindowRow{Window: w.Window.String(), P50: w.P50, P95: w.P95, P99: w.P99,
			Max: w.Max, MaxKey: w.MaxKey, ServicePeak: w.ServicePeak, ServicePeakAt: stamp(w.ServicePeakAt), Late: w.Late})
		r.ClientWindows = append(r.ClientWindows, w.Window.String())
	}
	for _, c := range res.TopClients {
		row := views.ClientRow{Key: c.Key, Requests: c.Requests}
		for _, p := range c.Peaks {
			row.Peaks = append(row.Peaks, fmt.Sprintf("%d at %s", p.Requests, stamp(p.At)))
		}
		r.TopClients = append(r.TopClients, row)
	}
	for _, e := range res.Endpoints {
		r.Endpoints = append(r.Endpoints, views.EndpointRow{Method: e.Method, Path: e.Path, Requests: e.Requests,
			Share: strconv.FormatFloat(100*e.Share, 'f', 1, 64) + " %"})
	}
	r.Bad.Count = res.Bad.Count
	for _, reason := range slices.Sorted(maps.Keys(res.Bad.ByReason)) {
		r.Bad.Reasons = append(r.Bad.Reasons, views.ReasonRow{Reason: string(reason), Count: res.Bad.ByReason[reason]})
	}
	for _, e := range res.Bad.Examples {
		r.Bad.Examples = append(r.Bad.Examples, views.ExampleRow{Line: e.Line, Reason: string(e.Reason), Text: e.Text})
	}
	in, err := res.Input(time.Minute)
	if err != nil {
		r.FillNote = "No percentiles for the calculator: " + err.Error()
		return r
	}
	q := mustParse(design)
	if isExampleDesign(design) {
		q = url.Values{} // the measurement is the design, not the example's numbers
	}
	for k, vs := range measure.Query(in) {
		if k == "clients" && len(d.d.Input().Tiers) > 0 {
			continue // the tiers' clients stand; the design keeps them
		}
		q[k] = vs
	}
	if q.Get("capacity") == "" {
		// No capacity to fill in: the link is a form that asks for it.
		for _, k := range slices.Sorted(maps.Keys(q)) {
			for _, v := range q[k] {
				r.FillParams = append(r.FillParams, views.FillParam{Name: k, Value: v})
			}
		}
	} else {
		r.FillURL = "/?" + q.Encode()
	}
	r.FillNote = fmt.Sprintf(" with %d clients and p50/p95/p99 of %d/%d/%d requests per minute (peak %g/s), keeping the rest of the design.",
		in.Clients, int64(in.P50), int64(in.P95), int64(in.P99), in.Peak)
	return r
}

// shadowView formats the shadow-mode report.
func shadowView(rep shadow.Report, maxHeld int) *views.ShadowView {
	s := &views.ShadowView{Requests: rep.Requests, Rejected: rep.Rejected, Clients: rep.Clients,
		ClientsRejected: rep.ClientsRejected, Reordered: rep.Reordered, Unspread: rep.Unspread, MaxHeld: maxHeld, Share: "0 %"}
	if rep.Requests > 0 {
		s.Share = strconv.FormatFloat(100*float64(rep.Rejected)/float64(rep.Requests), 'f', 2, 64) + " %"
	}
	for _, l := range rep.Limits {
		s.Limits = append(s.Limits, views.ShadowLimitRow{Field: l.Field, Spec: l.Spec, Checked: l.Checked, Rejected: l.Rejected})
	}
	for _, o := range rep.Top {
		s.Top = append(s.Top, views.OffenderRow{Key: o.Key, Tier: o.Tier, Requests: o.Requests, Rejected: o.Rejected,
			First: o.FirstRejected.UTC().Format("2006-01-02 15:04:05.000")})
	}
	req := make([]int64, len(rep.Series))
	rej := make([]int64, len(rep.Series))
	for i, b := range rep.Series {
		req[i], rej[i] = b.Requests, b.Rejected
	}
	s.Chart = views.ShadowChart(rep.Bin, req, rej, fmt.Sprintf("Requests per %s bin from %s, as logged, and those the design's limits would have rejected.",
		rep.Bin, rep.Start.UTC().Format(time.RFC3339)))
	return s
}
