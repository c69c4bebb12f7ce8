package views

// MeasureView is the "measure first" page: an access log in, per-client
// percentiles and, against the design carried along, the shadow-mode
// report out; and the same measurement as SQL for a warehouse.
type MeasureView struct {
	// Design is the design's query string the page carries (hidden field
	// "design"), so the replay uses its policy and "fill the calculator"
	// keeps it; DesignURL opens it in the designer.
	Design    string
	DesignURL string
	// Example says the design is the example design (the page came
	// without one), which the replay then uses; AskCapacity, that the
	// design has no capacity of the user's, so the form asks for it.
	Example, AskCapacity bool
	Form                 MeasureForm
	// Error is why the log gave no measurement (no parseable line, a bad
	// option, a log too large); shown above the results.
	Error  string
	Result *MeasureResult
	SQL    SQLView
}

// MeasureForm is the upload form: how to read the log. Messages holds a
// message per field name, shown beside it.
type MeasureForm struct {
	Format, Key, Extra                                  string
	TimeField, IPField, MethodField, PathField, Request string
	Comma, Tiers                                        string
	TierField, TierExtra                                string
	// Capacity is the service's capacity (requests/s) for a design
	// without one, carried into "fill the calculator".
	Capacity string
	Messages map[string]string
}

// Formats are the log formats the form offers.
var Formats = []string{"combined", "json", "csv"}

// MeasureResult is one log's measurement, formatted.
type MeasureResult struct {
	Lines, Requests, NoKey int64
	Clients                int
	From, To, Span         string
	Windows                []WindowRow
	// ClientWindows names TopClients' peak columns.
	ClientWindows []string
	TopClients    []ClientRow
	Endpoints     []EndpointRow
	Bad           BadView
	// FillURL opens the designer with the measured percentiles in the
	// design; FillNote says what they are, or why there are none. With no
	// capacity to fill in, FillParams are the design's parameters instead,
	// sent by a form that asks for the capacity.
	FillURL, FillNote string
	FillParams        []FillParam
	Shadow            *ShadowView
}

// FillParam is one parameter of the design "fill the calculator" opens.
type FillParam struct{ Name, Value string }

// WindowRow is one window's percentiles across clients.
type WindowRow struct {
	Window             string
	P50, P95, P99, Max int64
	MaxKey             string
	ServicePeak        int64
	ServicePeakAt      string
	Late               int64
}

// ClientRow is one busy client and its peak per window.
type ClientRow struct {
	Key      string
	Requests int64
	Peaks    []string
}

// EndpointRow is one endpoint pattern's traffic.
type EndpointRow struct {
	Method, Path string
	Requests     int64
	Share        string
}

// BadView is the lines that could not be read.
type BadView struct {
	Count    int64
	Reasons  []ReasonRow
	Examples []ExampleRow
}

// ReasonRow counts bad lines of one reason.
type ReasonRow struct {
	Reason string
	Count  int64
}

// ExampleRow is one bad line.
type ExampleRow struct {
	Line         int64
	Reason, Text string
}

// ShadowView is the shadow-mode report: the log replayed through the
// design's policy.
type ShadowView struct {
	Requests, Rejected       int64
	Share                    string
	Clients, ClientsRejected int
	Reordered                int64
	// Unspread counts requests past MaxHeld in their whole second,
	// replayed at once at its end: the replay is degraded.
	Unspread int64
	MaxHeld  int
	Limits   []ShadowLimitRow
	Top      []OffenderRow
	Chart    Chart
	// Error is why there is no replay (a design with problems).
	Error string
}

// ShadowLimitRow is one limit's part in the rejections.
type ShadowLimitRow struct {
	Field, Spec       string
	Checked, Rejected int64
}

// OffenderRow is one client that would have been rejected.
type OffenderRow struct {
	Key, Tier          string
	Requests, Rejected int64
	First              string
}

// SQLView is the measurement as a warehouse query: the table and columns
// the user named, and the query or what is wrong with them.
type SQLView struct {
	Dialect, Table, Parquet, TimeColumn, KeyColumn string
	Epoch                                          bool
	Text, Error                                    string
}
